"""Org folders written by other people (tests/data/orgs/: a UK salon with "£52" and "45 mins", a
German physio with "ab 80 €" and "1h 30", a US auto shop with "$89.99", "about an hour" and
"varies", a French bakery with "à partir de 35 €" and "2 heures", a vet with "2 visits" and "day
surgery", a Swiss tailor with "CHF 28.-", a Swedish studio with "kr" and no currency field, and
the minimal and bikes folders): every one imports, its fixtures keep every critical fact and say
prices the org's way, the judge reads the org's words and the canonical ones as one fact, and a
malformed value is an error naming the file, the field and the value."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from generator.facts import critical_facts, missing_facts, money_text
from generator.fixtures import build_fixture
from generator.pipeline import generate_artifacts
from generator.prompts import price
from judge.facts import extract_facts
from qalab.domain import OrgContext
from qalab.llm import NullLedger, OfflineEngine
from qalab.models import Organization
from qalab.org_folder import OrgFolderError, load_org_folder
from qalab.orgs import organization_get_context

ORGS = Path(__file__).resolve().parents[1] / "data" / "orgs"
FOLDERS = sorted(p for p in ORGS.iterdir() if (p / "org.yaml").is_file())
NAMES = [p.name for p in FOLDERS]


def _org(name: str) -> OrgContext:
    return load_org_folder(ORGS / name)


def test_the_corpus_holds_folders_in_many_styles() -> None:
    assert len(FOLDERS) >= 6
    texts = {s.price_text for p in FOLDERS for s in load_org_folder(p).services}
    assert {"£52", "ab 80 €", "$89.99", "à partir de 35 €", "CHF 28.-", "695 kr"} <= texts


@pytest.mark.django_db
def test_every_folder_imports_and_reads_back_the_same() -> None:
    for name in NAMES:
        call_command("qalab_import_org", str(ORGS / name))
        context = _org(name)
        org = Organization.objects.get(slug=context.slug)
        assert organization_get_context(organization=org) == context, name


def test_prices_and_durations_are_read_with_the_org_words_kept() -> None:
    salon = {s.name: s for s in _org("salon-uk").services}
    assert _org("salon-uk").currency == "GBP"  # no currency field: the prices say pounds
    assert (salon["Ladies cut & blow-dry"].price, salon["Ladies cut & blow-dry"].price_text) == (
        Decimal("52"),
        "£52",
    )
    assert (salon["Ladies cut & blow-dry"].duration, salon["Gents cut"].duration) == (45, 30)
    assert (salon["Full head colour"].price_kind, salon["Full head colour"].duration) == (
        "from",
        90,
    )
    balayage = salon["Balayage"]
    assert (balayage.price, balayage.price_kind, balayage.price_max) == (120, "range", 160)
    assert (balayage.duration, balayage.duration_max) == (120, 180)
    assert (salon["Fringe trim"].price, salon["Bridal trial"].duration) == (0, 60)
    physio = {s.name: s for s in _org("physio-de").services}
    assert (physio["Krankengymnastik"].price, physio["Krankengymnastik"].price_kind) == (80, "from")
    assert physio["Krankengymnastik"].duration == 90
    assert (physio["Rückenkurs"].duration, physio["Rückenkurs"].duration_text) == (
        None,
        "8 x 60 Min.",
    )
    shop = {s.name: s for s in _org("autorepair-us").services}
    assert (shop["Full synthetic oil change"].price, shop["Engine repair"].duration) == (
        Decimal("89.99"),
        None,
    )
    assert shop["Engine repair"].price_max == 2500
    vet = {s.name: s for s in _org("vet-ie").services}
    assert [vet[n].duration for n in ("Puppy vaccination course", "Dog neutering")] == [None, None]
    assert (vet["Puppy vaccination course"].duration_text, vet["Consultation"].duration_max) == (
        "2 visits",
        20,
    )
    assert _org("bakery-fr").services[0].duration == 120  # "2 heures"
    assert _org("massage-se").currency == "SEK"  # "kr" and the locale sv_SE


TODAY = date(2026, 3, 2)


@pytest.mark.parametrize("name", NAMES)
def test_a_quick_runs_fixtures_keep_every_critical_fact(name: str) -> None:
    org = _org(name)
    engine = OfflineEngine(ledger=NullLedger())
    artifacts = generate_artifacts(
        org, scenarios=2, max_turns=4, mix=(20, 50, 30), seed=1, engine=engine, today=TODAY
    )
    facts = critical_facts(org)
    assert len(facts) >= len(org.services)
    for fixture in artifacts.fixtures:
        assert missing_facts(fixture.text, facts) == [], fixture.key
    for entry, service in zip(artifacts.manifest.services, org.services, strict=True):
        assert (entry.price, entry.price_kind, entry.price_max, entry.price_text) == (
            service.price,
            service.price_kind,
            service.price_max,
            service.price_text,
        )
        assert (entry.duration_minutes, entry.duration_text) == (
            service.duration,
            service.duration_text,
        )


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("bikes", "szprycha")])
def test_a_clean_fixture_says_prices_and_durations_the_org_way(name: str) -> None:
    org = _org(name)
    engine = OfflineEngine(ledger=NullLedger())
    fixture = build_fixture(
        org, key="fx-01", index=0, level="clean", seed=1, engine=engine, facts=critical_facts(org)
    )
    for service in org.services:
        assert service.price_text and price(org, service) in fixture.text, service.name
        assert service.duration_text in fixture.text, service.name


def _money(text: str) -> set[str]:
    return {f.value for f in extract_facts(text, default_currency="XXX") if f.kind == "money"}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("bikes", "szprycha")])
def test_the_judge_reads_the_org_words_and_the_canonical_amount_as_one_fact(name: str) -> None:
    org = _org(name)
    code = "KR" if org.currency in ("SEK", "NOK", "DKK") else org.currency  # "kr" is all three
    for service in org.services:
        if service.price == 0:
            continue  # "free" says no amount
        said = _money(f"It is {price(org, service)}, thanks.")  # "£52", "ab 80 €", "695 kr"
        canonical = f"{money_text(service.price)} {org.currency}"  # "52 GBP"
        assert _money(f"It is {canonical}, thanks.") == {f"{money_text(service.price)} {code}"}
        assert f"{money_text(service.price)} {code}" in said, (service.price_text, said)
        if service.price_max is not None:
            assert f"{money_text(service.price_max)} {code}" in said, (service.price_text, said)


def _edit(name: str, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    folder = tmp_path / name
    shutil.copytree(ORGS / name, folder)
    data = yaml.safe_load((folder / "org.yaml").read_text(encoding="utf-8"))
    change(data)
    (folder / "org.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return folder


def _service(index: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["services"][index].update(fields)


@pytest.mark.parametrize(
    ("name", "change", "field", "value"),
    [
        ("salon-uk", _service(2, price="abc"), "services[2].price", "'abc'"),
        ("physio-de", _service(1, price="-80 €"), "services[1].price", "'-80 €'"),
        ("vet-ie", _service(3, price=""), "services[3].price", "''"),
        ("autorepair-us", _service(0, price=-5), "services[0].price", "-5"),
        ("bakery-fr", _service(2, duration=""), "services[2].duration", "''"),
        ("tailor-ch", _service(1, duration="-30"), "services[1].duration", "'-30'"),
        ("salon-uk", lambda d: d.update(currency="EUR"), "services[0].price", "'£52'"),
        ("massage-se", lambda d: d.update(locale="en_US"), "services[0].price", "'695 kr'"),
    ],
)
def test_a_malformed_value_names_the_file_the_field_and_the_value(
    tmp_path: Path, name: str, change: Callable[[dict[str, Any]], None], field: str, value: str
) -> None:
    folder = _edit(name, tmp_path, change)
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder)
    message = str(raised.value)
    assert str(folder / "org.yaml") in message
    line = next(line for line in message.splitlines() if f"org.yaml: {field}: " in line)
    assert f": {field}: {value}" in line, line


@pytest.mark.django_db
def test_a_malformed_value_imports_nothing(tmp_path: Path) -> None:
    folder = _edit("salon-uk", tmp_path, _service(2, price="TBC"))
    with pytest.raises(CommandError, match=r"services\[2\]\.price: 'TBC' — no amount"):
        call_command("qalab_import_org", str(folder))
    assert not Organization.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["vet-ie", "salon-uk"])
def test_a_quick_run_over_a_folder_written_by_someone_else_completes(
    name: str, tmp_path: Path
) -> None:
    from tests.runs.helpers import qalab_run

    call_command("qalab_import_org", str(ORGS / name))
    slug = _org(name).slug
    _, report = qalab_run(
        "--org", slug, "--preset", "quick", "--inline", "--scenarios", "2", "--seed", "1",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert report["status"] == "done" and report["summary"]["completed"] == 2, report
    # The lab's own reference bot quotes the KB: the judge finds none of its prices or
    # durations contradicted or invented.
    wrong = [
        f
        for f in report["findings"]
        if f["rule_id"] == "unsupported_facts"
        or (
            f["rule_id"] == "contradicts_manifest"
            and re.search(r"\bsays the (?:price|duration) of ", f["rationale"])
        )
    ]
    assert wrong == [], wrong
