"""Money: the one reader of amounts (any currency symbol or ISO code, before or after the amount,
grouped thousands) shared by generator and judge, and the canonical way to write an amount."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

CURRENCY_SYMBOL = r"€|\$|£|¥|₹"
CURRENCY_CODES = (
    r"EUR|USD|GBP|CHF|SEK|NOK|DKK|ISK|PLN|CZK|HUF|RON|TRY|AUD|CAD|NZD|SGD|HKD|JPY|INR|ZAR|MXN|"
    r"BRL"
)
# Thousands grouped by a comma, point or space ("1,200", "1.200", "1 305 SEK").
AMOUNT = (
    # Lakh grouping: "1,50,000" (one hundred and fifty thousand rupees).
    r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d{1,2})?(?![\d,])|"
    r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?"
    r"(?![\d.,]\d)|\d+(?:[.,]\d{1,2})?(?!\d)"
)
MONEY = re.compile(
    # "R12.50", "R 5 000" (rand) and "Rs 450" (rupees) only with a capital R.
    rf"(?P<pre>{CURRENCY_SYMBOL}|\b(?:{CURRENCY_CODES}|Fr\.|kr\.?|(?-i:Rs)\.?|(?-i:R)(?=\s?\d(?:\d|[.,\s]\d)))(?![a-z]))"
    rf"\s?(?P<n1>{AMOUNT})"
    # A symbol after the amount is euro style ("45 €", "45€", "45,00 $"); "18 £10" is 18 then
    # £10.
    rf"|(?<![\d.,])(?P<n2>{AMOUNT})(?P<post>\s?€|[$£]|\s[$£](?!\s?\d)|"
    rf"\s?(?:{CURRENCY_CODES}|euros?|dollars?|pounds?|"
    r"francs?|kronor|krona|kroner|krone|kr|zł|rand|rupees?|quid|bucks|pence|"
    r"p(?=\s+(?:per|a|an|each)\b)|p(?=/)|"
    r"cents?)\b)",
    re.IGNORECASE,
)
# The currency each marker names, casefolded; a marker not listed is its own code ("CHF").
CURRENCIES = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "fr.": "CHF",
    "franc": "CHF",
    "francs": "CHF",
    "¥": "JPY",
    "₹": "INR",
    "rs": "INR",
    "rs.": "INR",
    "rupee": "INR",
    "rupees": "INR",
    "r": "ZAR",
    "rand": "ZAR",
    "quid": "GBP",
    "bucks": "USD",
    "zł": "PLN",
    # "kr" is Swedish, Norwegian or Danish: one currency to the judge, so "120 kr" and "120 SEK"
    # from the same bot and KB agree.
    "kr": "KR",
    "kr.": "KR",
    "kronor": "KR",
    "krona": "KR",
    "kroner": "KR",
    "krone": "KR",
    "sek": "KR",
    "nok": "KR",
    "dkk": "KR",
    # Minor units are their own currency: "24.5p per kWh" is not £24.50.
    "p": "GBX",
    "pence": "GBX",
    "cent": "CENT",
    "cents": "CENT",
}

# What the generator writes: a symbol for these codes, the code itself for any other.
CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£"}
# The code of each marker the generator writes besides an upper-case ISO code.
CURRENCY_WORDS = {"€": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "£": "GBP"}

# The shapes of money the generator writes and its noise re-renders ("80 EUR", "€80", "80,00 €",
# "80 euro"). Only real currency codes: an upper-cased heading word ("AND 30") must not read as
# money. Reading is `MONEY`'s job: it takes every shape this one takes, and more.
_WRITTEN_AMOUNT = r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{2})?|\d+(?:[.,]\d{2})?"
_WRITTEN_CODE = r"(?:EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|CZK|HUF|AUD|CAD|NZD)"
MONEY_RE = re.compile(
    rf"(?P<pre>€|\$|£|\b{_WRITTEN_CODE}\b)\s?(?P<a1>{_WRITTEN_AMOUNT})(?![\d])"
    rf"|(?<![\d.,])(?P<a2>{_WRITTEN_AMOUNT})\s?(?P<post>€|\$|£|\b{_WRITTEN_CODE}\b|\beuros?\b)",
)


def parse_amount(raw: str) -> Decimal | None:
    """'1,200.50' / '1.200,50' / '1 200' / '80,00' / '80' -> Decimal; separators before 3 digits
    group, a 1-2 digit tail is the decimal part."""
    parts = re.split(r"[.,]", re.sub(r"[ \u00a0\u202f]", "", raw))
    if len(parts) > 1 and len(parts[-1]) in (1, 2):
        number = "".join(parts[:-1]) + "." + parts[-1]
    else:
        number = "".join(parts)
    try:
        return Decimal(number)
    except InvalidOperation:
        return None


def money_text(amount: Decimal) -> str:
    """Canonical amount text: 80.00 -> '80', 12.5 -> '12.50'."""
    if amount == amount.to_integral_value():
        return str(int(amount))
    return f"{amount.quantize(Decimal('0.01'))}"


def currency_of(marker: str) -> str:
    """The currency a marker names: '€' / 'euros' / 'EUR' -> 'EUR', 'kr' / 'SEK' -> 'KR'."""
    marker = marker.strip().casefold()
    return CURRENCIES.get(marker, marker.upper())


def money_of(match: re.Match[str]) -> tuple[Decimal, str] | None:
    """The amount and currency of one `MONEY` match, or None when the amount does not parse."""
    amount = parse_amount(match.group("n1") or match.group("n2"))
    if amount is None:
        return None
    return amount, currency_of(match.group("pre") or match.group("post"))


def extract_money(text: str) -> list[tuple[Decimal, int, int]]:
    """Every money mention as (amount, start, end)."""
    if not _DIGIT.search(text):
        return []  # no amount without a digit: skip the (costly) pattern
    return list(_money_spans(text))


_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=8192)
def _money_spans(text: str) -> tuple[tuple[Decimal, int, int], ...]:
    # Cached: the generator's fact check and the noise read the same lines and windows many
    # times over (every fact, every seed); the judge reads each reply once per check.
    out = []
    for m in MONEY.finditer(text):
        found = money_of(m)
        if found is not None:
            out.append((found[0], m.start(), m.end()))
    return tuple(out)


def normalize_money(text: str) -> Decimal | None:
    """The amount of the first money mention in any common shape ('80 EUR', '€80', '80,00 €')."""
    found = extract_money(text)
    return found[0][0] if found else None
