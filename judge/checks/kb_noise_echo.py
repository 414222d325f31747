"""Check: a reply repeats the KB's noise to the customer (a misspelling, markup debris).

Two sources of truth, in order:

1. Planted noise. A generated fixture records what the generator planted (`Fixture.noise`):
   a reply containing a planted misspelling (whole word, any case) echoes it, unless the customer
   typed that word too or it is also a correct word of the conversation's ground truth (the
   clean form of another planted typo, a word of the manifest).
2. Inferred noise, for a fixture without a record (a KB judged from a file, an older run):
   a reply word that occurs in the KB but is not a real word - one edit (insert, delete,
   substitute, transpose) from a common English word (`COMMON_WORDS`), a manifest word or a
   clearly more frequent word of the KB, reply and customer text - is a misspelling. Names
   (capitalised inside a KB sentence), all-caps codes, words with the edit on the first or last
   letter (plurals, -ed/-er), and British/American variants are never typos.

Markup debris is read from the KB itself in both cases: an HTML entity or tag, an unbalanced
`**`, a table rule or a row of table cells run into a sentence, a `#` heading or a bullet in the
middle of a line - in a reply, and spelled the same way (next to the same word) in the KB.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from generator.dates import MONTH_NAMES, WEEKDAY_NAMES
from generator.schemas import Manifest
from judge.checks.base import Check
from judge.lexicon import EVERYDAY, clips, frequency
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig

PLANTED_CONFIDENCE = 0.9
MARKUP_CONFIDENCE = 0.8
INFERRED_TYPO_CONFIDENCE = 0.7
# A word only a few times in the KB, next to one at least this many times more frequent.
_MAX_TYPO_COUNT = 2
_MIN_FREQUENT = 3
_FREQUENCY_RATIO = 3
_MIN_TYPO_LENGTH = 4
_LONG_WORD = 8
_MAX_CODE_LENGTH = 5
_MAX_QUOTES = 6

# Everyday English words, for two jobs: a word listed here is never a typo, and a KB word one
# edit away from one that is not itself listed is one. Generic on purpose (no domain terms; the
# KB's own frequent words and the manifest cover those), and it includes both sides of the
# usual confusable pairs (lest/least, dairy/diary, quite/quiet ...).
_COMMON_TEXT = """
    a able about above accept access accident account across act action active activity actual
    actually add added address adult advance advice advise affect afford after afternoon again
    against age agency agent ago agree agreed ahead aid aim air all allow allowed almost alone
    along already also alter alternative although always am among amount an and angel angle
    animal another answer answered any anyone anything anyway anywhere apart apply appointment
    appointments approach area areas arm around arrange arrive arrival art article as ask asked
    asking assist at attend attention available avoid away baby back bad bag balance bank bar
    base based basic basis be bear became because become bed been before began begin behind
    being believe below best better between big bill birth bit black blood blue board body book
    booked booking bookings both bottom box break breakfast bridge bridal bridle brief bring
    broad broken brother brought brown build building built burn business busy but buy by call
    called calling calls came can cancel cancelled canceled card care careful carry case cash
    casual causal cause cell centre center certain chain chair chance change changed changes
    charge charged charges chat cheap check checked checks cheek child children choice choose
    chosen church city claim class clean cleaned cleaner clear clearly client clients clinic
    close closed closer closes closing clothes coat code cold collect collected college colour
    color come comes coming comfort comment common company complete completed concern condition
    confirm confirmed consider contact contain content continue control cook cool copy corner
    correct cost costs could council count country couple course court cover covered covers
    create credit cross current custom customer customers cut daily dairy damage dark data date
    dates daughter day days dead deal dear death decide decision deep deliver delivery department
    deposit depth desert dessert design detail details develop diary did die diet differ
    difference different difficult dinner direct direction directly discount distance do doctor
    does dog doing done door double down draw dress drink drive driver drop dry due during each
    ear early earn east easy eat edge effect effort either else email emergency employee end
    energy enjoy enough enquiry ensure enter entire entry equal error especially even evening
    event ever every everyone everything exact exactly exam example except excess exchange
    expect expected expense experience explain extra eye face fact factor fail fair fall family
    far farm fast father fault fear fee fees feel feet felt few field fill filled final finally
    find fine finger finish fire firm first fit five fix fixed flat floor fly follow following
    food foot for force form former forward found four free fresh friday friend from front full
    fully fund further future gain game garden gas gave general get gets getting girl give given
    gives giving glad glass go goes going gone good got great green ground group grow guard
    guest guide had hair half hall hand handle happen happy hard has have having he head health
    hear heard heart heat held help here high him his hold holiday home hope hospital hot hotel
    hour hours house how however human hundred idea if ill important in include included
    includes including increase indeed inform information inside instead insurance interest
    into involve is issue it item items its itself job join journey just keep kept key kind kit
    knew know known label lady land large last late later latter law lay lead learn least leave
    left leg legal lend length less lest let letter level licence license lie life light like
    likely limit line link list listed little live local lock long look loose lose loss lost lot
    love low lunch made mail main major make makes making man manage manager many mark market
    matter may maybe me meal mean meet member message met method middle might mile mind minute
    minutes miss missed model moment monday money month months more morning most mother move
    much must my name near nearest nearly need needed needs never new news next nice night no
    none noon normal north not note notice now number numbers of off offer offered offers office
    often oil ok old on once one online only open opened opening opens or order other others our
    out outside over own page paid pain pair paper parent parents park part party pass passed
    past pay payment people per perhaps period person phone pick picture piece place plan plans
    play please plus point police policy poor popular position possible post pound power
    practice practise prefer preferred prepare present press pretty price prices print private
    probably problem process product program programme promise proper provide public pull
    purpose put quarter question questions quick quickly quiet quite quote quoted rain range rate
    rather reach read ready real really reason receipt receive received recent record red reduce
    refund regular remain remember remind remove rent repair repeat reply report request
    requested require required rest result return right ring rise road room round rule run safe
    safety said sale same saturday save saw say says school sea seat second section see seem
    seen sell send sent service services set seven several shall share she shop short should
    show side sign simple since single sister sit site six size skin sleep slow small so some
    someone something sometimes son soon sorry sort sound south space speak special spend spent
    spoke sport sports spring staff stage stand standard start started state stay step still
    stock stop store story street strong student study such suit summer sun sunday supply
    support sure surface system table take taken takes taking talk team tell ten term terms test
    than thank thanks that the their them then there these they thing things think third this
    those though three through thursday time times title to today together told tomorrow too
    took top total touch toward town track trade trail train travel treat trial trip true try
    tuesday turn two type under understand unit until up upon us use used useful user usual
    usually value various very visit visits wait waiting walk wall want wanted warm was wash
    watch water way we wear wednesday week weekend weeks well went were west what when where
    whether which while white who whole why wide wife will win window winter wish with within
    without woman wonder word words work worked working world worry would write written wrong
    year years yes yet you young your yours
    subject reception treatment optional session minimum maximum weekday weekdays holidays
    schedule invoice voucher membership register registration cancellation availability
    location parking entrance accessible wheelchair patient patients owner collection repairs
    warranty guarantee estimate estimated additional excluding approximately roughly typically
    january february march april june july august september october november december
    united untied sacred scared silver sliver salt marital martial
    doesn isn wasn aren weren hasn haven hadn didn couldn wouldn shouldn won don can
"""
COMMON_WORDS = frozenset(_COMMON_TEXT.split())

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_WORD = re.compile(r"[A-Za-z]+")
_EMAIL_OR_URL = re.compile(r"\S+@\S+|\bhttps?://\S+|\bwww\.\S+|\b[\w-]+\.(?:com|ie|org|net|eu)\b")
# A capital right after one of these (or at a line start) may be a sentence start, not a name.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n#|•*>\-(\"]\s*)$")

# (pattern, label): debris that is noise wherever it appears, if the KB has it too.
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{2,5}|#[xX][0-9A-Fa-f]{2,4});")
_TAG = re.compile(
    r"</?(?:br|p|div|span|b|i|u|em|strong|li|ul|ol|table|tr|td|th|tbody|thead|h[1-6]|hr|font"
    r"|sup|sub|small|center|blockquote|pre|code)\b[^<>]{0,120}?/?>",
    re.IGNORECASE,
)
_TABLE_RULE = re.compile(r"\|?(?:\s*:?-{3,}:?\s*\|)+(?:\s*:?-{3,}:?)?\|?|\|\s*:?-{3,}:?")
_EMPHASIS = re.compile(r"\*\*|__")
_BOLD = re.compile(r"\*\*[^*\n]{1,80}\*\*")  # a bold span
# A '#' heading or a bullet after other text on the same line ("says: ## Booking ...").
_STRAY_HEADING = re.compile(r"(?<=\S)[ \t]+(#{1,6})[ \t]+(?=[A-Za-z])")
_STRAY_BULLET = re.compile(r"(?<=\S)[ \t]+([•▪◦](?=[ \t]*[A-Za-z])|\*(?=[ \t]+[A-Za-z]))")
_CELL = re.compile(r"[ \t]+\|[ \t]+")


@dataclass(frozen=True)
class Span:
    """One noisy span of a reply: [start, end) and what it is."""

    start: int
    end: int
    text: str
    kind: str  # "typo" or a markup label
    clean: str  # the intended word for a typo; "" for markup
    confidence: float
    planted: bool


def _strip_addresses(text: str) -> str:
    """`text` with emails and URLs blanked (same length, so offsets still hold)."""
    return _EMAIL_OR_URL.sub(lambda m: " " * len(m.group(0)), text)


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(_strip_addresses(text))]


def _edits(word: str) -> Iterator[tuple[str, int, str]]:
    """(variant, position, operation) for every variant one edit from `word`."""
    for i in range(len(word)):
        yield word[:i] + word[i + 1 :], i, "delete"
    for i in range(len(word) - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2 :], i, "transpose"
    for i in range(len(word)):
        for c in _LETTERS:
            if c != word[i]:
                yield word[:i] + c + word[i + 1 :], i, "substitute"
    for i in range(len(word) + 1):
        for c in _LETTERS:
            yield word[:i] + c + word[i:], i, "insert"


_SAME_SOUND = ({"s", "z"}, {"c", "s"}, {"c", "k"}, {"y", "i"})


# travelling/traveling, cancelled, fulfill, skillful, installment: a doubled l before a suffix
# (or at the end) may be spelled single; "usualy" is no spelling of "usually".
_DOUBLED_L = re.compile(r"(?<!l)ll(?:ing|ed|er|ment|ful|ation|$)")


def _spelling_variant(word: str, other: str, position: int, operation: str) -> bool:
    """True when `word` and `other` (one edit apart) are two accepted spellings or forms:
    colour/color, centre/center, organise/organize, licence/license, tyre/tire,
    cancelled/canceled, fulfil/fulfill, ageing/aging, anaesthetic/anesthetic; or differ in the first or
    last letter only (plurals, -ed/-er, a different word altogether)."""
    if position == 0:
        return True
    last = max(len(word), len(other)) - 1
    if operation in ("delete", "insert") and position >= last:
        return True
    if operation == "substitute" and position == last:
        return True
    if operation == "transpose":
        # centre/center; prioritise is no slip of priorities.
        return position + 1 >= last and {word[-2:], other[-2:]} in ({"re", "er"}, {"se", "es"})
    longer = word if len(word) > len(other) else other
    if operation in ("delete", "insert"):
        extra = longer[position]
        before = longer[position - 1]
        after = longer[position + 1] if position + 1 < len(longer) else ""
        return (
            (extra == "u" and before == "o" and after == "r")
            or (extra == "l" and _DOUBLED_L.search(longer) is not None)
            or (extra in "ao" and after == "e")
            or (extra == "e" and after in "imy")
            or (extra == "i" and after == "u")
        )
    return {word[position], other[position]} in _SAME_SOUND


# Doubled letters English hardly uses: "reqquest", "emaiil" are typos, "dinner" is not.
_RARE_DOUBLES = frozenset("ahijkquvwxy")


def _bigrams(word: str) -> set[str]:
    padded = f"^{word}$"
    return {padded[i : i + 2] for i in range(len(padded) - 1)}


_VOWELS = frozenset("aeiouy")


def _typo_signature(word: str, position: int, operation: str) -> bool:
    """The edit is one real words rarely differ by: two inner letters swapped ("Colletc"), a
    letter tripled ("adddress"), a rare letter doubled ("reqquest"), or a consonant doubled
    next to another consonant ("aftter", "collecct"; but "address", "apply": before l or r)."""
    if operation == "transpose":
        return True
    if operation != "delete":
        return False
    letter = word[position]
    if word[position - 1] == letter:
        first = position - 1
    elif position + 1 < len(word) and word[position + 1] == letter:
        first = position
    else:
        return False
    if word[first : first + 3] == letter * 3 or letter in _RARE_DOUBLES:
        return True
    if letter in _VOWELS:
        return False
    before = word[first - 1] if first > 0 else "a"
    after = word[first + 2] if first + 2 < len(word) else "a"
    return before not in _VOWELS or (
        after not in _VOWELS and after not in "lr" and letter not in "ls"
    )


@dataclass(frozen=True)
class _Lexicon:
    """What the case says about words: how often each occurs (in the KB; in all the case's
    text), which are names, which are ground truth, and the letter pairs real words use."""

    kb: Counter[str]
    counts: Counter[str]
    names: frozenset[str]
    truth: frozenset[str]

    @classmethod
    def build(cls, kb_text: str, other_text: str, truth: frozenset[str]) -> _Lexicon:
        kb = Counter(_words(kb_text))
        counts = kb + Counter(_words(other_text))
        return cls(kb, counts, frozenset(_name_like(kb_text)), truth)

    @cached_property
    def pairs(self) -> frozenset[str]:
        """Letter pairs (with ^ and $ for the edges) of the words known to be spelt right."""
        known = COMMON_WORDS | self.truth | {w for w, n in self.counts.items() if n >= 3}
        return frozenset(pair for word in known for pair in _bigrams(word))

    def _likelier(self, other: str, word: str, odd: set[str]) -> bool:
        """`other` is the spelling and `word` the slip, going by how often the KB, then the whole
        case, writes each; on a tie, when only `word` has a letter pair no known word has."""
        for counts in (self.kb, self.counts):
            if counts[other] != counts[word]:
                return counts[other] > counts[word]
        return bool(odd - _bigrams(other)) and not (_bigrams(other) - self.pairs)

    def correction(self, word: str) -> str | None:
        """The real word `word` misspells, or None when it is (or may be) a word itself."""
        if (
            len(word) < _MIN_TYPO_LENGTH
            or word in COMMON_WORDS
            or word in self.truth
            or self.kb[word] == 0
            or self.kb[word] > _MAX_TYPO_COUNT
            or frequency(word)
        ):
            return None
        if word in self.names:
            # A capitalised word is a name, unless it misspells a day or month ("Satruday").
            fix = _everyday_fix(word)
            return fix if fix in _CAPITALISED else None
        odd = _bigrams(word) - self.pairs
        best: tuple[int, str] | None = None
        for other, position, operation in _edits(word):
            if len(other) < _MIN_TYPO_LENGTH or _spelling_variant(word, other, position, operation):
                continue
            known = other in COMMON_WORDS or other in self.truth
            if other in self.names or not (known or self.counts[other]):
                continue
            if _typo_signature(word, position, operation):
                # A swap or a tripled letter rarely makes a real word: the right spelling
                # written more often than the typo (or as often, when only the typo has a
                # letter pair no known word has) is enough.
                if not (known or self._likelier(other, word, odd)):
                    continue
            elif len(word) >= _LONG_WORD and operation == "insert":
                # A long word missing a letter of a known word ("apointments", "Vaccinaton")
                # is rarely a word itself: short ones are (list/lit, scale/sale).
                pass
            elif not odd - _bigrams(other):
                # Any other edit (a letter dropped, added or changed) turns real words into
                # real words too (list/lift, sale/scale): it counts only when it makes a letter
                # pair no known word has ("poliy") ...
                continue
            elif other not in self.truth and self.counts[other] < max(
                _MIN_FREQUENT, _FREQUENCY_RATIO * self.kb[word]
            ):
                # ... and the right spelling is a ground-truth word or a clearly more frequent
                # word of the case (a common word alone is not enough: tyre/type, lyre/lure).
                continue
            rank = self.counts[other] + (1000 if known else 0)
            if best is None or rank > best[0]:
                best = (rank, other)
        return best[1] if best else _everyday_fix(word)


# Weekday and month names (not "May", also an everyday word).
_CAPITALISED = frozenset(n.casefold() for n in (*WEEKDAY_NAMES, *MONTH_NAMES)) - {"may"}
# What scanning does to letters: "rn" read for "m" ("4-6prn"), "cl" for "d", "vv" for "w".
_OCR_CONFUSIONS = (("rn", "m"), ("m", "rn"), ("cl", "d"), ("vv", "w"))


def _ocr_variants(word: str) -> Iterator[str]:
    for seen, meant in _OCR_CONFUSIONS:
        at = word.find(seen)
        while at >= 0:
            yield word[:at] + meant + word[at + len(seen) :]
            at = word.find(seen, at + 1)


def _everyday_fix(word: str) -> str | None:
    """The everyday English word (by the word list) that `word`, itself not a word, misspells
    by one edit or one scanning confusion; None when there is none or `word` is short."""
    if len(word) <= _MIN_TYPO_LENGTH or frequency(word) or clips(word):
        return None
    candidates = [
        other
        for other, position, operation in _edits(word)
        if not _spelling_variant(word, other, position, operation)
    ]
    counted = [(frequency(o), o) for o in (*candidates, *_ocr_variants(word))]
    best = max((c for c in counted if c[0] >= EVERYDAY), key=lambda c: c[0], default=None)
    return best[1] if best else None


def _name_like(text: str) -> set[str]:
    """Casefolded words `text` writes with a capital inside a sentence (or mixed case: iPhone)."""
    names: set[str] = set()
    lower: set[str] = set()
    clean = _strip_addresses(text)
    for match in _WORD.finditer(clean):
        word = match.group(0)
        folded = word.casefold()
        if word.islower():
            lower.add(folded)
        elif word.isupper():
            continue
        elif not word[1:].islower() or not _SENTENCE_START.search(clean[: match.start()][-8:]):
            names.add(folded)
    return names - lower


def _manifest_words(manifest: Manifest) -> frozenset[str]:
    texts = [manifest.org_name, *(s.name for s in manifest.services)]
    texts += [f.label for f in manifest.intake_fields] + [p.text for p in manifest.policies]
    texts += [h.days for h in manifest.hours] + [c.value for c in manifest.contacts]
    # The org's skill texts, where the manifest carries them (written by the org, not noised).
    texts += [str(getattr(i, "text", "")) for i in getattr(manifest, "instructions", [])]
    return frozenset(w for text in texts for w in _words(text))


def _word_spans(text: str) -> Iterator[re.Match[str]]:
    return _WORD.finditer(_strip_addresses(text))


def _kb_has(kb: str, token: str, reply: str, start: int, end: int) -> bool:
    """The KB writes `token` (any case) next to the word the reply writes next to it."""
    before = re.search(r"([A-Za-z]+)[^A-Za-z\n]*$", reply[:start])
    after = re.match(r"[^A-Za-z\n]*([A-Za-z]+)", reply[end:])
    escaped = re.escape(token)
    patterns = []
    if before:
        patterns.append(rf"\b{re.escape(before.group(1))}[^A-Za-z\n]{{0,8}}{escaped}")
    if after:
        patterns.append(rf"{escaped}[^A-Za-z\n]{{0,8}}{re.escape(after.group(1))}\b")
    return any(re.search(p, kb, re.IGNORECASE) for p in patterns)


def markup_spans(reply: str, kb: str) -> list[tuple[int, int, str, str]]:
    """(start, end, debris token, label) for markup debris in `reply` that the KB spells too."""
    found: list[tuple[int, int, str, str]] = []
    kb_folded = kb.casefold()
    for match in _ENTITY.finditer(reply):
        if match.group(0).casefold() in kb_folded:
            found.append((match.start(), match.end(), match.group(0), "an HTML entity"))
    kb_tags = {m.group(0).strip("</>").split()[0].casefold() for m in _TAG.finditer(kb)}
    for match in _TAG.finditer(reply):
        if match.group(0).strip("</>").split()[0].casefold() in kb_tags:
            found.append((match.start(), match.end(), match.group(0), "an HTML tag"))
    if _TABLE_RULE.search(kb):
        for match in _TABLE_RULE.finditer(reply):
            text = match.group(0).strip()
            start = match.start() + match.group(0).index(text)
            line_start = reply.rfind("\n", 0, start) + 1
            line_end = reply.find("\n", start)
            line = reply[line_start : len(reply) if line_end < 0 else line_end]
            above = reply[: max(line_start - 1, 0)].rsplit("\n", 1)[-1] if line_start else ""
            # A rule on its own line under a header row is a table the reply lays out itself.
            if line.strip() == text and above.strip().startswith("|"):
                continue
            if "|" in text:
                found.append((start, start + len(text), text, "a table rule"))
    emphasis = list(_EMPHASIS.finditer(reply))
    # "Here is what our information says: **Trial lesson (30 min):** £15": a KB heading label
    # pasted into a sentence by a bot that writes no markdown of its own (every bold span of the
    # reply is the KB's, character for character). A bold label opening a line is formatting.
    bold = list(_BOLD.finditer(reply))
    if bold and all(b.group(0) in kb for b in bold):
        for b in bold:
            line_start = reply.rfind("\n", 0, b.start()) + 1
            if reply[line_start : b.start()].strip() and b.group(0).rstrip("*").endswith(":"):
                found.append((b.start(), b.start() + 2, "**", "a KB heading pasted into a line"))
    for line_match in re.finditer(r"[^\n]+", reply):
        marks = [m for m in emphasis if line_match.start() <= m.start() < line_match.end()]
        if len(marks) % 2:  # unbalanced: one of them is debris
            for mark in marks:
                if _kb_has(kb, mark.group(0), reply, mark.start(), mark.end()):
                    found.append((mark.start(), mark.end(), mark.group(0), "stray emphasis markup"))
                    break
    for pattern, label in ((_STRAY_HEADING, "a heading mark"), (_STRAY_BULLET, "a bullet")):
        for match in pattern.finditer(reply):
            token = match.group(1)
            if _kb_has(kb, token, reply, match.start(1), match.end(1)):
                found.append((match.start(1), match.end(1), token, f"{label} inside a line"))
    for line_match in re.finditer(r"[^\n]+", reply):
        line = line_match.group(0)
        cells = list(_CELL.finditer(line))
        ruled = any(
            label == "a table rule" and line_match.start() <= start < line_match.end()
            for start, _, _, label in found
        )
        if len(cells) >= 2 and not line.lstrip().startswith("|") and not ruled:
            cell = cells[0]
            bar = line_match.start() + cell.start() + cell.group(0).index("|")
            if _kb_has(kb, "|", reply, bar, bar + 1):
                found.append((bar, bar + 1, "|", "table cells run into a sentence"))
    return found


# A token of letters and digits: "vehic1e", "tw0", "£6O", "l4", "6prn".
_MIXED = re.compile(r"(?<![\w@.])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{2,}(?![\w@])")
_READ_AS_LETTER = str.maketrans("01", "ol")
_READ_AS_DIGIT = str.maketrans("Ol", "01")


def _misread(token: str) -> str | None:
    """What a scanned token should have said, when a scanner evidently misread it: single
    digits among letters ("vehic1e" -> vehicle, "tw0" -> two), a letter O or l among digits
    ("6O" -> 60, "l4" -> 14), "prn"/"arn" after a time ("6prn" -> 6pm)."""
    digits = re.findall(r"\d+", token)
    letters = re.sub(r"\d", "", token)
    if all(len(d) == 1 and d in "01" for d in digits) and len(letters) >= 2:
        word = token.translate(_READ_AS_LETTER)
        if word.isalpha() and frequency(word) >= EVERYDAY:
            return word
    if re.fullmatch(r"\d+O\d*|l\d+", token):
        return token.translate(_READ_AS_DIGIT)
    m = re.fullmatch(r"(\d{1,2})(prn|arn)", token, re.IGNORECASE)
    if m:
        return m.group(1) + m.group(2)[0] + "m"
    return None


def ocr_spans(reply: str, kb: str) -> list[tuple[int, int, str, str]]:
    """(start, end, token, what it should say) for scanning garble the reply copies from the KB."""
    kb_tokens = {m.group(0) for m in _MIXED.finditer(kb)}
    found = []
    for m in _MIXED.finditer(reply):
        meant = _misread(m.group(0)) if m.group(0) in kb_tokens else None
        if meant:
            found.append((m.start(), m.end(), m.group(0), meant))
    return found


def _overlaps(span: Span, taken: Iterable[Span]) -> bool:
    return any(span.start < t.end and t.start < span.end for t in taken)


Typo = tuple[str, float, bool]  # (the right spelling, confidence, planted?)


def _typo_finder(
    case: CaseTranscript, kb: str, truth: frozenset[str]
) -> Callable[[str], Typo | None]:
    """How to tell a misspelt reply word in this case: from the fixture's planted record when it
    has one, else by inference from the KB and the conversation."""
    if case.fixture.noise:
        planted = {p.text.casefold(): p for p in case.fixture.noise if p.kind == "typo"}
        # A planted form that is also the right spelling of another planted word, or a word of
        # the ground truth, may be used correctly in the reply.
        correct = {w for p in case.fixture.noise for w in _words(p.clean)} | truth

        def recorded(word: str) -> Typo | None:
            record = planted.get(word.casefold())
            if record is None or word.casefold() in correct:
                return None
            return record.clean, PLANTED_CONFIDENCE, True

        return recorded

    said = "\n".join(f"{t.customer}\n{t.reply}" for t in case.turns)
    lexicon = _Lexicon.build(kb, said, truth)

    def inferred(word: str) -> Typo | None:
        if word.isupper() and len(word) <= _MAX_CODE_LENGTH:
            return None  # an acronym or code (VAT, ASAP, NCT), not a word
        correction = lexicon.correction(word.casefold())
        return None if correction is None else (correction, INFERRED_TYPO_CONFIDENCE, False)

    return inferred


class KbNoiseEcho(Check):
    """Guarantees: a reply that repeats the KB's noise to the customer - a misspelling the
    generator planted (whole word, any case; not one the customer typed, not the correct
    spelling of another planted word or a manifest word), or, for a fixture without a planted
    record, a KB word one edit from a real word of the common list, the manifest or the case's
    frequent words (never a name, code, plural, first/last-letter or British/American variant,
    or a word the customer typed); or markup debris the KB spells the same way (HTML entity or
    tag, unbalanced **, a table rule or table cells inside a line, an inline # or bullet) -
    yields one minor finding per reply turn, quoting every noisy span of that reply."""

    check_id = "kb_noise_echo"
    needs = frozenset({"kb"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        kb = case.fixture.text if any(d.text.strip() for d in case.fixture.documents) else ""
        if not kb:
            return []
        misspelling = _typo_finder(case, kb, _manifest_words(manifest))
        planted_marks = {p.text for p in case.fixture.noise if p.kind == "markup"}
        findings: list[Finding] = []
        customer_words: set[str] = set()
        for turn in case.turns:
            # What the customer wrote so far is theirs to have repeated back.
            customer_words |= set(_words(turn.customer))
            spans: list[Span] = []
            for start, end, token, label in markup_spans(turn.reply, kb):
                planted = token in planted_marks
                confidence = PLANTED_CONFIDENCE if planted else MARKUP_CONFIDENCE
                span = Span(start, end, turn.reply[start:end], label, "", confidence, planted)
                if not _overlaps(span, spans):
                    spans.append(span)
            for start, end, token, meant in ocr_spans(turn.reply, kb):
                span = Span(start, end, token, "typo", meant, INFERRED_TYPO_CONFIDENCE, False)
                if token.casefold() not in customer_words and not _overlaps(span, spans):
                    spans.append(span)
            for match in _word_spans(turn.reply):
                if match.group(0).casefold() in customer_words:
                    continue
                typo = misspelling(match.group(0))
                if typo is not None:
                    clean, confidence, planted = typo
                    span = Span(
                        match.start(),
                        match.end(),
                        match.group(0),
                        "typo",
                        clean,
                        confidence,
                        planted,
                    )
                    if not _overlaps(span, spans):
                        spans.append(span)
            if spans:
                findings.append(self._finding(case, turn.index, sorted(spans, key=_start)))
        return findings

    def _finding(self, case: CaseTranscript, turn_index: int, spans: list[Span]) -> Finding:
        quotes = list(dict.fromkeys(s.text for s in spans))[:_MAX_QUOTES]
        first = spans[0]
        described = "; ".join(
            f"'{s.text}' ({_describe(s)})" for s in {s.text: s for s in spans}.values()
        )
        if first.kind == "typo":
            fix = f"Correct '{first.text}' to '{_cased(first.clean, first.text)}' in the KB"
        else:
            fix = f"Remove the '{first.text}' markup ({first.kind}) from the KB text"
        others = " and the other noisy spans quoted" if len(quotes) > 1 else ""
        return self.finding(
            case,
            severity="minor",
            turn_index=turn_index,
            subject=first.text,
            evidence=[Evidence(source="reply", quote=q, turn=turn_index) for q in quotes],
            rationale=(
                f"The reply repeats noise from the knowledge base to the customer: {described}. "
                "The customer did not write it; the responder copied it from the KB."
            ),
            fix_target="kb",
            fix_text=(
                f"{fix}{others} (search the KB for every copy), so the responder stops "
                "repeating it to customers."
            ),
            effort="S",
            confidence=max(s.confidence for s in spans),
        )


def _start(span: Span) -> int:
    return span.start


def _describe(span: Span) -> str:
    if span.kind != "typo":
        return span.kind
    source = "a typo the generator planted" if span.planted else "a likely misspelling"
    return f"{source} for '{_cased(span.clean, span.text)}'"


def _cased(word: str, like: str) -> str:
    """`word` in the case pattern of `like` (Colletc -> Collect, BOOING -> BOOKING)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word.casefold() if like.islower() else word
