"""A run's artifact rows and the typed documents they hold: the one place they are converted.

Each row is one JSON document of an `ArtifactKind` under a key: a fixture per fixture key, one
manifest, a blueprint per scenario, an LLM review and the deterministic checks' findings per
case. Readers get pydantic models, writers
give them; nobody else parses an artifact's content.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from generator.schemas import Artifacts, Blueprint, Fixture, Manifest
from judge.engine import CheckedCase
from judge.llm_judge import ReviewResult
from judge.schemas import Finding
from qalab.domain import ArtifactKind
from qalab.orgs import sha256_text
from runs.models import Run, RunArtifact

MANIFEST_KEY = "manifest"


def _content(run_id: int, kind: ArtifactKind, key: str) -> str:
    return RunArtifact.objects.values_list("content", flat=True).get(
        run_id=run_id, kind=kind, key=key
    )


def load_blueprint(run_id: int, key: str) -> Blueprint:
    return Blueprint.model_validate_json(_content(run_id, ArtifactKind.BLUEPRINT, key))


def load_fixture(run_id: int, key: str) -> Fixture:
    return Fixture.model_validate_json(_content(run_id, ArtifactKind.FIXTURE, key))


def load_manifest(run_id: int) -> Manifest:
    return Manifest.model_validate_json(_content(run_id, ArtifactKind.MANIFEST, MANIFEST_KEY))


def fixture_of(row: RunArtifact) -> Fixture:
    """The fixture a row already read holds (a row of kind `fixture`)."""
    if row.kind != ArtifactKind.FIXTURE:
        raise ValueError(f"artifact {row} is not a fixture")
    return Fixture.model_validate_json(row.content)


def blueprint_of(row: RunArtifact) -> Blueprint:
    """The blueprint a row already read holds (a row of kind `blueprint`)."""
    if row.kind != ArtifactKind.BLUEPRINT:
        raise ValueError(f"artifact {row} is not a blueprint")
    return Blueprint.model_validate_json(row.content)


def manifest_of(row: RunArtifact) -> Manifest:
    """The manifest a row already read holds (the row of kind `manifest`)."""
    if row.kind != ArtifactKind.MANIFEST:
        raise ValueError(f"artifact {row} is not a manifest")
    return Manifest.model_validate_json(row.content)


def store_test_set(run: Run, artifacts: Artifacts) -> list[RunArtifact]:
    """Write a run's generated fixtures, manifest and blueprints as its artifact rows."""
    rows = []
    for fixture in artifacts.fixtures:
        content = fixture.model_dump_json()
        rows.append(
            RunArtifact(
                run=run,
                kind=ArtifactKind.FIXTURE,
                key=fixture.key,
                content=content,
                sha256=sha256_text(content),
                noise_level=fixture.noise_level,
                metrics={**fixture.metrics, "line_count": fixture.line_count},
            )
        )
    manifest = artifacts.manifest.model_dump_json()
    rows.append(
        RunArtifact(
            run=run,
            kind=ArtifactKind.MANIFEST,
            key=MANIFEST_KEY,
            content=manifest,
            sha256=sha256_text(manifest),
        )
    )
    for blueprint in artifacts.blueprints:
        content = blueprint.model_dump_json()
        rows.append(
            RunArtifact(
                run=run,
                kind=ArtifactKind.BLUEPRINT,
                key=blueprint.key,
                content=content,
                sha256=sha256_text(content),
            )
        )
    return RunArtifact.objects.bulk_create(rows)


def load_test_set(run_id: int) -> Artifacts:
    """An earlier run's test set, read back from its immutable artifact rows."""
    rows = RunArtifact.objects.filter(run_id=run_id)
    return Artifacts(
        fixtures=[fixture_of(a) for a in rows.filter(kind=ArtifactKind.FIXTURE)],
        manifest=manifest_of(rows.get(kind=ArtifactKind.MANIFEST)),
        blueprints=[blueprint_of(a) for a in rows.filter(kind=ArtifactKind.BLUEPRINT)],
    )


def blueprint_facts(run_id: int) -> dict[str, dict[str, str]]:
    """Each scenario's persona facts, by scenario key."""
    rows = RunArtifact.objects.filter(run_id=run_id, kind=ArtifactKind.BLUEPRINT)
    return {r.key: blueprint_of(r).persona.facts for r in rows}


def load_reviews(run: Run) -> dict[str, ReviewResult]:
    """The LLM judge's stored reviews of a run's cases, by scenario key."""
    return {
        a.key: ReviewResult.model_validate_json(a.content)
        for a in run.artifacts.filter(kind=ArtifactKind.LLM_REVIEW)
    }


def store_review(run: Run, key: str, result: ReviewResult) -> None:
    """Keep one case's LLM review (a redelivered judge message finds it and does not pay twice)."""
    content = result.model_dump_json()
    RunArtifact.objects.get_or_create(
        run=run,
        kind=ArtifactKind.LLM_REVIEW,
        key=key,
        defaults={"content": content, "sha256": sha256_text(content)},
    )


_FINDINGS = TypeAdapter(list[Finding])


class _StoredChecks(BaseModel):
    """A `case_checks` row: the findings, the steps the judging deadline skipped and the turns
    judged on a prefix. Rows stored before those were kept hold the list of findings alone."""

    model_config = ConfigDict(extra="forbid")

    findings: list[Finding]
    skipped: list[str] = Field(default_factory=list)
    truncated_turns: list[int] = Field(default_factory=list)


def load_case_checks(run: Run) -> dict[str, CheckedCase]:
    """The deterministic checks stored when each case ended, by scenario key."""
    out: dict[str, CheckedCase] = {}
    for a in run.artifacts.filter(kind=ArtifactKind.CASE_CHECKS):
        if a.content.lstrip().startswith("["):
            out[a.key] = CheckedCase(_FINDINGS.validate_json(a.content))
            continue
        stored = _StoredChecks.model_validate_json(a.content)
        out[a.key] = CheckedCase(stored.findings, stored.skipped, stored.truncated_turns)
    return out


def store_case_checks(run: Run, key: str, checked: CheckedCase) -> None:
    """Keep what the deterministic checks found in one ended case (the judge stage reuses it),
    with what its judging deadline skipped and the turns judged on a prefix."""
    content = _StoredChecks(
        findings=checked.findings,
        skipped=checked.skipped,
        truncated_turns=checked.truncated_turns,
    ).model_dump_json()
    RunArtifact.objects.get_or_create(
        run=run,
        kind=ArtifactKind.CASE_CHECKS,
        key=key,
        defaults={"content": content, "sha256": sha256_text(content)},
    )
