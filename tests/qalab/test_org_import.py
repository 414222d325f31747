"""Importing org folders: valid ones land whole, broken ones name the file and field and land nothing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from qalab.models import IntakeField, KbDocument, Organization, Policy, Service
from qalab.org_folder import DEMO_ORG_DIR, OrgFolderError, load_org_folder

pytestmark = pytest.mark.django_db


def _copy_demo(tmp_path: Path) -> Path:
    target = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, target)
    return target


def _edit(folder: Path, change) -> None:
    data = yaml.safe_load((folder / "org.yaml").read_text())
    change(data)
    (folder / "org.yaml").write_text(yaml.safe_dump(data))


def test_it_seeds_a_realistic_demo_org():
    call_command("qalab_seed_demo")
    org = Organization.objects.get(slug="demo")
    assert org.services.count() >= 6
    assert all(s.price > 0 for s in org.services.all())
    assert len(org.hours) >= 1
    assert org.intake_fields.count() >= 4
    assert org.policies.count() >= 5
    assert org.policies.filter(critical=True).count() >= 2
    assert org.kb_documents.count() >= 3


def test_it_reimports_idempotently():
    call_command("qalab_seed_demo")
    call_command("qalab_seed_demo")
    assert Organization.objects.count() == 1
    assert Service.objects.count() == len(load_org_folder(DEMO_ORG_DIR).services)


def test_it_rejects_a_missing_required_field_and_changes_nothing(tmp_path):
    call_command("qalab_seed_demo")
    before = (Organization.objects.count(), Service.objects.count(), KbDocument.objects.count())
    folder = _copy_demo(tmp_path)
    _edit(folder, lambda d: (d.update(slug="other"), d["services"][1].pop("price")))
    with pytest.raises(CommandError) as exc:
        call_command("qalab_import_org", str(folder))
    message = str(exc.value)
    assert "org.yaml" in message
    assert "org.yaml: services[1].price: missing (required)" in message
    assert (
        Organization.objects.count(),
        Service.objects.count(),
        KbDocument.objects.count(),
    ) == before
    assert not Organization.objects.filter(slug="other").exists()


def test_it_exits_non_zero_from_the_command_line(tmp_path):
    import subprocess
    import sys

    folder = _copy_demo(tmp_path)
    _edit(folder, lambda d: d.pop("name"))
    proc = subprocess.run(
        [sys.executable, "manage.py", "qalab_import_org", str(folder)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        env={"PATH": "/usr/bin:/bin", "QALAB_VAR_DIR": str(tmp_path / "var")},
        check=False,
    )
    assert proc.returncode == 2
    assert "org.yaml: name: missing (required)" in proc.stderr


def test_it_keeps_the_existing_org_when_an_update_is_invalid(tmp_path):
    call_command("qalab_seed_demo")
    folder = _copy_demo(tmp_path)
    _edit(folder, lambda d: d["intake_fields"][0].update(kind="shoe-size"))
    with pytest.raises(CommandError, match=r"intake_fields\[0\]\.kind: 'shoe-size' — should be"):
        call_command("qalab_import_org", str(folder))
    assert IntakeField.objects.filter(organization__slug="demo").count() == 6
    assert Policy.objects.filter(organization__slug="demo").count() == 6


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda f: (f / "org.yaml").write_text("slug: [unclosed"), "not valid YAML"),
        (lambda f: (f / "org.yaml").unlink(), "missing"),
        (lambda f: (f / "kb" / "empty.md").write_text("  \n"), "empty KB document"),
        (lambda f: (f / "org.yaml").write_text("- a list\n"), "must be a mapping"),
    ],
)
def test_it_names_the_broken_file(tmp_path, mutate, expected):
    folder = _copy_demo(tmp_path)
    mutate(folder)
    with pytest.raises(OrgFolderError, match=expected):
        load_org_folder(folder)


def test_it_rejects_a_bad_opening_time(tmp_path):
    folder = _copy_demo(tmp_path)
    _edit(folder, lambda d: d["hours"][0].update(opens="8pm-ish"))
    with pytest.raises(OrgFolderError) as exc:
        load_org_folder(folder)
    assert str(exc.value) == (
        f"{folder / 'org.yaml'}: hours[0].opens: '8pm-ish' is not a time; "
        "write e.g. '17:30' or '5:30pm'"
    )


def test_it_refuses_to_replace_an_existing_org_unless_asked(tmp_path):
    call_command("qalab_seed_demo")
    folder = _copy_demo(tmp_path)
    _edit(folder, lambda d: d.update(name="Someone Else's Clinic"))
    with pytest.raises(CommandError, match=r"exists already.*--replace"):
        call_command("qalab_import_org", str(folder))
    assert Organization.objects.get(slug="demo").name != "Someone Else's Clinic"
    call_command("qalab_import_org", str(folder), "--replace")
    assert Organization.objects.get(slug="demo").name == "Someone Else's Clinic"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(name="N" * 201), "name"),
        (lambda d: d.update(slug="s" * 51), "slug"),
        (lambda d: d["services"][0].update(price=10**9), "services[0].price: 1000000000 — "),
        (lambda d: d["services"][0].update(duration=10**7), "services[0].duration: 10000000 — "),
        (lambda d: d["intake_fields"][0].update(label="L" * 201), "intake_fields[0].label: 'LLL"),
    ],
)
def test_a_value_too_big_for_the_tables_is_an_error_naming_the_field(tmp_path, mutate, field):
    folder = _copy_demo(tmp_path)
    _edit(folder, mutate)
    with pytest.raises(CommandError, match=re.escape(field)):
        call_command("qalab_import_org", str(folder))
    assert not Organization.objects.exists()


def test_a_symlink_in_the_kb_folder_is_refused(tmp_path):
    folder = _copy_demo(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\nroot:x:0:0\n")
    (folder / "kb" / "passwd.md").symlink_to(secret)
    with pytest.raises(CommandError, match="symbolic link"):
        call_command("qalab_import_org", str(folder))
    assert not Organization.objects.exists()
