"""Facts: the one place where money, phone numbers, times of day and durations are read and
written canonically (`money`, `phone`, `clock`, `duration`), shared by generator and judge, and
the critical facts each fixture must keep (`critical`). The names below stay importable from
`generator.facts`. The money and duration readers live in `qalab.values` (the lowest layer, so
the org import reads an org folder's prices and durations with the same reader);
`generator.facts.money` and `generator.facts.duration` re-export them."""

from __future__ import annotations

from generator.facts.clock import TIME_RE, extract_times, normalize_time
from generator.facts.critical import (
    EMAIL_RE,
    INT_RE,
    Fact,
    FactKind,
    canonical_values,
    critical_facts,
    extract_numbers,
    extract_phones,
    find_fact,
    missing_facts,
    policy_facts,
)
from generator.facts.money import (
    CURRENCY_SYMBOLS,
    CURRENCY_WORDS,
    FREE_RE,
    MONEY_RE,
    extract_money,
    money_mentions,
    money_text,
    normalize_money,
    parse_amount,
)
from generator.facts.phone import PHONE_RE, phone_digits

__all__ = [
    "CURRENCY_SYMBOLS",
    "CURRENCY_WORDS",
    "EMAIL_RE",
    "FREE_RE",
    "INT_RE",
    "MONEY_RE",
    "PHONE_RE",
    "TIME_RE",
    "Fact",
    "FactKind",
    "canonical_values",
    "critical_facts",
    "extract_money",
    "extract_numbers",
    "extract_phones",
    "extract_times",
    "find_fact",
    "missing_facts",
    "money_mentions",
    "money_text",
    "normalize_money",
    "normalize_time",
    "parse_amount",
    "phone_digits",
    "policy_facts",
]
