"""Money: the one reader of amounts (any currency symbol or ISO code, before or after the amount,
grouped thousands, a range sharing one currency: "80-120 €") shared by the org import, the
generator and the judge, and the canonical way to write an amount. It lives in the lowest layer
so that the org import reads an org folder's prices with it; `generator.facts` re-exports it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

CURRENCY_SYMBOL = r"€|\$|£|¥|₹|₩|₪|₺|₽|₴|₱|฿|₫|₦"
CURRENCY_CODES = (
    r"EUR|USD|GBP|CHF|SEK|NOK|DKK|ISK|PLN|CZK|HUF|RON|TRY|AUD|CAD|NZD|SGD|HKD|JPY|INR|ZAR|MXN|"
    r"BRL|CNY|RMB|KRW|ILS|AED|SAR|QAR|THB|MYR|IDR|VND|TWD|ARS|CLP|UAH|BGN|EGP|NGN|KES"
)
# A dollar with its country: "A$89", "NZ$ 40", "R$ 50" (reais), "US$".
_COUNTRY_DOLLAR = r"(?-i:US|AU|A|CA|C|NZ|HK|S|NT|R|Mex)\$"
# Thousands grouped by a comma, point or space ("1,200", "1.200", "1 305 SEK").
AMOUNT = (
    # Lakh grouping: "1,50,000" (one hundred and fifty thousand rupees).
    r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d{1,2})?(?![\d,])|"
    r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?"
    r"(?![\d.,]\d)|\d+(?:[.,]\d{1,2})?(?!\d)"
)
# "CHF 120.-", "45,- €" (or with a dash): the Swiss and German way of writing a whole amount.
WHOLE_DASH = r"(?:[.,][-–—]{1,2}(?![\d-]))?"
# What follows a number that is a length of time, not an amount: "20 min", "1.5 hours".
_TIMED = r"[\d.,]*\s?(?:mins?|minutes?|h|hrs?|hours?)\b"
MONEY = re.compile(
    # "R12.50", "R 5 000" (rand) and "Rs 450" (rupees) only with a capital R.
    rf"(?P<pre>\b{_COUNTRY_DOLLAR}|{CURRENCY_SYMBOL}|\b(?:{CURRENCY_CODES}|Fr\.|kr\.?|(?-i:Rs)\.?|(?-i:R)(?=\s?\d(?:\d|[.,\s]\d)))(?![a-z]))"
    rf"\s?(?P<n1>{AMOUNT}){WHOLE_DASH}"
    # A symbol after the amount is euro style ("45 €", "45€", "45,00 $"); "18 £10" is 18 then
    # £10, but "15,00 £ 20 min" is 15,00 £ then 20 minutes (a price list's columns).
    rf"|(?<![\d.,])(?P<n2>{AMOUNT}){WHOLE_DASH}(?P<post>\s?(?:€|¥|₹|₩|₪|₺|₽|₴|₱|฿|₫|₦)|[$£]|\s[$£](?!\s?\d(?!{_TIMED}))|"
    rf"\s?(?:{CURRENCY_CODES}|euros?|dollars?|pounds?|"
    r"francs?|kronor|krona|kroner|krone|kr|zł|złotych|zloty|rand|rupees?|quid|bucks|pence|"
    r"Kč|(?-i:Ft)|forint|lei|yen|yuan|"
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
    "złotych": "PLN",
    "zloty": "PLN",
    "kč": "CZK",
    "ft": "HUF",
    "forint": "HUF",
    "lei": "RON",
    "yen": "JPY",
    "yuan": "CNY",
    "rmb": "CNY",
    "₩": "KRW",
    "₪": "ILS",
    "₺": "TRY",
    "₽": "RUB",
    "₴": "UAH",
    "₱": "PHP",
    "฿": "THB",
    "₫": "VND",
    "₦": "NGN",
    "us$": "USD",
    "a$": "AUD",
    "au$": "AUD",
    "c$": "CAD",
    "ca$": "CAD",
    "nz$": "NZD",
    "hk$": "HKD",
    "s$": "SGD",
    "nt$": "TWD",
    "r$": "BRL",
    "mex$": "MXN",
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

# The ISO codes a marker may stand for, the usual one first ("$" is also the Canadian,
# Australian ... dollar; "kr" the Swedish, Norwegian, Danish or Icelandic krona). A marker not
# listed stands for its `currency_of` only.
MARKER_CODES: dict[str, tuple[str, ...]] = {
    "$": ("USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD", "ARS", "CLP"),
    "dollar": ("USD", "CAD", "AUD", "NZD", "SGD", "HKD"),
    "dollars": ("USD", "CAD", "AUD", "NZD", "SGD", "HKD"),
    "bucks": ("USD", "CAD", "AUD", "NZD"),
    "¥": ("JPY", "CNY"),
    "yen": ("JPY",),
    "rs": ("INR", "PKR", "LKR", "NPR"),
    "rs.": ("INR", "PKR", "LKR", "NPR"),
    "rupee": ("INR", "PKR", "LKR", "NPR"),
    "rupees": ("INR", "PKR", "LKR", "NPR"),
    **dict.fromkeys(
        ("kr", "kr.", "kronor", "krona", "kroner", "krone"), ("SEK", "NOK", "DKK", "ISK")
    ),
    "sek": ("SEK",),
    "nok": ("NOK",),
    "dkk": ("DKK",),
}


def currencies_of(marker: str) -> tuple[str, ...]:
    """The ISO codes a currency marker may stand for, the usual one first: '£' -> ('GBP',),
    '$' -> ('USD', 'CAD', ...), 'kr' -> ('SEK', 'NOK', 'DKK', 'ISK'); () for a minor unit
    ('p', 'cents'), which is no currency of a price."""
    key = marker.strip().casefold()
    if key in MARKER_CODES:
        return MARKER_CODES[key]
    code = currency_of(key)
    return () if code in ("GBX", "CENT") else (code,)


# A price that costs nothing: "free", "gratis", "kostenlos", "no charge", "complimentary".
FREE_RE = re.compile(
    r"\b(?:free(?:\s+of\s+charge)?|gratis|kostenlos|kostenfrei|umsonst|gratuit[e]?|gratuit[oa]|"
    r"gratuitement|sans frais|no charge|at no cost|complimentary|included|inclus|inklusive|"
    r"incluido|incluso|darmowy|darmowa|bezpłatn\w*|gratuïte?)(?!\w)",
    re.IGNORECASE,
)

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
    rf"(?P<pre>€|\$|£|\b{_WRITTEN_CODE}\b)\s?(?P<a1>{_WRITTEN_AMOUNT})(?![\d]){WHOLE_DASH}"
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


# The other end of a range that writes its currency once: "80-120 €", "€80-120", "80 to 120 EUR".
_RANGE_JOIN = r"\s?(?:[-–—]|to|bis|à)\s?"
_RANGE_LOW = re.compile(rf"(?<![\d.,:/-])(?P<n>{AMOUNT}){WHOLE_DASH}{_RANGE_JOIN}$", re.IGNORECASE)
_RANGE_HIGH = re.compile(
    rf"^{_RANGE_JOIN}(?P<n>{AMOUNT}){WHOLE_DASH}(?![\d]|[.,:/-]\d|\s?(?:%|x\b|[€$£¥₹]|(?:mins?|minutes?|h|hrs?|"
    r"hours?|days?|weeks?|months?|years?|people|persons?|guests?|kids|children|pax|nights?|"
    r"heures?|stunden?|std|minuten|minutos|tage?|jours?|d[ií]as?|personen|personnes|"
    r"sessions?|classes|visits?|units?|items?|pieces?|pcs|kg|g|km|m|cm|mm|ml|l|sq)\b))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class MoneyMention:
    """One amount in text: its value, span and the currency marker it is written with (a range's
    lower or upper end shares the other end's)."""

    amount: Decimal
    start: int
    end: int
    marker: str


# How far either side of an amount `range_partners` reads (the other end and its joiner).
RANGE_REACH = 24


def range_partners(text: str, match: re.Match[str], *, offset: int = 0) -> list[MoneyMention]:
    """The bare amount at the other end of a range with `match` ("80" in "80-120 €", "120" in
    "€80-120"); nothing when `match` is no range end.

    `text` may be a window of the text `match` was found in, starting at `offset` there: the
    RANGE_REACH characters after the match and, before it, RANGE_REACH plus a few more for the
    look-behinds (a reader of a long text passes a window, not the whole text each time)."""
    marker = match.group("pre") or match.group("post")
    own = parse_amount(match.group("n1") or match.group("n2"))
    found: list[MoneyMention] = []
    if own is None:
        return found
    begin, end = match.start() - offset, match.end() - offset
    # A range goes up: "45,50 € - 3 heures" is an amount, then something else.
    low = _RANGE_LOW.search(text, max(0, begin - RANGE_REACH), begin)
    if low is not None and (amount := parse_amount(low.group("n"))) is not None and amount < own:
        found.append(MoneyMention(amount, offset + low.start("n"), offset + low.end("n"), marker))
    high = _RANGE_HIGH.search(text[end : end + RANGE_REACH])
    if high is not None and (amount := parse_amount(high.group("n"))) is not None and amount > own:
        start = match.end() + high.start("n")
        found.append(MoneyMention(amount, start, match.end() + high.end("n"), marker))
    return found


def money_mentions(text: str) -> list[MoneyMention]:
    """Every money mention in order, ends of ranges included."""
    if not _DIGIT.search(text):
        return []  # no amount without a digit: skip the (costly) pattern
    return list(_mentions(text))


@lru_cache(maxsize=8192)
def _mentions(text: str) -> tuple[MoneyMention, ...]:
    # Cached: the generator's fact check and the noise read the same lines and windows many
    # times over (every fact, every seed); the judge reads each reply once per check.
    matches, out = [], []
    for m in MONEY.finditer(text):
        amount = parse_amount(m.group("n1") or m.group("n2"))
        if amount is not None:
            matches.append(m)
            out.append(MoneyMention(amount, m.start(), m.end(), m.group("pre") or m.group("post")))
    taken = [(m.start, m.end) for m in out]
    for m in matches:
        for partner in range_partners(text, m):
            if not any(s < partner.end and partner.start < e for s, e in taken):
                out.append(partner)
                taken.append((partner.start, partner.end))
    return tuple(sorted(out, key=lambda m: m.start))


def extract_money(text: str) -> list[tuple[Decimal, int, int]]:
    """Every money mention as (amount, start, end)."""
    return [(m.amount, m.start, m.end) for m in money_mentions(text)]


_DIGIT = re.compile(r"\d")


def normalize_money(text: str) -> Decimal | None:
    """The amount of the first money mention in any common shape ('80 EUR', '€80', '80,00 €')."""
    found = extract_money(text)
    return found[0][0] if found else None
