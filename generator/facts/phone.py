"""Phone numbers: the one reader of phone numbers (with '+' or '00', spaces, dashes, dots,
brackets) shared by generator and judge, and their canonical digits."""

from __future__ import annotations

import re

# Not a reference code's digits ("LK-0937712", "INC-448210").
PHONE_RE = re.compile(r"(?<![\w+])(?<![A-Za-z]-)(?:\+|00)?\d[\d \t().-]{5,18}\d(?![\w])")


def phone_digits(raw: str) -> str:
    """Digits only, without the international/trunk prefix zeros: '+353 1 555 0142' and
    '00353 1 555 0142' -> '35315550142'."""
    return re.sub(r"\D", "", raw).lstrip("0")


def phones_match(a: str, b: str) -> bool:
    """Same number, allowing a country code on one side (national '01 555 0142' vs '+353 1...')."""
    if len(a) < 7 or len(b) < 7:
        return a == b
    return a.endswith(b) or b.endswith(a)
