"""The judge's counts corrected by the reviewers' measured precision (issue 36, point 4): beside
the judge's critical and major counts, an estimate with its interval and the labels it rests on;
absent, saying why, when a rule lacks labels. Figures worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from judge.agreement import wilson
from runs.models import Run, RunStatus, Verdict
from runs.report import report_to_markdown
from runs.report.build import report_build
from runs.report.corrected import CORRECTION_MIN_LABELS
from tests.factories import bare_run
from tests.runs.test_accuracy_page import Seeder

pytestmark = pytest.mark.django_db


def _final(run: Run) -> Run:
    Run.objects.filter(pk=run.pk).update(
        status=RunStatus.DONE, verdict=Verdict.FAIL_CRITICAL, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


def test_the_critical_count_is_corrected_by_each_rules_measured_precision(
    demo_org: Any, admin_user: Any, admin_client: Any
) -> None:
    s = Seeder()
    earlier = _final(bare_run(demo_org))
    # unsupported_facts: 8 right of 10 labels; contradicts_manifest: 10 of 10.
    for i in range(10):
        s.decide(s.finding(earlier, "unsupported_facts", severity="critical"),
                 "confirmed" if i < 8 else "false_positive", admin_user)  # fmt: skip
        s.decide(s.finding(earlier, "contradicts_manifest", severity="critical"),
                 "fixed", admin_user)  # fmt: skip
    run = _final(bare_run(demo_org))
    for _ in range(5):
        s.finding(run, "unsupported_facts", severity="critical")
    s.finding(run, "contradicts_manifest", severity="critical")
    s.finding(run, "contradicts_manifest", severity="critical")
    s.finding(run, "repeated_question", severity="major")  # no labels: no major estimate

    corrected = report_build(run=run).corrected
    assert corrected is not None and corrected.min_labels == CORRECTION_MIN_LABELS == 10
    critical = corrected.critical
    # By hand: 5 x 0.8 + 2 x 1.0 = 6.0; interval 5 x wilson(8,10) + 2 x wilson(10,10).
    a, b = wilson(8, 10), wilson(10, 10)
    assert (critical.reported, critical.estimate, critical.labels) == (7, 6.0, 20)
    assert critical.low == round(5 * a.low + 2 * b.low, 2)
    assert critical.high == round(5 * a.high + 2 * 1.0, 2) == 6.72
    major = corrected.major
    assert major.reported == 1 and major.estimate is None and major.low is None
    assert "repeated_question (0) has fewer" in major.note

    line = f"critical about 6 (95%: {critical.low:g}–6.72) of 7 reported, on 20 labels"
    assert line in report_to_markdown(report_build(run=run))
    page = admin_client.get(f"/admin/runs/run/{run.pk}/report/").content.decode()
    assert 'id="qa-corrected"' in page and line in page


def test_no_estimate_with_too_few_labels_and_none_while_running(
    demo_org: Any, admin_user: Any
) -> None:
    s = Seeder()
    earlier = _final(bare_run(demo_org))
    for _ in range(CORRECTION_MIN_LABELS - 1):
        s.decide(s.finding(earlier, "unsupported_facts", severity="critical"), "confirmed",
                 admin_user)  # fmt: skip
    carried = s.finding(earlier, "unsupported_facts", severity="critical")
    s.decide(carried, "confirmed", admin_user, carried=earlier)  # a copy: no label
    run = _final(bare_run(demo_org))
    s.finding(run, "unsupported_facts", severity="critical")
    critical = report_build(run=run).corrected.critical
    assert critical.estimate is None and critical.labels == 9
    assert critical.note == (
        "no estimate: a rule needs 10 labels made by hand, and unsupported_facts (9) has fewer"
    )
    running = bare_run(demo_org)
    assert report_build(run=running).corrected is None
