"""The words dialogue acts are compared by: function words, light stems, content and topic
words, kindred words a customer and a bot use for one thing, and typing slips."""

from __future__ import annotations

import re

from judge.text import words

# Function words and chat filler: never the topic of a question.
STOP = frozenset(
    words(
        "a an the and or but if so to of in on at for from by with about as into than then there "
        "here this that these those it its it's is are was were be been being am do does did done "
        "have has had having can could would should will shall may might must i i'm i'd i've me my "
        "mine we we're our ours us you you're your yours u ur he she they them their what which "
        "who whom whose when where why how whether not no yes yeah yep ok okay oh hi hello hey "
        "thanks thank please pls just also too very really some any all more most much many lot "
        "lots get got go going want wanna need like would'd know tell let say said one ones "
        "thing things something anything bit kind sort well still again now soon today maybe "
        "actually quick question hmm um uh sure great good fine cool alright right her him his "
        "hers she he its they'll we'll you'll i'll it'll she'll he'll up down out off over else "
        "anyone someone everyone everything"
    )
)


_STEM_CHARS = 6


_SIBILANT_ES = re.compile(r"(?:[sxz]|ch|sh)es$")


def stem(word: str) -> str:
    """A light stem cut to six letters, so 'prices' meets 'price', 'booking' meets 'book' and
    'cancellation' meets 'cancelled'."""
    for suffix in ("ings", "ing", "ies", "es", "s", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            if suffix == "es" and not _SIBILANT_ES.search(word):
                suffix = "s"  # "bikes" is "bike" + s, "boxes" and "watches" take "es"
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:_STEM_CHARS]


# Words any customer-service question may carry: they say nothing about its topic.
GENERIC = frozenset(
    stem(w)
    for w in words(
        "book booking appointment before after first policy policies service services info "
        "information question questions help ask asking wonder wondering possible available "
        "option options happen happens mean means way place day time"
    )
)


_COMPOUND = re.compile(r"\b([a-z]+)-([a-z]+)\b")
# Words a customer and a bot use for one thing: "am I too old?" / "age 8+".
_KINDRED = tuple(
    frozenset(stem(w) for w in words(group))
    for group in (
        "old young age aged",
        "kid kids child children childrens daughter daughters son sons baby toddler teen "
        "teenager junior juniors",
        "cost costs price prices fee fees charge",
        "bag bags backpack luggage suitcase rucksack",
        "car cars vehicle vehicles",
        "call calls ring phone telephone reach",
        "pet pets dog dogs cat cats",
        "deliver delivery collection collect pickup",
        "house home homes flat apartment",
        "dress wear clothes clothing attire shirt shirts shorts trousers jeans denim shoes",
    )
)


def kindred(found: frozenset[str]) -> frozenset[str]:
    """`found` with the kindred words of each of its words."""
    extra = {w for group in _KINDRED if found & group for w in group}
    return found | extra


def content_words(text: str) -> frozenset[str]:
    """Stemmed content words of `text` (no function words, no bare numbers); a hyphenated
    compound also counts joined ("E-bike" meets "ebike")."""
    found = {stem(w) for w in words(text) if w not in STOP and not w.isdigit()}
    found |= {stem(a + b) for a, b in _COMPOUND.findall(text.casefold())}
    return frozenset(found)


def topic_words(text: str) -> frozenset[str]:
    """What a question is about: its content words less the ones every question carries (all
    of them when nothing else is left)."""
    found = content_words(text)
    return (found - GENERIC) or found


def meet(topic: frozenset[str], other: frozenset[str]) -> set[str]:
    """The words of `topic` that `other` has, a word inside another counting ("fuel" is in
    "refuel", "tyre" in "tyres", "shar" (sharing) in "share"), and a typo of five letters or
    more too ("tutuor" meets "tutor", "recieve" "receive")."""
    return {
        t
        for t in topic
        if any(
            t == w or (len(t) >= 4 and t in w) or (len(w) >= 4 and t.startswith(w)) or typo_of(t, w)
            for w in other
        )
    }


_TYPO_LENGTH = 5


def typo_of(a: str, b: str) -> bool:
    """`a` and `b` (five letters or more) differ by one letter left out or added, or two
    neighbouring letters swapped: the slips of typing, not another word ("prize" is no typo of
    "price")."""
    if min(len(a), len(b)) < _TYPO_LENGTH or a == b:
        return False
    if len(a) == len(b) == _STEM_CHARS:
        # Stems are cut to six letters, so a letter left out shows as a shift: "sesion" and
        # "sessio" (session).
        cut = len(a) - 1
        if any(a[:i] + a[i + 1 :] == b[:cut] or b[:i] + b[i + 1 :] == a[:cut] for i in range(cut)):
            return True
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and (a[diff[1]] == b[diff[0]])
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(long_) - len(short) != 1:
        return False
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]
