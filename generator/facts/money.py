"""Money: the one reader lives in `qalab.values.money` (the lowest layer, so the org import
reads an org folder's prices with it too); re-exported here for the generator and the judge."""

from __future__ import annotations

from qalab.values.money import (
    AMOUNT,
    CURRENCIES,
    CURRENCY_CODES,
    CURRENCY_SYMBOL,
    CURRENCY_SYMBOLS,
    CURRENCY_WORDS,
    FREE_RE,
    MONEY,
    MONEY_RE,
    MoneyMention,
    currency_of,
    extract_money,
    money_mentions,
    money_of,
    money_text,
    normalize_money,
    parse_amount,
    range_partners,
)

__all__ = [
    "AMOUNT",
    "CURRENCIES",
    "CURRENCY_CODES",
    "CURRENCY_SYMBOL",
    "CURRENCY_SYMBOLS",
    "CURRENCY_WORDS",
    "FREE_RE",
    "MONEY",
    "MONEY_RE",
    "MoneyMention",
    "currency_of",
    "extract_money",
    "money_mentions",
    "money_of",
    "money_text",
    "normalize_money",
    "parse_amount",
    "range_partners",
]
