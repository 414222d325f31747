"""`manage.py qalab_judge --dialogues FILE.jsonl [--org SLUG] [--json PATH]`.

Judges transcripts from a file without running anything (see `judge.dialogues`). Each line:
`{"id", "kb": [{"id", "title", "text"}] (optional), "turns": [{"role": "customer"|"bot",
"text"}]}`; other keys (labels, notes) are ignored. Output: `{"dialogues": [{"id",
"findings": [{"rule", "severity", "turn", "evidence", ...}], "skipped_checks": [...]}]}`, where
`turn` is the 0-based index into `turns` of the bot message concerned. Without `--org`, the
checks that need the org's ground truth are skipped (and listed); checks that need a scenario
(persona facts, expected status) always are, and KB checks are skipped for a dialogue with no
KB (with `--org`, the org's KB documents stand in). A dialogue's `skipped_checks` are the checks
that did not run on it: those, and any the judging deadline (QALAB_JUDGE_DEADLINE_S) left.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError

from generator.manifest import build_manifest
from generator.schemas import FixtureDocument, Manifest
from judge.dialogues import Dialogue, judge_dialogue
from judge.engine import judge_layers
from qalab.database import require_migrated
from qalab.models import Organization
from qalab.orgs import organization_get_context
from runs.services.case_judging import file_judge_config


def read_dialogues(path: Path) -> list[Dialogue]:
    """The dialogues of a JSONL file; CommandError naming the line and field of a bad one."""
    if not path.is_file():
        raise CommandError(f"{path}: no such file", returncode=2)
    dialogues: list[Dialogue] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                dialogue = Dialogue.model_validate_json(line)
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(str(p) for p in error["loc"]) or "line"
                raise CommandError(
                    f"{path}:{number}: {where}: {error['msg']}", returncode=2
                ) from None
            if dialogue.id in seen:
                raise CommandError(f"{path}:{number}: duplicate id {dialogue.id!r}", returncode=2)
            seen.add(dialogue.id)
            dialogues.append(dialogue)
    if not dialogues:
        raise CommandError(f"{path}: no dialogues", returncode=2)
    return dialogues


def _org(slug: str) -> tuple[Manifest, list[FixtureDocument]]:
    organization = Organization.objects.filter(slug=slug).first()
    if organization is None:
        raise CommandError(
            f"no organization with slug {slug!r}: import one with qalab_import_org", returncode=2
        )
    context = organization_get_context(organization=organization)
    kb = [FixtureDocument(id=d.slug, title=d.title, text=d.text) for d in context.kb]
    return build_manifest(context), kb


def skipped_summary(results: list[dict[str, Any]]) -> str:
    """'; skipped checks: ...': the checks no dialogue ran, then each check some dialogues ran,
    with how many and which did not (a check that found something on a dialogue ran there)."""
    by_check: dict[str, list[str]] = {}
    for result in results:
        for check in result["skipped_checks"]:
            by_check.setdefault(check, []).append(result["id"])
    everywhere = [c for c, ids in by_check.items() if len(ids) == len(results)]
    parts = []
    if everywhere:
        parts.append(", ".join(everywhere) + (" on every dialogue" if len(results) > 1 else ""))
    for check, ids in by_check.items():
        if len(ids) < len(results):
            named = ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
            parts.append(f"{check} on {len(ids)} of {len(results)} ({named})")
    return f"; skipped checks: {'; '.join(parts)}" if parts else ""


class Command(BaseCommand):
    help = "Judge transcripts from a JSONL file without running anything."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dialogues", required=True, metavar="FILE.jsonl")
        parser.add_argument("--org", metavar="SLUG", help="judge against this org's ground truth")
        parser.add_argument("--json", dest="json_path", metavar="PATH", help="write the findings")

    def handle(self, *args: Any, **opts: Any) -> None:
        dialogues = read_dialogues(Path(opts["dialogues"]))
        if opts["org"]:
            require_migrated()  # a file alone needs no database
        manifest, org_kb = _org(opts["org"]) if opts["org"] else (None, [])
        config = file_judge_config()
        results: list[dict[str, Any]] = []
        for dialogue in dialogues:
            judgement = judge_dialogue(dialogue, manifest, org_kb=org_kb, config=config)
            results.append(judgement.model_dump())
            rules = ", ".join(f"{f.rule}@{f.turn}" for f in judgement.findings) or "no findings"
            self.stdout.write(f"{dialogue.id}: {rules}")
        total = sum(len(r["findings"]) for r in results)
        self.stdout.write(
            f"{len(results)} dialogue(s), {total} finding(s); judge layers: "
            f"{', '.join(judge_layers(semantic=config.semantic, llm=False))}"
            + skipped_summary(results)
        )
        if opts["json_path"]:
            payload = {
                "org": opts["org"],
                "judge_layers": judge_layers(semantic=config.semantic, llm=False),
                "dialogues": results,
            }
            Path(opts["json_path"]).write_text(json.dumps(payload, indent=2), "utf-8")
