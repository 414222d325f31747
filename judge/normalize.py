"""The one normaliser of untrusted text before a pattern check reads it (DESIGN §9, issue 33).

`fold(text)` gives the form patterns match on and a map back to `text`:
- every code point in its NFKC form (fullwidth, ligatures, mathematical and circled letters
  become plain ones: fullwidth "report" -> "report", the "fi" ligature -> "fi");
- invisible characters removed: zero-width space, non-joiner and joiner, word joiner and the
  invisible operators, byte-order mark, soft hyphen, combining grapheme joiner, variation
  selectors, Mongolian vowel separator and the bidi controls (marks, embeddings, overrides,
  isolates); Unicode tag characters (U+E0020..E007E, invisible "ASCII smuggling") are read as
  the ASCII they encode;
- letters of other scripts that look Latin folded to it (Cyrillic er, ie and o in
  "report", Greek omicron and nu, Latin small capitals, dotless i);
- typographic quotes, apostrophes and dashes made plain.

Case is kept, so a match's length and capitals stay comparable. A check matches its patterns on
`Folded.text` and maps each match back with `Folded.span`, which gives the [start, end) of the
original characters the match was made from: quotes are cut from the original, so they stay
verbatim (the evidence check, `judge.evidence`, drops any finding whose quote is not). Linear
in the length of `text`; ASCII text is returned as it is, with no map.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

# Characters nobody sees: removed before matching (`judge.evidence` removes the same ones).
INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\U000e0001\U000e007f\U000e0100-\U000e01ef"
)
INVISIBLE_RE = re.compile(f"[{INVISIBLE}]")
_TAGS = range(0xE0020, 0xE007F)  # tag characters: invisible copies of printable ASCII

# Letters that look Latin, by what they look like. NFKC leaves them alone.
_LOOKALIKES = {
    "a": "аɑαа",
    "b": "Ьƅ",
    "c": "сϲⅽ",
    "d": "ԁⅾ",
    "e": "еҽ",
    "g": "ɡց",
    "h": "һհ",
    "i": "іıɩιӏ",
    "j": "јϳȷ",
    "k": "κ",
    "l": "ⅼ",
    "m": "ⅿ",
    "n": "ոη",
    "o": "оοօσ",
    "p": "рρ",
    "q": "ԛ",
    "s": "ѕ",
    "t": "τ",
    "u": "υսμ",
    "v": "νѵ",
    "w": "ԝѡ",
    "x": "хχ",
    "y": "уүγ",
    "A": "АΑ",
    "B": "ВΒ",
    "C": "СϹ",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙӀ",
    "J": "Ј",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "УΥҮ",
    "Z": "Ζ",
}
_PLAIN = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc\u0060\u00b4", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    "\u00a0": " ",
    # Latin small capitals: "ʀᴇᴘᴏʀᴛ".
    **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnoprstuvwyz", strict=True)),
}
_FOLDS = {char: latin for latin, chars in _LOOKALIKES.items() for char in chars} | _PLAIN
_CHANGED = re.compile("[" + re.escape("".join(_FOLDS)) + INVISIBLE + "\U000e0020-\U000e007e]")
_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")


@lru_cache(maxsize=4096)
def fold_char(char: str) -> str:
    """What one code point reads as when matching: "" for an invisible one."""
    if INVISIBLE_RE.match(char):
        return ""
    if ord(char) in _TAGS:
        return chr(ord(char) - 0xE0000)
    plain = unicodedata.normalize("NFKC", char)
    return "".join(_FOLDS.get(c, c) for c in plain)


@dataclass(frozen=True)
class Folded:
    """`text` as patterns read it, and where each of its characters came from in `original`.

    `_starts[k]` is where piece k of `text` begins; `_origins[k]` is the original offset it came
    from and `_sizes[k]` how many original characters it stands for: 0 marks a piece copied as
    it is (one original character per character), otherwise the piece is what those `_sizes[k]`
    original characters became."""

    original: str
    text: str
    _starts: list[int] = field(default_factory=list)
    _origins: list[int] = field(default_factory=list)
    _sizes: list[int] = field(default_factory=list)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The [start, end) of the original characters a match at [start, end) of `text` was
        read from (an empty match maps to an empty span)."""
        if not self._starts:
            return start, end
        lo = self._origin(start, end=False)
        return lo, (lo if end <= start else self._origin(end - 1, end=True))

    def _origin(self, position: int, *, end: bool) -> int:
        k = max(0, bisect_right(self._starts, position) - 1)
        if self._sizes[k] == 0:
            return self._origins[k] + position - self._starts[k] + (1 if end else 0)
        return self._origins[k] + (self._sizes[k] if end else 0)


def fold(text: str) -> Folded:
    """`text` normalised for pattern matching, with the map back to it (see the module)."""
    if text.isascii():
        return Folded(text, text)
    out: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    sizes: list[int] = []
    length = 0

    def piece(value: str, origin: int, size: int) -> None:
        nonlocal length
        if value:
            starts.append(length)
            origins.append(origin)
            sizes.append(size)
            out.append(value)
            length += len(value)

    for run in _RUNS.finditer(text):
        value = run.group()
        if value.isascii() or (
            _CHANGED.search(value) is None and unicodedata.is_normalized("NFKC", value)
        ):
            piece(value, run.start(), 0)
            continue
        copied = run.start()  # the first character not yet given out
        for offset, char in enumerate(value, start=run.start()):
            read = fold_char(char)
            if read == char:
                continue
            piece(text[copied:offset], copied, 0)
            piece(read, offset, 1)
            copied = offset + 1
        piece(text[copied : run.end()], copied, 0)
    return Folded(text, "".join(out), starts, origins, sizes)
