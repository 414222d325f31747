"""Whether an amount a reply states follows from amounts the conversation already holds.

A careful reader accepts a figure a bot works out ("2 x 80 EUR = 160 EUR", "£85 + 20% = £102",
"£14 single with a third off becomes £9.33") and rejects one it invents. Two levels:

- **any figure** may be a supported amount times a count the conversation states, a sum of up to
  three supported amounts the conversation states, or a supported rate applied to a supported
  amount (a share, a discount or a surcharge);
- **a figure the reply presents as a result** ("so", "=", "total", "comes to", "that's",
  "becomes", "saves", "difference", "per day") may also combine the amounts the conversation
  states: up to three terms, each an amount or an amount times a count; a difference of two; an
  amount times two counts; an amount shared by a count; an amount times a count less another
  (what a pack saves); the sum of line items the same reply lists before it; any of these with
  a rate applied.

Operands are only amounts the conversation *states* and the KB, the customer or an earlier
derivation supports, so an invented base fee is never an operand, and a total built on it is
reported with the fee in the same turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from itertools import combinations, combinations_with_replacement

# Rounded to the cent either way ("£1,869.58 less 25%" is £1,402.185: £1,402.18 or £1,402.19).
_CENT = Decimal("0.005")
# Result cues between the sentence start (or the figure before) and the figure.
RESULT = re.compile(
    r"=|→|->|\b(?:so|total|totals|totalling|comes? to|coming to|making|makes|bringing|"
    r"that's|thats|that is|that'd be|that would be|would be|works out|saves?|saving|"
    r"altogether|in all|becomes|instead of|reduced to|down to|up to|from .{1,30} to|"
    r"for (?:both|all|the (?:two|three|four|five|six|group|lot))|together|difference|"
    r"split|divided|shared|each way|"
    r"per (?:day|night|person|head|month|week|lesson|session|visit))\b",
    re.IGNORECASE,
)
# Rates written in words: "half price", "a third off", "double".
_FRACTIONS = {
    "half": Decimal(50),
    "a third": Decimal(100) / 3,
    "one third": Decimal(100) / 3,
    "1/3": Decimal(100) / 3,
    "a quarter": Decimal(25),
    "one quarter": Decimal(25),
    "1/4": Decimal(25),
    "1/2": Decimal(50),
    "two thirds": Decimal(200) / 3,
    "2/3": Decimal(200) / 3,
}
_FRACTION = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in _FRACTIONS) + r")(?=\s*(?:price|off|of|the|discount))",
    re.IGNORECASE,
)
# A multiplier written as one: "(£85 x 1.2)", "x1.5", "1.5x the price".
_FACTOR = re.compile(
    r"[×x*]\s?(\d(?:[.,]\d{1,3}))\b|(?<![\d.,])(\d(?:[.,]\d{1,3}))\s?[×x](?![a-z])", re.IGNORECASE
)


def rates_in(text: str) -> set[Decimal]:
    """Rates (as percentages) a text states in words or as a factor: "half price" -> 50,
    "x 1.2" -> 20 (a surcharge)."""
    found = {_FRACTIONS[m.group(1).casefold()] for m in _FRACTION.finditer(text)}
    for m in _FACTOR.finditer(text):
        factor = Decimal((m.group(1) or m.group(2)).replace(",", "."))
        if 0 < factor < 3 and factor != 1:
            found.add(abs(factor - 1) * 100)
    return found


def _near(a: Decimal, b: Decimal) -> bool:
    return abs(a - b) <= _CENT


def _rated(amount: Decimal, rates: Iterable[Decimal]) -> Iterable[Decimal]:
    for rate in rates:
        share = rate / 100
        yield amount * share
        yield amount * (1 - share)
        yield amount * (1 + share)


def follows(
    target: Decimal,
    *,
    known: Sequence[Decimal],
    stated: Sequence[Decimal],
    counts: Iterable[int],
    rates: Iterable[Decimal],
    result: bool = False,
    listed: Sequence[Decimal] = (),
) -> bool:
    """Whether `target` follows from `known` (supported amounts of its currency), `stated`
    (those the conversation states), `counts` and `rates` (percentages); `result` when the
    reply presents it as a result, `listed` the supported amounts the same reply states before
    it (line items of a total)."""
    if target <= 0:
        return False
    counts = sorted(set(counts))
    rates = sorted({r for r in rates if 0 < r < 100})
    if any(_near(k * n, target) for k in known for n in counts):
        return True
    for size in (2, 3):
        if any(_near(sum(t), target) for t in combinations_with_replacement(stated, size)):
            return True
    if any(_near(v, target) for k in known for v in _rated(k, rates)):
        return True
    if not result:
        return False
    terms = {s for s in stated} | {s * n for s in stated for n in counts}
    terms |= {a * n * m for a in stated for n, m in combinations(counts, 2)}
    terms |= {a - b for a in stated for b in stated if a > b}
    # "€1 per km beyond 20 km, so for 30 km about €10": a rate times what exceeds a threshold.
    terms |= {a * (n - m) for a in stated for n in counts for m in counts if n > m}
    for size in range(2, min(len(listed), 8) + 1):
        terms |= {sum(c) for c in combinations(listed, size)}
    if any(_near(t, target) for t in terms):
        return True
    # A price per unit of a pack ("5 days for £95 works out at £19 a day") and what a pack
    # saves ("5 sessions at £35, or 5 for £160: you save £15"): one step each, never an operand
    # of the searches below.
    if any(_near(a / n, target) for a in stated for n in counts):
        return True
    if any(_near(a * n - b, target) for a in stated for n in counts for b in stated):
        return True
    ordered = sorted(terms)
    pool = ordered[:300]
    as_cents = {(t * 100).quantize(Decimal(1)) for t in pool}
    for a, b in combinations_with_replacement(pool, 2):
        rest = target - a - b
        if rest > 0 and (rest * 100).quantize(Decimal(1)) in as_cents:
            return True
        if _near(a + b, target):
            return True
    return any(_near(v, target) for t in pool for v in _rated(t, rates))
