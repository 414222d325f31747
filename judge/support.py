"""The support score (groundedness): how well a knowledge text supports a response, in [0, 1].

Pure Python (no Django, no model, nothing downloaded). `support_score(knowledge, response,
history)` is a small fixed logistic model over six lexical features of the response against
the knowledge. Tokens are lower-cased words with light stemming; numbers, number words
("two" = "2"), currency signs and words ("€" = "eur"), "minutes"/"mins", weekday and month
names ("Mondays" = "mon") are normalised first. Function words (articles, prepositions,
auxiliaries: FUNCTION_WORDS) are left out; pronouns and discourse words ("yes", "I", "you")
are deliberately kept, because a response made of them is conversation, not a statement the
knowledge supports.

- `coverage`: share of the response's tokens whose stem occurs in the knowledge; a token found
  only in `history` (the previous turn, which a response may legitimately echo) counts
  HISTORY_WEIGHT (half).
- `novel`: log(1 + tokens absent from the knowledge), the absolute count, so one long invented
  clause weighs more than one stray word. History does not excuse novelty: on the dev data a
  response that repeats the other speaker's words is more often *not* attributable.
- `local`: best share of the tokens covered by one window of LOCAL_WINDOW (2) consecutive
  knowledge sentences or lines; a reply that stitches a fact from one place onto a subject
  from another loses here while `coverage` stays high.
- `bigram`: share of the response's adjacent token pairs that occur adjacently in the
  knowledge (relation and word order, not only vocabulary).
- `question`: share of the response's sentences that ask something (states nothing).
- `personal`: 1 when the response uses a first-person pronoun the knowledge does not use (an
  opinion or experience: "I love that one", "mine is white").

Model: P(ungrounded) = sigmoid(INTERCEPT + sum of COEFFICIENTS[f] * f), support_score =
1 - P(ungrounded). The coefficients come from one L2-regularised logistic regression (lambda 1,
Newton steps) on five human-labelled files of two sources, each file weighted equally, rounded
to 2 decimals: both BEGIN dev files (/work/shared/data, Dziri et al. 2022: "Fully attributable"
= grounded, "Not fully attributable" = ungrounded, "Generic" dropped) and the dev two thirds of
FaithDial's hallucination audit (github McGill-NLP/FaithDial `data-audit/`: gold and model
responses of WoW, CMU-DoG and TopicalChat, one file each; `scripts/faithdial_audit_to_jsonl.py`).
Fitted on BEGIN alone the model scored BEGIN a little higher (WoW 0.967, CMU-DoG 0.977) but
FaithDial-style data, where faithful replies ask back and hedge and hallucinations are personal
disclosures and half-true paraphrases, lower (audit dev 0.882, held-out 0.860): questions no longer count
as evidence of invention, personal voice and novel words still do. Figures, ungrounded =
positive class, score = 1 - support (`manage.py qalab_calibrate` recomputes them on any
labelled JSONL file):

| file | N (ungr.) | baseline | shipped | bal. acc. at 0.3 (P, R) |
|---|---|---|---|---|
| BEGIN WoW dev | 430 (250) | 0.932 | 0.964 | 0.876 (0.98, 0.78) |
| BEGIN CMU-DoG dev | 337 (278) | 0.954 | 0.972 | 0.917 (0.99, 0.87) |
| FaithDial audit, dev | 1,493 (1,108) | 0.877 | 0.901 | 0.805 (0.90, 0.90) |
| FaithDial audit, held-out third (not fitted; errors never read) | 718 (531) | 0.866 | 0.882 | 0.786 (0.89, 0.90) |
| BEGIN TopicalChat dev (not fitted; errors never read) | 381 (307) | 0.910 | 0.916 | 0.867 (0.98, 0.79) |

Only what a response asserts is scored (`asserted`): epistemic hedges and disclaimers that
state nothing about the world ("I'm not sure, but ...", "I don't have personal experiences,
but ...", "Did you know that ...", "As far as I know, ...") are cut from the front of a
sentence, and a question back with at most MAX_QUESTION_NOVEL words the knowledge lacks ("Have
you ever been there?") is left out; a response of nothing else is scored whole. Faithful
dialogue systems hedge and ask back (FaithDial-style data), and those words are not evidence of
invention: on BEGIN WoW grounded responses given such a hedge, disclaimer or question, the share
scored ungrounded fell from 0.68 / 1.00 / 0.82 to 0.03 each, while the same responses with an
invented personal experience or opinion stayed at 1.00.

(AUROC columns; the balanced accuracy, precision and recall are at UNGROUNDED_THRESHOLD.)

The baseline is `baseline_support`: the share of the response's content words (a standard
English stop-word list removed) found in the knowledge.

UNGROUNDED_THRESHOLD = 0.3: a response (or reply sentence) is ungrounded when its support is
below it. Balanced accuracy moves little for thresholds 0.2-0.5 (BEGIN WoW 0.85-0.90, CMU-DoG
0.89-0.93, audit dev 0.82-0.77, falling as the threshold rises); 0.3 is the compromise, on the
side of fewer false alarms on BEGIN (precision 0.98 / 0.99).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

UNGROUNDED_THRESHOLD = 0.3

# Fitted on the BEGIN dev files (see the module docstring); P(ungrounded) = sigmoid(z).
INTERCEPT = 1.00
COEFFICIENTS: dict[str, float] = {
    "coverage": -1.26,
    "novel": 1.29,
    "local": -1.12,
    "bigram": -1.54,
    "question": -0.14,
    "personal": 0.84,
}

# Words too common to count as support or as novelty: articles, prepositions, auxiliaries and
# a few pronouns that every text uses. Personal pronouns (I, my, you) and discourse words stay.
_FUNCTION_TEXT = """a an the of to in on at by for with from as and or but is are was were be
    been being it its this that these those has have had do does did not so than then there
    their they he she his her him which who whom what when where how also one ones"""
FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
_FIRST_PERSON_TEXT = (
    "i me my mine myself i'm i've i'd i'll we us our ours ourselves we're we've we'd we'll"
)
FIRST_PERSON = frozenset(_FIRST_PERSON_TEXT.split())
HISTORY_WEIGHT = 0.5
LOCAL_WINDOW = 2

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_ZERO_CENTS = re.compile(r"(?<=\d)[.,]00\b")
_CLOCK_12H = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\b\.?")
_SYMBOLS = {"€": " eur ", "$": " usd ", "£": " gbp ", "%": " percent ", "&": " and "}
# "one" is left out on purpose: it is mostly a pronoun ("one for the impression").
_NUMBER_TEXT = (
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_CALENDAR_TEXT = (
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "june july august september october november december"
)
_NORMAL: dict[str, str] = {
    **{w: str(i) for i, w in enumerate(_NUMBER_TEXT.split())},
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "hundred": "100",
    "thousand": "1000",
    "first": "1st",
    "second": "2nd",
    "third": "3rd",
    "euro": "eur",
    "euros": "eur",
    "dollar": "usd",
    "dollars": "usd",
    "pounds": "gbp",
    "minutes": "min",
    "minute": "min",
    "mins": "min",
    "hours": "hour",
    "hrs": "hour",
    "hr": "hour",
    **{day: day[:3] for day in _CALENDAR_TEXT.split()},
    **{f"{day}days": day[:3] for day in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")},
    "tues": "tue",
    "thur": "thu",
    "thurs": "thu",
    "sept": "sep",
}
_SUFFIXES = (
    "ational",
    "ization",
    "fulness",
    "ousness",
    "iveness",
    "ations",
    "ation",
    "ements",
    "ement",
    "ments",
    "ment",
    "ness",
    "ingly",
    "edly",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "est",
    "ly",
    "ed",
    "es",
    "s",
)


def _clock_24h(match: re.Match[str]) -> str:
    hour, minutes, half = int(match.group(1)), match.group(2) or "00", match.group(3)
    if hour > 12:
        return match.group(0)
    hour = hour % 12 + (12 if half == "p" else 0)
    return f"{hour}:{minutes}"


def clock_24h(text: str) -> str:
    """12-hour clock times in 24-hour form: "6pm" -> "18:00", "9.30 am" -> "9:30"."""
    return _CLOCK_12H.sub(_clock_24h, text)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens with numbers, currencies, 12-hour clock times, days and months
    normalised."""
    text = text.casefold().replace("’", "'")
    for symbol, word in _SYMBOLS.items():
        text = text.replace(symbol, word)
    text = _ZERO_CENTS.sub("", clock_24h(text))
    return [
        str(int(w)) if w.isdigit() and len(w) < 10 else _NORMAL.get(w, w)
        for w in _TOKEN.findall(text)
    ]


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper: "prices"/"priced" -> "pric", "cleaning" -> "clean"."""
    if word[:1].isdigit():
        return word
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def sentences(text: str) -> list[str]:
    """Sentences and lines of `text`, stripped, non-empty."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


@dataclass(frozen=True)
class Features:
    """The model's inputs for one response (see the module docstring)."""

    coverage: float
    novel: float
    local: float
    bigram: float
    question: float
    personal: float

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in COEFFICIENTS}


class Knowledge:
    """A knowledge text prepared once for scoring many responses against it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = frozenset(tokens(text))
        sequence = [stem(w) for w in tokens(text)]
        self.stems = frozenset(sequence)
        self.bigrams = frozenset(pairwise(sequence))
        units = [frozenset(stem(w) for w in tokens(s)) for s in sentences(text)]
        width = min(LOCAL_WINDOW, len(units)) or 1
        self.windows = [
            frozenset().union(*units[i : i + width]) for i in range(max(1, len(units) - width + 1))
        ]


# Openings that assert nothing about the world: hedges, disclaimers, "did you know".
_HEDGE = re.compile(
    r"^(?:(?:well|so|oh|hmm|yes|yeah|no|sure|honestly|actually)[,!]?\s+)*"
    r"(?:i'?m not (?:sure|certain)(?: about [^,]+)?|i don'?t (?:really )?know"
    r"(?: (?:much|a lot|too much))?(?: about [^,]+)?|i'?m not (?:familiar|an expert)"
    r"(?: with [^,]+)?|i don'?t have (?:any )?(?:personal )?(?:experiences?|opinions?|feelings)"
    r"(?: with [^,]+)?|as (?:an ai|a bot|a chatbot)[^,]*|as far as i know|from what i "
    r"(?:know|read|understand|have read)|did you know(?: that)?|i (?:have )?(?:heard|read)"
    r"(?: that)?)\s*[,:]?\s*(?:but\s+|though\s+|however,?\s+)?",
    re.IGNORECASE,
)
MAX_QUESTION_NOVEL = 3


def asserted(response: str, knowledge: Knowledge) -> str:
    """`response` without what asserts nothing: a hedge or disclaimer opening a sentence, and
    questions back with at most MAX_QUESTION_NOVEL words the knowledge lacks; the whole
    response when nothing else is left."""
    kept: list[str] = []
    for part in sentences(response):
        claim = _HEDGE.sub("", part).strip()
        if not claim:
            continue
        if claim != part.strip():
            claim = claim.rstrip("?")  # "Did you know that X?" asserts X
        elif claim.endswith("?"):
            novel = [
                w
                for w in tokens(claim)
                if w not in FUNCTION_WORDS
                and w not in FIRST_PERSON
                and stem(w) not in knowledge.stems
            ]
            if len(novel) <= MAX_QUESTION_NOVEL:
                continue
        kept.append(claim)
    return " ".join(kept) if kept else response


def features(
    knowledge: str | Knowledge,
    response: str,
    history: str = "",
    *,
    ignore: Iterable[str] = (),
) -> Features:
    """The six features of `response` against `knowledge` (history echoes count half; words
    of `ignore` are dropped from the response first)."""
    know = knowledge if isinstance(knowledge, Knowledge) else Knowledge(knowledge)
    response = asserted(response, know)
    ignored = frozenset(stem(w) for text in ignore for w in tokens(text))
    sequence = [w for w in tokens(response) if stem(w) not in ignored]
    raw = [w for w in sequence if w not in FUNCTION_WORDS]
    history_stems = frozenset(stem(w) for w in tokens(history))
    stems = [stem(w) for w in raw]
    support = sum(
        1.0 if s in know.stems else HISTORY_WEIGHT if s in history_stems else 0.0 for s in stems
    )
    unsupported = sum(s not in know.stems for s in stems)
    if stems:
        coverage = support / len(stems)
        local = max(sum(s in window for s in stems) for window in know.windows) / len(stems)
    else:
        coverage = local = 1.0
    pairs = [(stem(a), stem(b)) for a, b in pairwise(sequence)]
    bigram = sum(p in know.bigrams for p in pairs) / len(pairs) if pairs else coverage
    parts = sentences(response)
    question = sum("?" in p for p in parts) / len(parts) if parts else 0.0
    personal = any(w in FIRST_PERSON and w not in know.raw for w in raw)
    return Features(
        coverage=coverage,
        novel=math.log1p(unsupported),
        local=local,
        bigram=bigram,
        question=question,
        personal=float(personal),
    )


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def score_features(values: Features) -> float:
    """Support in [0, 1] from the features: 1 - P(ungrounded) of the fixed logistic model."""
    z = INTERCEPT + sum(COEFFICIENTS[k] * v for k, v in values.as_dict().items())
    return 1.0 - _sigmoid(z)


def support_score(
    knowledge: str | Knowledge,
    response: str,
    history: str = "",
    *,
    ignore: Iterable[str] = (),
) -> float:
    """How well `knowledge` supports `response`, in [0, 1] (higher = better supported).

    `history` is text the response may legitimately echo (the previous turn); `ignore` lists
    words that are never evidence either way (an assistant's own voice: "we", "our", "you")."""
    return score_features(features(knowledge, response, history, ignore=ignore))


def sentence_scores(
    knowledge: str | Knowledge,
    response: str,
    history: str = "",
    *,
    ignore: Iterable[str] = (),
) -> list[tuple[str, float]]:
    """(sentence, support_score) for every sentence of `response`, in order."""
    know = knowledge if isinstance(knowledge, Knowledge) else Knowledge(knowledge)
    return [(s, support_score(know, s, history, ignore=ignore)) for s in sentences(response)]


# --------------------------------------------------------------------------- baseline

_BASELINE_STOP_TEXT = """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves"""
BASELINE_STOPWORDS = frozenset(_BASELINE_STOP_TEXT.split())


def baseline_support(knowledge: str, response: str) -> float:
    """The trivial baseline: share of the response's content words found in the knowledge."""
    known = set(_TOKEN.findall(knowledge.casefold()))
    content = [w for w in _TOKEN.findall(response.casefold()) if w not in BASELINE_STOPWORDS]
    if not content:
        return 1.0
    return sum(w in known for w in content) / len(content)
