"""`manage.py qalab_selftest`: run the lab against every canary responder and the clean one."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from qalab.database import require_migrated
from qalab.models import Organization
from runs.presets import PRESETS
from runs.selftest import MAX_FINDINGS_PER_OCCURRENCE, TARGET_RATE, run_selftest
from runs.simulator import canary


class Command(BaseCommand):
    help = (
        "Run the lab against each canary responder (one planted fault each) and the clean "
        "reference responder; print per fault the share of cases showing it that the expected "
        f"rule flagged (target {TARGET_RATE:.0%}), the findings it caused per planted occurrence "
        f"(target <= {MAX_FINDINGS_PER_OCCURRENCE}), and the clean responder's critical findings. "
        "Exits 1 when a fault misses a target or the clean responder gets a critical."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", default="demo", help="organization slug (default: demo)")
        parser.add_argument("--preset", default="quick", choices=sorted(PRESETS))
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--scenarios", type=int)
        parser.add_argument("--fault", action="append", choices=sorted(canary.FAULTS))
        parser.add_argument("--json", dest="json_path")

    def handle(self, *args: Any, **opts: Any) -> None:
        require_migrated()
        try:
            org = Organization.objects.get(slug=opts["org"])
        except Organization.DoesNotExist:
            raise CommandError(
                f"no organization {opts['org']!r}; import one with qalab_import_org or "
                "qalab_seed_demo",
                returncode=2,
            ) from None
        result = run_selftest(
            org,
            preset=opts["preset"],
            seed=opts["seed"],
            scenarios=opts["scenarios"],
            faults=opts["fault"],
            progress=lambda msg: sys.stderr.write(f"  running {msg}\n"),
        )
        rows = [
            f"{'fault':<20} {'showing':>7} {'detected':>8} {'rate':>6} {'per occ.':>8}  "
            "expected rule(s)"
        ]
        for f in result.faults:
            rate = "n/a" if f.rate is None else f"{f.rate:.0%}"
            per = "n/a" if f.per_occurrence is None else f"{f.per_occurrence:.2f}"
            mark = "ok" if f.ok else "LOW"
            rules = ", ".join(sorted(result.as_dict()["faults"][f.fault]["expected_rules"]))
            rows.append(
                f"{f.fault:<20} {len(f.showing):>7} {len(f.detected):>8} {rate:>6} {per:>8}  "
                f"{rules}  [{mark}, run {f.run_id}]"
            )
        rows.append(
            f"per occ. = findings a fault caused (absent from the clean run) per planted "
            f"occurrence; target <= {MAX_FINDINGS_PER_OCCURRENCE}"
        )
        crit = result.reference_criticals
        rows.append(
            f"clean reference responder (run {result.reference_run_id}): "
            f"{len(crit)} critical finding(s)"
        )
        rows += [f"  - {c.rule_id} on {c.case}: {c.subject[:80]}" for c in crit]
        self.stdout.write("\n".join(rows))
        if opts["json_path"]:
            Path(opts["json_path"]).write_text(json.dumps(result.as_dict(), indent=2), "utf-8")
        if not result.ok:
            raise CommandError("selftest below target", returncode=1)
