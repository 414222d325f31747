"""Property (issue 32, point 4): over every transcript in tests/data, no finding quotes words
its transcript or KB does not hold, and no subject is missing from its evidence.

Every natural JSONL set (tests/data/natural/**, subfolders included), the claim sets and the
frozen reference runs are judged as `qalab_judge` and the judge stage judge them. The property
is checked on what the checks say (before the evidence check, which would hide a failure by
dropping it) and on the merged findings a report shows. To stay well under a minute, each file
is read whole but only every other dialogue is judged, and a dialogue another file already holds
(the claim sets copy natural ones) once: a fixed choice, the same ones every run; every file is
covered.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.schemas import Manifest
from judge.checks.base import Need
from judge.dialogues import Dialogue, available_context, empty_manifest, to_case
from judge.engine import EVERYTHING, judge_case, raw_findings
from judge.evidence import Sources, unverified
from judge.schemas import CaseTranscript, JudgeConfig

DATA = Path(__file__).resolve().parents[1] / "data"
DIALOGUE_CONFIG = JudgeConfig(strictness=0.5, min_score_to_pass=0.7)
STRIDE = 2  # judge every other dialogue of each file

Item = tuple[str, CaseTranscript, Manifest, JudgeConfig, frozenset[Need]]


def _dialogue_files() -> list[Path]:
    return sorted(DATA.rglob("*.jsonl"))


def _frozen_files() -> list[Path]:
    return sorted((DATA / "frozen").glob("*.json"))


@functools.cache
def _plan() -> dict[Path, list[int]]:
    """Which lines of each JSONL file are judged: every STRIDE-th dialogue not already in an
    earlier file (the claim sets copy natural dialogues), and at least one per file."""
    seen: set[str] = set()
    plan: dict[Path, list[int]] = {}
    for path in _dialogue_files():
        lines = path.read_text("utf-8").splitlines()
        fresh: list[int] = []
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            data = json.loads(line)
            content = json.dumps([data.get("kb", []), data["turns"]], sort_keys=True)
            if content not in seen:
                seen.add(content)
                fresh.append(n)
        plan[path] = fresh[::STRIDE] or [n for n, line in enumerate(lines) if line.strip()][:1]
    return plan


def _items(path: Path) -> Iterator[Item]:
    if path.suffix == ".jsonl":
        lines = path.read_text("utf-8").splitlines()
        for n in _plan()[path]:
            dialogue = Dialogue.model_validate_json(lines[n])
            case, _ = to_case(dialogue)
            available = available_context(dialogue, org=False, org_kb=False)
            yield dialogue.id, case, empty_manifest(dialogue), DIALOGUE_CONFIG, available
        return
    data = json.loads(path.read_text("utf-8"))
    manifest = Manifest.model_validate(data["manifest"])
    config = JudgeConfig(**data["config"])
    for n, raw in enumerate(data["cases"]):
        if n % STRIDE == 0:
            yield raw["case_key"], CaseTranscript.model_validate(raw), manifest, config, EVERYTHING


def test_the_property_covers_every_transcript_file():
    files = _dialogue_files()
    assert any(p.parent.name == "natural" for p in files)
    assert any(p.parent.parent.name == "natural" for p in files), "a natural subfolder"
    assert _frozen_files()


@pytest.mark.parametrize(
    "path",
    [*_dialogue_files(), *_frozen_files()],
    ids=lambda p: str(p.relative_to(DATA)),
)
def test_no_finding_quotes_what_its_transcript_or_kb_does_not_hold(path):
    failures: list[str] = []
    judged = 0
    for key, case, manifest, config, available in _items(path):
        judged += 1
        sources = Sources(case, manifest)
        raw = raw_findings(case, manifest, config, available=available)
        for finding in raw:
            if why := unverified(finding, sources):
                failures.append(f"{key} {finding.rule_id} (as the check said it): {why}")
        judgement = judge_case(case, manifest, config=config, available=available, raw=raw)
        assert judgement.unsupported_by_rule == {} or failures
        for finding in judgement.findings:
            if why := unverified(finding, sources):
                failures.append(f"{key} {finding.rule_id} (as reported): {why}")
    assert judged, f"{path}: nothing judged"
    assert failures == []
