"""An org folder with only the required fields (no kb/) imports and gets a working Quick run."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from qalab.models import Organization
from tests.runs.helpers import qalab_run

pytestmark = pytest.mark.django_db

MINIMAL_ORG_DIR = Path(__file__).resolve().parents[1] / "data" / "orgs" / "szprycha"


def test_a_minimal_org_folder_imports_and_a_quick_run_ends_with_a_verdict(tmp_path: Path) -> None:
    assert not (MINIMAL_ORG_DIR / "kb").exists()
    call_command("qalab_import_org", str(MINIMAL_ORG_DIR))
    org = Organization.objects.get(slug="szprycha")
    assert org.kb_documents.count() == 0

    code, report = qalab_run(
        "--org", "szprycha", "--preset", "quick", "--inline", "--scenarios", "2", "--seed", "5",
        "--md", str(tmp_path / "report.md"),
        tmp_path=tmp_path,
    )  # fmt: skip

    assert code in (0, 1), report.get("error")
    assert report["verdict"] in ("PASS_CLEAN", "PASS_WITH_FINDINGS", "FAIL_CRITICAL")
    assert len(report["cases"]) == 2
    assert all(case["turns"] for case in report["cases"])
    assert (tmp_path / "report.md").read_text(encoding="utf-8").startswith("# AI QA Lab report")
