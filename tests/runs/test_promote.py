"""Promote fixture (DESIGN §10): a case's fixture is written into QALAB_FIXTURES_DIR with a
header, never outside that folder, never over a file, never through a symlink; recorded."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import OperationalError
from django.utils import timezone
from pytest_django.fixtures import Settings as SettingsWrapper

from qalab.models import Organization
from qalab.orgs import sha256_text
from runs.models import PromotedFixture, Run, RunArtifact, RunCase
from runs.selectors import run_get_case
from runs.services import PromoteError, fixture_promote, promote
from tests.runs.helpers import generate_only, start_run

pytestmark = pytest.mark.django_db

SAFE_NAME = re.compile(r"^[a-z0-9-]+\.md$")


@pytest.fixture
def folder(settings: SettingsWrapper, tmp_path: Path) -> Path:
    """QALAB_FIXTURES_DIR in a temporary place, not created yet (promote creates it)."""
    path = tmp_path / "kb-fixtures"
    settings.QALAB_FIXTURES_DIR = path
    return path


@pytest.fixture
def user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="carol", password="pw-123456")


@pytest.fixture
def run(demo_org: Organization) -> Run:
    """A reported (locked) run whose booking case has findings."""
    run = start_run(demo_org, responder="canary:invent_price", seed=18)
    assert run.locked_at is not None
    return run


def _case(run: Run) -> RunCase:
    return run.cases.get(scenario_type="booking_full_intake")


def _files(tmp_path: Path) -> list[Path]:
    """Every file under tmp_path (wherever a write may have gone)."""
    return sorted(p for p in tmp_path.rglob("*") if p.is_file() or p.is_symlink())


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def _expected_name(run: Run, case: RunCase) -> str:
    sha = RunArtifact.objects.get(run=run, kind="fixture", key=case.fixture_key).sha256
    return f"demo-run{run.id}-{case.scenario_key}-{case.fixture_key}-{sha[:8]}.md"


def test_promote_writes_the_fixture_with_its_header_and_records_it(
    run: Run, folder: Path, user: Any
) -> None:
    case = _case(run)
    artifact = RunArtifact.objects.get(run=run, kind="fixture", key=case.fixture_key)
    before = timezone.now()
    result = fixture_promote(run=run, case=case, user=user)
    after = timezone.now()

    assert result.created is True
    promotion = result.promotion
    path = Path(promotion.path)
    assert list(folder.iterdir()) == [path]
    assert path.parent == folder.resolve() and path.name == _expected_name(run, case)
    assert SAFE_NAME.match(path.name)
    data = path.read_bytes()
    assert promotion.sha256 == hashlib.sha256(data).hexdigest()
    assert (promotion.organization_id, promotion.run_id) == (run.organization_id, run.id)
    assert (promotion.case_key, promotion.fixture_key) == (case.scenario_key, case.fixture_key)
    assert promotion.fixture_sha256 == artifact.sha256
    assert promotion.promoted_by == user
    assert before <= promotion.created_at <= after
    assert PromotedFixture.objects.get() == promotion

    header, body = _front_matter(data.decode("utf-8"))
    assert header["organization"] == "demo"
    assert header["run"] == run.id
    assert header["case"] == case.scenario_key
    assert header["scenario"] == "booking_full_intake"
    assert header["fixture"] == case.fixture_key
    assert header["noise_level"] == artifact.noise_level
    assert header["fixture_sha256"] == artifact.sha256
    findings = list(case.findings.order_by("position"))
    assert findings, "the canary leaves findings on the case"
    assert [f["id"] for f in header["findings"]] == [f.id for f in findings]
    assert {f["rule"] for f in header["findings"]} >= {"unsupported_facts"}
    manifest = json.loads(RunArtifact.objects.get(run=run, kind="manifest").content)
    excerpt = header["manifest_excerpt"]
    assert [s["name"] for s in excerpt["services"]] == [s["name"] for s in manifest["services"]]
    assert [p["id"] for p in excerpt["policies"]] == [p["id"] for p in manifest["policies"]]
    assert len(excerpt["hours"]) == len(manifest["hours"]) > 0
    assert len(excerpt["contacts"]) == len(manifest["contacts"]) > 0
    assert all("source" not in row for rows in excerpt.values() for row in rows)
    # The fixture documents themselves, in order, after the header.
    fixture = json.loads(artifact.content)
    positions = [
        body.index(f"# {d['title']}\n\n{d['text'].rstrip()}") for d in fixture["documents"]
    ]
    assert positions == sorted(positions)
    assert len(body.splitlines()) >= 200

    # The case view shows where it went.
    shown = run_get_case(run=run, case=case)["promotion"]
    assert shown == promotion and shown.promoted_by == user


def test_a_second_promote_returns_the_first_and_writes_nothing(
    run: Run, folder: Path, user: Any, demo_org: Organization, django_user_model: Any
) -> None:
    case = _case(run)
    first = fixture_promote(run=run, case=case, user=user)
    written = Path(first.promotion.path)
    stat = written.stat()

    again = fixture_promote(run=run, case=case, user=django_user_model.objects.create(username="d"))
    assert again.created is False
    assert again.promotion.pk == first.promotion.pk and again.promotion.promoted_by == user
    # A re-run on the same test set carries the same fixture: already promoted.
    rerun = start_run(demo_org, reuse_artifacts=run.id)
    same = fixture_promote(run=rerun, case=rerun.cases.get(scenario_key=case.scenario_key))
    assert same.created is False and same.promotion.pk == first.promotion.pk
    assert (
        run_get_case(run=rerun, case=rerun.cases.get(scenario_key=case.scenario_key))["promotion"]
        == first.promotion
    )

    assert list(folder.iterdir()) == [written]
    assert written.stat().st_mtime_ns == stat.st_mtime_ns
    assert PromotedFixture.objects.count() == 1


def test_it_never_overwrites_an_existing_file(run: Run, folder: Path) -> None:
    case = _case(run)
    folder.mkdir()
    existing = folder / _expected_name(run, case)
    existing.write_text("a reviewer's hand-edited fixture\n")
    with pytest.raises(PromoteError, match="already exists"):
        fixture_promote(run=run, case=case)
    assert existing.read_text() == "a reviewer's hand-edited fixture\n"
    assert list(folder.iterdir()) == [existing]
    assert not PromotedFixture.objects.exists()


@pytest.mark.parametrize("dangling", [False, True])
def test_it_never_writes_through_a_symlink_at_the_target_name(
    run: Run, folder: Path, tmp_path: Path, dangling: bool
) -> None:
    case = _case(run)
    folder.mkdir()
    outside = tmp_path / "outside.md"
    if not dangling:
        outside.write_text("outside\n")
    (folder / _expected_name(run, case)).symlink_to(outside)
    with pytest.raises(PromoteError, match="symlink"):
        fixture_promote(run=run, case=case)
    assert outside.exists() is not dangling
    if not dangling:
        assert outside.read_text() == "outside\n"
    assert not PromotedFixture.objects.exists()


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlinked_fixtures_folder_is_refused(
    run: Run, settings: SettingsWrapper, tmp_path: Path, dangling: bool
) -> None:
    real = tmp_path / "elsewhere"
    if not dangling:
        real.mkdir()
    link = tmp_path / "kb-fixtures"
    link.symlink_to(real, target_is_directory=True)
    settings.QALAB_FIXTURES_DIR = link
    with pytest.raises(PromoteError, match="symlink"):
        fixture_promote(run=run, case=_case(run))
    assert real.exists() is not dangling
    if not dangling:
        assert list(real.iterdir()) == []
    assert not PromotedFixture.objects.exists()


def test_a_fixtures_folder_that_is_a_file_is_refused(
    run: Run, settings: SettingsWrapper, tmp_path: Path
) -> None:
    path = tmp_path / "kb-fixtures"
    path.write_text("not a folder\n")
    settings.QALAB_FIXTURES_DIR = path
    with pytest.raises(PromoteError, match="not a plain folder"):
        fixture_promote(run=run, case=_case(run))
    assert path.read_text() == "not a folder\n"
    assert not PromotedFixture.objects.exists()


def test_a_fixtures_folder_under_a_symlinked_folder_of_the_project_is_refused(
    run: Run, settings: SettingsWrapper, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project.mkdir()
    (project / "docs").symlink_to(elsewhere, target_is_directory=True)
    settings.BASE_DIR = project
    settings.QALAB_FIXTURES_DIR = "docs/kb-fixtures"
    with pytest.raises(PromoteError, match="under a symlink"):
        fixture_promote(run=run, case=_case(run))
    assert list(elsewhere.iterdir()) == []
    assert not PromotedFixture.objects.exists()
    # A real folder in its place is fine.
    (project / "docs").unlink()
    (project / "docs").mkdir()
    assert fixture_promote(run=run, case=_case(run)).created


def test_a_nul_byte_in_the_fixtures_folder_setting_is_refused(
    run: Run, settings: SettingsWrapper, tmp_path: Path
) -> None:
    settings.QALAB_FIXTURES_DIR = str(tmp_path / "kb\x00fixtures")
    with pytest.raises(PromoteError, match="NUL"):
        fixture_promote(run=run, case=_case(run))
    assert _files(tmp_path) == [] and not PromotedFixture.objects.exists()


def test_an_unwritable_fixtures_folder_is_refused_with_a_message(
    run: Run, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def denied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(promote.os, "open", denied)
    with pytest.raises(PromoteError, match="Permission denied"):
        fixture_promote(run=run, case=_case(run))
    assert not PromotedFixture.objects.exists()


def test_a_relative_fixtures_folder_is_under_the_project(
    run: Run, settings: SettingsWrapper, tmp_path: Path
) -> None:
    settings.BASE_DIR = tmp_path
    settings.QALAB_FIXTURES_DIR = "docs/kb-fixtures"
    result = fixture_promote(run=run, case=_case(run))
    assert Path(result.promotion.path).parent == (tmp_path / "docs" / "kb-fixtures").resolve()
    assert _files(tmp_path) == [Path(result.promotion.path)]


def test_a_case_of_another_run_is_refused(run: Run, folder: Path, demo_org: Organization) -> None:
    other = generate_only(demo_org, scenarios=1, seed=3)
    with pytest.raises(PromoteError, match=f"not a case of run {run.id}"):
        fixture_promote(run=run, case=other.cases.get())
    assert not folder.exists() or list(folder.iterdir()) == []
    assert not PromotedFixture.objects.exists()


def test_a_case_without_its_fixture_is_refused(demo_org: Organization, folder: Path) -> None:
    run = generate_only(demo_org, scenarios=1)
    case = run.cases.get()
    RunArtifact.objects.filter(run=run, kind="fixture").delete()
    with pytest.raises(PromoteError, match="has no fixture"):
        fixture_promote(run=run, case=case)
    assert not PromotedFixture.objects.exists()


# --------------------------------------------------------------------------- hostile fixtures

HOSTILE = [
    "../../etc/passwd",
    "/etc/passwd",
    "..",
    "fx/../../../../tmp/evil",
    "..\\..\\windows\\win.ini",
    "~/.bashrc",
    "CON.md",
    "ünï/cødé",
]


def _make_hostile(run: Run, *, key: str, title: str, scenario_key: str | None = None) -> RunCase:
    """Rewrite the (unlocked) run's first fixture: its key, the case pointing at it and the
    titles of its documents; the artifact's hash follows its new content."""
    case = run.cases.order_by("scenario_key").first()
    assert case is not None and run.locked_at is None
    artifact = RunArtifact.objects.get(run=run, kind="fixture", key=case.fixture_key)
    fixture = json.loads(artifact.content)
    fixture["key"] = key
    for doc in fixture["documents"]:
        doc["title"] = title
        doc["id"] = title
    content = json.dumps(fixture)
    artifact.key = key[:100]
    artifact.content = content
    artifact.sha256 = sha256_text(content)
    artifact.save()
    case.fixture_key = key[:50]
    if scenario_key is not None:
        case.scenario_key = scenario_key[:50]
    case.save()
    return case


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_fixture_keys_and_titles_stay_inside_the_folder(
    demo_org: Organization, folder: Path, tmp_path: Path, hostile: str
) -> None:
    run = generate_only(demo_org, scenarios=1)
    case = _make_hostile(run, key=hostile, title=hostile, scenario_key=hostile)
    result = fixture_promote(run=run, case=case)

    written = Path(result.promotion.path)
    assert _files(tmp_path) == [written]
    assert written.resolve().parent == folder.resolve()
    assert SAFE_NAME.match(written.name), written.name
    assert result.promotion.fixture_key == case.fixture_key
    assert not Path("/etc/passwd").read_text().startswith("---\n")
    header, body = _front_matter(written.read_text())
    assert header["fixture"] == hostile and header["case"] == hostile
    assert f"# {hostile}\n" in body
    assert hashlib.sha256(written.read_bytes()).hexdigest() == result.promotion.sha256


@pytest.mark.parametrize(
    ("key", "title", "refused"),
    [
        # A NUL in the key reaches only the YAML header, which escapes it ("\0"): written.
        ("fx-\x00-01", "Prices", False),
        # A NUL in a document title would land raw in the file body: refused, nothing written.
        ("fx-01", "Prices\x00../../etc/passwd", True),
        ("fx-01", "\x00", True),
    ],
)
def test_nul_bytes_in_a_fixture_never_reach_a_file_name(
    demo_org: Organization, folder: Path, tmp_path: Path, key: str, title: str, refused: bool
) -> None:
    run = generate_only(demo_org, scenarios=1)
    # Postgres text columns cannot hold NUL: the key lives in the fixture's JSON content only.
    case = _make_hostile(run, key=key.replace("\x00", "0"), title=title)
    artifact = RunArtifact.objects.get(run=run, kind="fixture", key=case.fixture_key)
    fixture = json.loads(artifact.content)
    fixture["key"] = key
    artifact.content = json.dumps(fixture)
    artifact.sha256 = sha256_text(artifact.content)
    artifact.save()
    if refused:
        with pytest.raises(PromoteError, match="NUL"):
            fixture_promote(run=run, case=case)
        assert _files(tmp_path) == []
        assert not PromotedFixture.objects.exists()
        return
    result = fixture_promote(run=run, case=case)
    written = Path(result.promotion.path)
    assert _files(tmp_path) == [written] and SAFE_NAME.match(written.name)
    assert b"\x00" not in written.read_bytes()
    assert _front_matter(written.read_text())[0]["fixture"] == key


def test_a_promotion_that_cannot_be_recorded_leaves_no_file_behind(
    run: Run, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(run)

    def lost(**kwargs: Any) -> PromotedFixture:
        raise OperationalError("server closed the connection unexpectedly")

    with monkeypatch.context() as patch:
        patch.setattr(PromotedFixture.objects, "create", lost)
        with pytest.raises(OperationalError):
            fixture_promote(run=run, case=case)
    assert list(folder.iterdir()) == []
    # Nothing blocks the retry (the file name is free again).
    result = fixture_promote(run=run, case=case)
    assert result.created is True and list(folder.iterdir()) == [Path(result.promotion.path)]


def test_a_concurrent_promote_of_the_same_fixture_keeps_theirs(
    run: Run, folder: Path, monkeypatch: pytest.MonkeyPatch, django_user_model: Any
) -> None:
    case = _case(run)
    artifact = RunArtifact.objects.get(run=run, kind="fixture", key=case.fixture_key)
    other = django_user_model.objects.create(username="quick")
    real = promote._promote_content

    def meanwhile(*args: Any) -> str:
        content = real(*args)
        PromotedFixture.objects.create(
            organization_id=run.organization_id,
            run=run,
            case_key=case.scenario_key,
            fixture_key=case.fixture_key,
            fixture_sha256=artifact.sha256,
            path=str(folder / "theirs.md"),
            sha256="0" * 64,
            promoted_by=other,
        )
        return content

    monkeypatch.setattr(promote, "_promote_content", meanwhile)
    result = fixture_promote(run=run, case=case)
    assert result.created is False and result.promotion.promoted_by == other
    assert list(folder.iterdir()) == []  # our copy was removed again
    assert PromotedFixture.objects.count() == 1
