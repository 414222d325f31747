"""`manage.py qalab_train_heads --from-triage ORG [--min-labels N] [--dry-run] [--reset]`.

Opt-in: re-fits the semantic layer's **confirm** thresholds for one organization on its
reviewers' labels (issue 36, point 5). In a run every case has a knowledge base, so a finding of
`self_contradiction`, `ignored_question` or `irrelevant_reply` is its check's, kept only when
the rule's head scores it at or above the confirm threshold; the kept finding's confidence is
that score. The labels (`runs.accuracy.triage_labels`: decisions made by hand on real bots'
runs) of such findings - from runs judged with the semantic layer, on cases where it ran, not
the head-alone findings of a case without a KB - give, per rule, scores and right / wrong; the
threshold is picked by `judge.semantic.fit.refit_confirm` (the rule the shipped thresholds were
picked by: the lowest reaching precision 0.85 with 10 findings kept, else the best F0.5),
never below the threshold the findings were judged with (nobody labelled a finding the head
scored lower: the labels can raise a threshold, not lower it).

A rule with fewer than `--min-labels` (default 20) labels is not re-fitted (and the command
fails when no rule has enough). A re-fitted threshold is stored in `OrgJudgeThreshold` with its
provenance (labels, right, precision and recall at it, the floor, the runs used, when, the
command and the user); the organization's next runs snapshot it (`config.semantic.
confirm_thresholds`, `config.semantic.org_thresholds`), judge with it, and their delta names
`semantic.confirm_thresholds.<rule>`. Other organizations' runs never read it. `--dry-run`
prints the fit without storing it; `--reset` deletes the organization's re-fitted thresholds
(its next runs judge with the defaults again).
"""

from __future__ import annotations

import getpass
from collections import defaultdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from judge.semantic.fit import refit_confirm
from judge.semantic.thresholds import SEMANTIC_RULES, confirm_threshold
from qalab.database import require_migrated
from qalab.models import Organization
from runs.accuracy import triage_labels
from runs.models import OrgJudgeThreshold, Run, RunFinding

MIN_LABELS = 20


def semantic_labels(
    organization: Organization,
) -> dict[str, list[tuple[float, bool, int, float]]]:
    """Per semantic rule, each label of a finding its head confirmed: (score, right, run id,
    the confirm threshold the run judged with)."""
    labels = [label for label in triage_labels(organization) if label.rule_id in SEMANTIC_RULES]
    findings = RunFinding.objects.filter(id__in=[label.finding_id for label in labels])
    found = {f.id: f for f in findings.select_related("case")}
    runs = {r.id: r for r in Run.objects.filter(id__in={label.run_id for label in labels})}
    out: dict[str, list[tuple[float, bool, int, float]]] = defaultdict(list)
    for label in labels:
        finding = found[label.finding_id]
        semantic = runs[label.run_id].config.get("semantic") or {}
        if (
            not semantic.get("on")
            or finding.turn_index is None
            or finding.detector.startswith("semantic:")  # the head alone (no KB): not confirmed
            or finding.case is None
            or "semantic" in (finding.case.skipped_checks or [])  # the deadline skipped it
        ):
            continue
        floor = confirm_threshold(label.rule_id, semantic.get("confirm_thresholds"))
        out[label.rule_id].append((finding.confidence, label.right, label.run_id, floor))
    return out


class Command(BaseCommand):
    help = (
        "Re-fit the semantic layer's confirm thresholds for one organization on its reviewers' "
        "triage labels (opt-in), stored with provenance and used by its next runs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from-triage", metavar="ORG", required=True, help="org slug")
        parser.add_argument(
            "--min-labels",
            type=int,
            default=MIN_LABELS,
            metavar="N",
            help=f"labels a rule needs to be re-fitted (default {MIN_LABELS})",
        )
        parser.add_argument("--dry-run", action="store_true", help="fit and print, store nothing")
        parser.add_argument(
            "--reset", action="store_true", help="delete the organization's re-fitted thresholds"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        require_migrated()
        slug = opts["from_triage"]
        organization = Organization.objects.filter(slug=slug).first()
        if organization is None:
            raise CommandError(f"no organization with slug {slug!r}", returncode=2)
        if opts["min_labels"] < 10:
            raise CommandError("--min-labels must be at least 10", returncode=2)
        if opts["reset"]:
            deleted, _ = OrgJudgeThreshold.objects.filter(organization=organization).delete()
            self.stdout.write(
                f"{slug}: {deleted} re-fitted threshold(s) deleted; its next runs judge with "
                "the default confirm thresholds"
            )
            return
        by_rule = semantic_labels(organization)
        fitted: dict[str, dict[str, Any]] = {}
        short: list[str] = []
        for rule in SEMANTIC_RULES:
            rows = by_rule.get(rule, [])
            if len(rows) < opts["min_labels"]:
                short.append(f"{rule} {len(rows)}")
                continue
            scores = [r[0] for r in rows]
            right = [r[1] for r in rows]
            fitted[rule] = {
                **refit_confirm(scores, right, floor=max(r[3] for r in rows)),
                "labels": len(rows),
                "right": sum(right),
                "runs": sorted({r[2] for r in rows}),
            }
        for name in short:
            self.stdout.write(
                f"{name} label(s) of findings the head confirmed: too few to re-fit (at least "
                f"{opts['min_labels']}); the threshold is left as it is"
            )
        if not fitted:
            raise CommandError(
                f"{slug}: too few labels to re-fit any semantic threshold ({', '.join(short)}; "
                f"at least {opts['min_labels']} each): triage more findings of these rules",
                returncode=1,
            )
        command = f"qalab_train_heads --from-triage {slug}"
        for rule, fit in fitted.items():
            self.stdout.write(
                f"{rule}: confirm threshold {fit['threshold']} ({fit['picked_by']}; "
                f"{fit['labels']} labels, {fit['right']} right; at it {fit['kept']} kept, "
                f"precision {fit['precision']}, recall {fit['recall']}; floor {fit['floor']})"
            )
            if opts["dry_run"]:
                continue
            provenance = {
                **{k: v for k, v in fit.items() if k != "threshold"},
                "fitted_at": timezone.now().isoformat(timespec="seconds"),
                "command": command,
                "user": _user(),
            }
            OrgJudgeThreshold.objects.update_or_create(
                organization=organization,
                rule_id=rule,
                defaults={"threshold": fit["threshold"], "provenance": provenance},
            )
        self.stdout.write(
            "dry run: nothing stored"
            if opts["dry_run"]
            else f"stored for {slug}: its next runs judge with these (another org's never do)"
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""
