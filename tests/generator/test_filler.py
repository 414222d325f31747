"""Orgs with only the required fields: fixtures are topped up with fact-free filler.

Minimal orgs (short offering, one or two services, no KB) must still get fixtures of 200+ lines
whose critical facts survive the noise, and the filler must restate the org's facts only: no
amount, phone, time, duration, date or bare number that the org context does not hold.
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path

import pytest

from generator.dates import WEEKDAY_NAMES, find_dates, find_times
from generator.dates.words import MONTH_NAMES, SPOKEN_NUMBER, SPOKEN_ORDINAL
from generator.facts import (
    critical_facts,
    extract_money,
    extract_phones,
    extract_times,
    missing_facts,
    money_text,
)
from generator.facts.duration import (
    COMPOUND_DURATION_RE,
    DURATION_RE,
    compound_minutes,
    duration_minutes,
)
from generator.filler import SECTIONS, filler_stream
from generator.fixtures import MIN_LINES, build_fixture
from generator.pipeline import assign_levels, generate_artifacts
from generator.prompts import org_brief
from generator.rng import rng_for
from generator.schemas import FixtureDocument
from judge.fact_reader import extract_facts
from qalab.domain import OrgContext
from qalab.llm import NullLedger, OfflineEngine
from qalab.org_folder import load_org_folder
from tests.generator.conftest import QUICK, REGRESSION, TODAY

MINIMAL_ORG_DIR = Path(__file__).resolve().parents[1] / "data" / "orgs" / "szprycha"
SEEDS = range(1, 7)


def _org(**fields: object) -> OrgContext:
    return OrgContext.model_validate(fields)


# Businesses unlike the demo, each with only what org.yaml requires (plus locale and currency),
# and one short org that also has hours, contacts and a policy with figures of its own.
SMALL_ORGS = [
    _org(
        slug="pawprint", name="Pawprint Grooming", locale="en_US", currency="USD",
        offering="Dog grooming.",
        services=[{"name": "Bath and brush", "price": "42.50", "duration": 45}],
        intake_fields=[{"key": "owner", "label": "Owner name"}],
    ),
    _org(
        slug="nadel", name="Nadel & Faden", locale="de_CH", currency="CHF",
        offering="Alterations tailor in Bern.",
        services=[
            {"name": "Hem trousers", "price": "25", "duration": 30},
            {"name": "Replace zip", "price": "35", "duration": 40},
        ],
        intake_fields=[{"key": "name", "label": "Name"}, {"key": "garment", "label": "Garment"}],
    ),
    _org(
        slug="nyckel", name="Nyckelservice", locale="sv_SE", currency="SEK",
        offering="Locksmith in Malmö.",
        services=[{"name": "Lock change", "price": "1200", "duration": 90}],
        intake_fields=[{"key": "address", "label": "Address"}],
    ),
    _org(
        slug="chado", name="Chado Tea Room", locale="ja_JP", currency="JPY",
        offering="Tea ceremony lessons.",
        services=[{"name": "Tea ceremony lesson", "price": "3500", "duration": 120}],
        intake_fields=[{"key": "name", "label": "Name"}],
    ),
    _org(
        slug="kiosk", name="Corner Phone Fix", locale="en_GB", currency="GBP",
        offering="Phone screen repairs while you wait.",
        services=[{"name": "Screen swap", "price": "79", "duration": 50,
                   "description": "A cracked screen replaced with a new one."}],
        intake_fields=[{"key": "name", "label": "Name"},
                       {"key": "model", "label": "Phone model", "required": False}],
        hours=[{"days": "Mon-Sat", "opens": "09:30", "closes": "17:30"}],
        contact={"phone": "+44 161 555 0199", "email": "fix@cornerphone.co.uk",
                 "address": "7 Oldham Street, Manchester M1 1JQ"},
        policies=[{"id": "data-backup", "critical": True,
                   "text": "Back up your phone first; we keep unpaid repairs for 30 days."}],
    ),
]  # fmt: skip


@pytest.fixture(scope="module")
def minimal() -> OrgContext:
    return load_org_folder(MINIMAL_ORG_DIR)


@pytest.fixture(scope="module")
def small_orgs(minimal: OrgContext) -> list[OrgContext]:
    return [minimal, *SMALL_ORGS]


def test_the_stranger_org_folder_has_only_required_fields(minimal: OrgContext) -> None:
    assert not (MINIMAL_ORG_DIR / "kb").exists()
    assert minimal.kb == [] and minimal.policies == [] and minimal.hours == []
    assert len(minimal.services) == 1 and minimal.currency == "PLN"


def test_every_fixture_of_a_small_org_has_200_lines_and_keeps_its_facts(
    small_orgs: list[OrgContext],
) -> None:
    engine = OfflineEngine(ledger=NullLedger())
    for org in small_orgs:
        facts = critical_facts(org)
        for seed in SEEDS:
            for i, level in enumerate(assign_levels(REGRESSION["mix"], 12, seed)):
                key = f"fx-{i + 1:02d}"
                fixture = build_fixture(
                    org, key=key, index=i, level=level, seed=seed, engine=engine, facts=facts
                )
                where = (org.slug, seed, key, level)
                assert fixture.line_count >= MIN_LINES, where
                assert missing_facts(fixture.text, facts) == [], where
                assert any(d.id.startswith("filler-") for d in fixture.documents), where


def test_a_small_org_gets_whole_artifacts(minimal: OrgContext) -> None:
    engine = OfflineEngine(ledger=NullLedger())
    artifacts = generate_artifacts(minimal, seed=3, engine=engine, today=TODAY, **QUICK)
    assert len(artifacts.fixtures) == 12 and len(artifacts.blueprints) == 12
    assert min(f.line_count for f in artifacts.fixtures) >= MIN_LINES


def test_orgs_with_enough_text_of_their_own_get_no_filler(org: OrgContext) -> None:
    engine = OfflineEngine(ledger=NullLedger())
    for seed in (1, 2):
        artifacts = generate_artifacts(org, seed=seed, engine=engine, today=TODAY, **QUICK)
        ids = {d.id for f in artifacts.fixtures for d in f.documents}
        assert not [i for i in ids if i.startswith("filler-")]


# --------------------------------------------------------------------------- no new facts

_WORD = re.compile(r"[A-Za-z]+")
_CALENDAR_WORDS = re.compile(
    r"\b(?:(?:" + "|".join([*WEEKDAY_NAMES, *(d[:3] for d in WEEKDAY_NAMES), *MONTH_NAMES]) + r")s?"
    + r"|today|tomorrow|yesterday|tonight|weekends?|daily|weekly|monthly|yearly|annual(?:ly)?"
    r"|hourly|overnight|noon|midnight)\b",
    re.IGNORECASE,
)  # fmt: skip
_NUMBER_WORDS = re.compile(
    rf"\b(?:{SPOKEN_NUMBER}|{SPOKEN_ORDINAL}|half|quarter|dozen|once|twice)\b", re.IGNORECASE
)


def values(text: str, currency: str) -> set[str]:
    """Every value a reader could take from `text`, read with the shared readers: money, phone,
    clock, duration (generator.facts), the judge's facts (any kind, spoken ones too), clock
    times and dates as customers say them, digit runs, number words and calendar words."""
    out = {f"money:{money_text(a)}" for a, _, _ in extract_money(text)}
    out |= {f"phone:{p}" for p in extract_phones(text)}
    out |= {f"time:{t}" for t in extract_times(text)}
    out |= {f"time:{p.value}" for p in find_times(text)}
    out |= {f"duration:{compound_minutes(m)}" for m in COMPOUND_DURATION_RE.finditer(text)}
    out |= {f"duration:{duration_minutes(m)}" for m in DURATION_RE.finditer(text)}
    out |= {f"judge-{f.kind}:{f.value}" for f in extract_facts(text, default_currency=currency)}
    out |= {f"date:{p.text.casefold()}" for p in find_dates(text)}
    out |= {f"digits:{d}" for d in re.findall(r"\d+", text)}
    out |= {f"word:{m.group(0).casefold()}" for m in _NUMBER_WORDS.finditer(text)}
    out |= {f"word:{m.group(0).casefold()}" for m in _CALENDAR_WORDS.finditer(text)}
    return out


def own_values(org: OrgContext) -> set[str]:
    """The values the org context states: its brief (services, hours, contacts, policies) and KB."""
    own = org_brief(org, descriptions=True) + "\n" + "\n".join(d.text for d in org.kb)
    return values(own, org.currency)


def new_values(
    org: OrgContext, docs: list[FixtureDocument], own: set[str] | None = None
) -> set[str]:
    """Values in `docs` that the org context does not state."""
    text = "\n".join(f"# {d.title}\n{d.text}" for d in docs)
    return values(text, org.currency) - (own_values(org) if own is None else own)


def _filler(org: OrgContext, seed: int, rounds: int = 2) -> list[FixtureDocument]:
    return list(
        islice(filler_stream(org, rng_for(seed, "fixture", "fx-01")), rounds * len(SECTIONS))
    )


def test_filler_states_no_value_the_org_does_not(small_orgs: list[OrgContext]) -> None:
    for org in small_orgs:
        own = own_values(org)
        for seed in range(1, 13):
            docs = _filler(org, seed)
            assert len({d.id for d in docs}) == len(docs) == 2 * len(SECTIONS)
            assert new_values(org, docs, own) == set(), (org.slug, seed)


def test_filler_restates_the_orgs_own_prices_and_durations(minimal: OrgContext) -> None:
    found = values("\n".join(d.text for d in _filler(minimal, 1)), minimal.currency)
    assert {"money:120", "duration:60"} <= found


def test_the_new_value_check_catches_figures_the_org_does_not_have(minimal: OrgContext) -> None:
    planted = {
        "Open until 18:00.": "time:18:00",
        "Call 030 5550 1234 today.": "phone:3055501234",
        "A spare tube is 15 PLN.": "money:15",
        "Repairs take 2 days.": "duration:2880",
        "We reply within three days.": "judge-duration:4320",
        "Closed on Mondays.": "word:mondays",
        "Closed in August.": "word:august",
        "Come at half nine.": "time:09:30",
        "Since 1998.": "digits:1998",
    }
    for sentence, value in planted.items():
        doc = FixtureDocument(id="x", title="Notes", text=sentence)
        assert value in new_values(minimal, [doc]), sentence


def test_filler_is_deterministic_from_the_seed(minimal: OrgContext) -> None:
    assert _filler(minimal, 4) == _filler(minimal, 4)
    assert _filler(minimal, 4) != _filler(minimal, 5)
