"""A broken org folder gets every problem in one pass (issue 35, point 6): org.yaml's fields, the
currency, the KB files and the limits together, each naming the file, the field and the value
with an example; exit 2 and nothing imported."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from qalab.models import KbDocument, Organization
from qalab.org_folder import DEMO_ORG_DIR, OrgFolderError, load_org_folder


def _folder(tmp_path: Path, change: Any) -> Path:
    folder = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, folder)
    data = yaml.safe_load((folder / "org.yaml").read_text(encoding="utf-8"))
    change(data)
    (folder / "org.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    return folder


def _four_errors(data: dict[str, Any]) -> None:
    data["hours"][1]["closes"] = "25:00"
    data["services"][2]["duration"] = 1.5
    data["currency"] = "XYZ"
    del data["name"]


@pytest.mark.django_db
def test_four_different_errors_are_reported_at_once_with_their_values(tmp_path: Path) -> None:
    folder = _folder(tmp_path, _four_errors)
    org_yaml = folder / "org.yaml"
    with pytest.raises(CommandError) as raised:
        call_command("qalab_import_org", str(folder))
    assert raised.value.returncode == 2
    lines = str(raised.value).splitlines()
    assert lines[0] == "invalid org folder, nothing imported: 4 problems"
    assert sorted(lines[1:]) == sorted(
        [
            f"  {org_yaml}: currency: 'XYZ' is not a currency; write an ISO 4217 code or a "
            "symbol, e.g. 'EUR', 'GBP' or '£'",
            f"  {org_yaml}: hours[1].closes: '25:00' is not a time; write e.g. '17:30' or '5:30pm'",
            f"  {org_yaml}: services[2].duration: 1.5 — not whole minutes: write minutes, e.g. "
            "'90' or '1h30'",
            f"  {org_yaml}: name: missing (required); write e.g. 'Harbour Lane Dental'",
        ]
    )
    assert not Organization.objects.exists() and not KbDocument.objects.exists()


def test_a_currency_error_comes_with_the_others_not_after_them(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["services"][0]["price"] = "£65"  # the org's currency is EUR
        data["services"][1]["price"] = "TBC"
        data["intake_fields"][0]["kind"] = "shoe-size"

    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(_folder(tmp_path, change))
    text = str(raised.value)
    assert len(raised.value.problems) == 3, text
    assert (
        "services[0].price: '£65' — this price is in GBP, but the organization's currency" in text
    )
    assert "services[1].price: 'TBC' — no amount in this price" in text
    assert "intake_fields[0].kind: 'shoe-size' — should be 'name', 'phone'" in text


def test_one_service_with_three_faults_gets_three_lines(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        service = data["services"][3]
        service.update(price="-80 €", duration="-30")
        del service["name"]

    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(_folder(tmp_path, change))
    lines = [p.text for p in raised.value.problems]
    assert lines == [
        "services[3].price: '-80 €' — a price cannot be negative; "
        "write e.g. '£52', 'from €80' or '80-120 €'",
        "services[3].duration: '-30' — a duration cannot be negative; "
        "write minutes, e.g. '90' or '1h30'",
        "services[3].name: missing (required); write e.g. 'Check-up'",
    ]


def test_kb_file_problems_come_with_the_org_yaml_ones(tmp_path: Path) -> None:
    folder = _folder(tmp_path, lambda d: d["services"][0].update(price="abc"))
    (folder / "kb" / "empty.md").write_text("  \n", "utf-8")
    (folder / "kb" / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    (folder / "kb" / "My Prices.md").write_text("# Prices\nA clean is 80 EUR.\n", "utf-8")
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder)
    by_file = {Path(p.file).name: p.text for p in raised.value.problems}
    assert by_file["empty.md"] == "empty KB document"
    assert by_file["latin1.md"].startswith("not UTF-8 text")
    assert by_file["My Prices.md"].startswith("the file name 'my prices' — use lower-case")
    assert by_file["org.yaml"].startswith("services[0].price: 'abc' — no amount in this price")
    assert len(raised.value.problems) == 4


def test_a_huge_value_is_cut_short(tmp_path: Path) -> None:
    folder = _folder(tmp_path, lambda d: d.update(name="N" * 5000, locale="L" * 5000))
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder)
    for problem in raised.value.problems:
        assert len(problem.text) < 200, problem.text
    assert "name: 'NNNNNNNNNN" in str(raised.value) and "…' — should have at most 200" in str(
        raised.value
    )


def test_a_yaml_error_still_reports_the_kb_files(tmp_path: Path) -> None:
    folder = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, folder)
    (folder / "org.yaml").write_text("slug: [unclosed\n", "utf-8")
    (folder / "kb" / "empty.md").write_text("", "utf-8")
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder)
    texts = [p.text for p in raised.value.problems]
    assert texts[0].startswith("not valid YAML") and texts[1:] == ["empty KB document"]
