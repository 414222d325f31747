"""Seeded, fact-preserving writing noise for fixtures: typos, broken structure, repetition, formats.

Noise changes how things are written, never a value: typos touch only plain words that are not
protected (service names, day names, units, currency words), and format variants re-render the
same amount, time or phone number (`80 EUR` -> `€80`, `08:30` -> `8.30`).

What it plants is also returned as data (`PlantedNoise`): every distinct misspelt word with its
original, and the debris marks a reader could repeat ("•" or "*" for a list marker, "|" joining
the cells of a broken table row), so a judge can tell a reply that echoes the noise.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple

from generator.dates import WEEKDAY_NAMES
from generator.facts import (
    CURRENCY_SYMBOLS,
    CURRENCY_WORDS,
    MONEY_RE,
    PHONE_RE,
    TIME_RE,
    extract_money,
    money_text,
    parse_amount,
    phone_digits,
)
from generator.schemas import FixtureDocument, NoiseLevel, PlantedNoise, PlantedNoiseKind


@dataclass(frozen=True)
class NoiseProfile:
    """Per-level probabilities (per eligible word / line) and counts of each noise operation."""

    typo: float
    format_variant: float
    broken_table: float
    dropped_marker: float
    heading_case: float
    merge: float
    split: float
    repeats: int


PROFILES: dict[NoiseLevel, NoiseProfile | None] = {
    "clean": None,
    "semi_noisy": NoiseProfile(0.02, 0.35, 0.2, 0.15, 0.3, 0.03, 0.04, 2),
    "messy": NoiseProfile(0.08, 0.75, 0.55, 0.4, 0.7, 0.08, 0.1, 5),
}

ALWAYS_PROTECTED = frozenset(
    [
        *(name.casefold() for name in WEEKDAY_NAMES),
        *(name[:3].casefold() for name in WEEKDAY_NAMES),
        "minutes",
        "minute",
        "hours",
        "hour",
        "euro",
        "euros",
        "cents",
        "closed",
        "opens",
        "closes",
        "price",
        "prices",
    ]
)

_LIST_MARKER = re.compile(r"^(\s*)([-*•]|\d+[.)])\s+")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_WORD = re.compile(r"^([^A-Za-z]*)([A-Za-z]+)([^A-Za-z]*)$")
_KEYBOARD = dict(zip("aeioustnrl", "sworiyrbtk", strict=True))
# A merge must not glue two values together ("... 0142" + "24 hours"), nor a currency to a number.
_VALUE_EDGE = re.compile(r"[\d€$£]|\b(?:EUR|USD|GBP)\b", re.IGNORECASE)


_LETTERS = re.compile(r"[A-Za-z]+")


@dataclass
class _Stats:
    words: int = 0
    typos: int = 0
    structural: int = 0
    breaks: int = 0
    # Casefolded words of the clean documents: a typo that spells one of them ("trail" for
    # "trial" in a KB about trails) is indistinguishable from that word, so it is not recorded.
    vocabulary: frozenset[str] = frozenset()
    planted: dict[tuple[str, str], PlantedNoise] = field(default_factory=dict)

    def plant(self, kind: PlantedNoiseKind, text: str, clean: str) -> None:
        """Record one noisy form (the first occurrence of each distinct form wins)."""
        if text == clean or (kind == "typo" and text.casefold() in self.vocabulary):
            return
        self.planted.setdefault(
            (kind, text.casefold()), PlantedNoise(kind=kind, text=text, clean=clean)
        )


class Noised(NamedTuple):
    """What `apply_noise` returns: the noisy documents, their metrics, and what was planted."""

    documents: list[FixtureDocument]
    metrics: dict[str, float]
    planted: list[PlantedNoise]


def _money_variant(match: re.Match[str], rng: random.Random) -> str:
    amount = parse_amount(match.group("a1") or match.group("a2"))
    marker = match.group("pre") or match.group("post")
    code = CURRENCY_WORDS.get(marker.casefold(), marker.upper())
    if amount is None:
        return match.group(0)
    plain, two = money_text(amount), f"{amount.quantize(Decimal('0.01'))}"
    options = [f"{plain} {code}", f"{code} {plain}", f"{two} {code}"]
    symbol = CURRENCY_SYMBOLS.get(code)
    if symbol:
        options += [f"{plain}{symbol}", f"{symbol}{plain}", f"{two.replace('.', ',')} {symbol}"]
    if code == "EUR":
        options.append(f"{plain} euro")
    return rng.choice(options)


def _time_variant(match: re.Match[str], rng: random.Random) -> str:
    hour, minute = int(match.group(1)), match.group(2)
    return rng.choice([f"{hour}:{minute}", f"{hour:02d}.{minute}", f"{hour}.{minute}"])


def _phone_variant(match: re.Match[str], rng: random.Random) -> str:
    raw = match.group(0)
    if len(phone_digits(raw)) < 7 or " " not in raw:
        return raw
    return rng.choice([raw.replace(" ", "-"), raw.replace(" ", ""), raw])


def _formats(line: str, p: float, rng: random.Random) -> str:
    line = MONEY_RE.sub(lambda m: _money_variant(m, rng) if rng.random() < p else m.group(0), line)
    money_spans = [(s, e) for _, s, e in extract_money(line)]

    def time_sub(m: re.Match[str]) -> str:
        inside_money = any(s <= m.start() < e for s, e in money_spans)
        return _time_variant(m, rng) if not inside_money and rng.random() < p else m.group(0)

    line = TIME_RE.sub(time_sub, line)
    # Amounts and times are off limits: "8.30 - 18.00" looks like a phone number to the regex.
    taken = [(s, e) for _, s, e in extract_money(line)]
    taken += [m.span() for m in TIME_RE.finditer(line)]

    def phone_sub(m: re.Match[str]) -> str:
        overlaps = any(s < m.end() and m.start() < e for s, e in taken)
        return _phone_variant(m, rng) if not overlaps and rng.random() < p else m.group(0)

    return PHONE_RE.sub(phone_sub, line)


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:
        return word[:i] + word[i + 1 :]
    if kind == 2:
        return word[:i] + word[i] + word[i:]
    return word[:i] + _KEYBOARD.get(word[i].lower(), word[i]) + word[i + 1 :]


def typo_words(
    line: str, rate: float, rng: random.Random, protected: frozenset[str], stats: _Stats
) -> str:
    """`line` with typos in plain words (5+ letters, not protected); emails and URLs untouched."""
    tokens = line.split(" ")
    for n, token in enumerate(tokens):
        match = _WORD.match(token)
        if match is None or "@" in token or "/" in token or "{" in token:
            continue
        stats.words += 1
        core = match.group(2)
        if len(core) < 5 or core.casefold() in protected or rng.random() >= rate:
            continue
        stats.typos += 1
        noisy = _typo(core, rng)
        stats.plant("typo", noisy, core)
        tokens[n] = match.group(1) + noisy + match.group(3)
    return " ".join(tokens)


def _structure(line: str, profile: NoiseProfile, rng: random.Random, stats: _Stats) -> str | None:
    stripped = line.strip()
    if stripped.startswith("|"):
        stats.structural += 1
        if rng.random() >= profile.broken_table:
            return line
        stats.breaks += 1
        if _TABLE_SEPARATOR.match(stripped):
            return None  # the separator row simply disappears
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        joint = rng.choice(["  ", " - ", " | ", "\t"])
        if joint == " | " and len(cells) > 1:
            stats.plant("markup", "|", "")
        return joint.join(cells)
    marker = _LIST_MARKER.match(line)
    if marker:
        stats.structural += 1
        if rng.random() < profile.dropped_marker:
            stats.breaks += 1
            replacement = rng.choice(["", "", "* ", "• ", "-"])
            if replacement.strip() in ("*", "•") and replacement.strip() != marker.group(2):
                stats.plant("markup", replacement.strip(), marker.group(2))
            return marker.group(1) + replacement + line[marker.end() :]
        return line
    if stripped.startswith("#"):
        stats.structural += 1
        if re.search(r"[\d@]", stripped) or rng.random() >= profile.heading_case:
            return line
        hashes, _, title = stripped.partition(" ")
        shape = rng.randrange(4)
        if shape == 3:
            stats.breaks += 1
            return title.upper() + ":"
        title = (title.upper(), title.lower(), title.title())[shape]
        return f"{hashes} {title}"
    return line


def _merge_and_split(lines: list[str], profile: NoiseProfile, rng: random.Random) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        mergeable = line.strip() and nxt.strip() and not nxt.lstrip().startswith(("#", "|"))
        if mergeable:
            last, first = line.split()[-1], nxt.split()[0]
            mergeable = not (_VALUE_EDGE.search(last) or _VALUE_EDGE.search(first))
        if mergeable and rng.random() < profile.merge:
            out.append(f"{line.rstrip()} {nxt.strip()}")
            i += 2
            continue
        if len(line) > 50 and not line.lstrip().startswith(("#", "|")):
            cuts = [m.start() for m in re.finditer(r"(?<=[A-Za-z,]) (?=[A-Za-z])", line)]
            if cuts and rng.random() < profile.split:
                middle = len(line) / 2
                cut = min(cuts, key=lambda c: abs(c - middle))
                out += [line[:cut], line[cut + 1 :]]
                i += 1
                continue
        out.append(line)
        i += 1
    return out


def _repeat_paragraphs(docs: list[list[str]], count: int, rng: random.Random) -> None:
    candidates = []
    for d, lines in enumerate(docs):
        start = None
        for n, line in enumerate([*lines, ""]):
            if line.strip() and start is None:
                start = n
            elif not line.strip() and start is not None:
                if not lines[start].lstrip().startswith("#"):
                    candidates.append((d, start, n))
                start = None
    for d, start, end in sorted(rng.sample(candidates, min(count, len(candidates))), reverse=True):
        block = docs[d][start:end]
        # A copy pasted right after the original, or once more at the end of the document.
        where = end if rng.random() < 0.5 else len(docs[d])
        docs[d][where:where] = ["", *block] if where == len(docs[d]) else [*block, ""]


def duplicated_line_share(text: str) -> float:
    """Share of non-blank lines that repeat an earlier non-blank line."""
    seen: set[str] = set()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    repeated = 0
    for line in lines:
        repeated += line in seen
        seen.add(line)
    return round(repeated / len(lines), 4) if lines else 0.0


def apply_noise(
    documents: list[FixtureDocument],
    level: NoiseLevel,
    rng: random.Random,
    *,
    protected: frozenset[str] = frozenset(),
) -> Noised:
    """Noisy copies of `documents` for `level`, metrics (typo_rate, structure_score), and the
    distinct noisy forms planted (in order of first appearance)."""
    profile = PROFILES[level]
    vocabulary = frozenset(
        w.casefold() for doc in documents for w in _LETTERS.findall(f"{doc.title} {doc.text}")
    )
    stats = _Stats(vocabulary=vocabulary)
    if profile is None:
        return Noised(list(documents), {"typo_rate": 0.0, "structure_score": 1.0}, [])
    guard = protected | ALWAYS_PROTECTED
    noisy: list[list[str]] = []
    for doc in documents:
        lines = []
        for line in doc.text.splitlines():
            line = _formats(line, profile.format_variant, rng)
            shaped = _structure(line, profile, rng, stats)
            if shaped is not None:
                lines.append(typo_words(shaped, profile.typo, rng, guard, stats))
        noisy.append(_merge_and_split(lines, profile, rng))
    _repeat_paragraphs(noisy, profile.repeats, rng)
    out = [
        FixtureDocument(id=doc.id, title=doc.title, text="\n".join(lines))
        for doc, lines in zip(documents, noisy, strict=True)
    ]
    metrics = {
        "typo_rate": round(stats.typos / stats.words, 4) if stats.words else 0.0,
        "structure_score": round(1 - stats.breaks / stats.structural, 4)
        if stats.structural
        else 1.0,
    }
    return Noised(out, metrics, list(stats.planted.values()))
