"""Promote a failing case's fixture into docs/kb-fixtures/ as a regression file."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from qalab.domain import ArtifactKind
from qalab.orgs import sha256_text
from runs.artifacts import (
    fixture_of,
    load_manifest,
)
from runs.models import (
    PromotedFixture,
    Run,
    RunArtifact,
    RunCase,
)


class PromoteError(Exception):
    """The fixture was not written; the message says why."""


@dataclass(frozen=True)
class PromoteResult:
    promotion: PromotedFixture
    created: bool


_NAME_PART = re.compile(r"[^a-z0-9]+")


def _name_part(value: str, *, limit: int = 40) -> str:
    """A file-name slug: ASCII letters, digits and single dashes only (no dots, no slashes)."""
    return _NAME_PART.sub("-", value.lower()).strip("-")[:limit].strip("-") or "x"


def _fixtures_dir() -> Path:
    """QALAB_FIXTURES_DIR, created if missing, resolved; refused when it is a symlink."""
    configured = Path(settings.QALAB_FIXTURES_DIR)
    if not configured.is_absolute():
        configured = Path(settings.BASE_DIR) / configured
    if "\x00" in str(configured):
        raise PromoteError("the fixtures folder setting contains a NUL byte")
    if configured.is_symlink():
        raise PromoteError(f"the fixtures folder {configured} is a symlink: refusing to write")
    base = Path(settings.BASE_DIR)
    for parent in configured.parents:
        # Inside the project, a linked folder on the way (docs -> /etc) would send the file
        # elsewhere; outside it, the operator chose the path and its links.
        if parent != base and parent.is_relative_to(base) and parent.is_symlink():
            raise PromoteError(
                f"the fixtures folder {configured} lies under a symlink ({parent}): "
                "refusing to write"
            )
    try:
        configured.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # e.g. a file in its place, or no permission to create it
        raise PromoteError(
            f"the fixtures folder {configured} is not a plain folder: {exc}"
        ) from exc
    if configured.is_symlink() or not configured.is_dir():
        raise PromoteError(f"the fixtures folder {configured} is not a plain folder")
    return configured.resolve()


def _write_new_file(directory: Path, name: str, content: str) -> Path:
    """Create `directory/name` exclusively; never follows a symlink, never overwrites."""
    if "\x00" in name or "\x00" in content:
        raise PromoteError("the fixture contains NUL bytes: not written")
    target = directory / name
    if target.is_symlink():
        raise PromoteError(f"{target} is a symlink: not written")
    if target.resolve().parent != directory or target.name != name:
        raise PromoteError(f"{name!r} would land outside {directory}: not written")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    # Opened relative to the folder's own descriptor, so swapping the folder for a symlink
    # after the checks above cannot redirect the write.
    data = content.encode("utf-8")
    try:
        dir_fd = os.open(
            directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
        )
    except OSError as exc:
        raise PromoteError(f"cannot open the fixtures folder {directory}: {exc}") from exc
    try:
        fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
    except FileExistsError as exc:
        raise PromoteError(f"{target} already exists: not overwritten") from exc
    except OSError as exc:  # no permission, a symlink swapped in (ELOOP), a full disk ...
        raise PromoteError(f"{target} could not be created: {exc}") from exc
    finally:
        os.close(dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        target.unlink(missing_ok=True)
        raise PromoteError(f"{target} could not be written: {exc}") from exc
    return target


def _promote_content(run: Run, case: RunCase, artifact: RunArtifact) -> str:
    import yaml

    fixture = fixture_of(artifact)
    manifest = load_manifest(run.id).model_dump(mode="json")

    def facts(key: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if k != "source"} for row in manifest.get(key, [])]

    header = {
        "organization": run.organization.slug,
        "run": run.id,
        "case": case.key,
        "scenario": case.scenario_type,
        "fixture": fixture.key,
        "noise_level": fixture.noise_level,
        "metrics": {k: round(v, 4) for k, v in fixture.metrics.items()},
        "fixture_sha256": artifact.sha256,
        "findings": [
            {
                "id": f.id,
                "severity": f.severity,
                "rule": f.rule_id,
                "turn": f.turn_index,
                "subject": f.subject,
            }
            for f in case.findings.order_by("position")
        ],
        "manifest_excerpt": {
            "services": facts("services"),
            "hours": facts("hours"),
            "contacts": facts("contacts"),
            "policies": facts("policies"),
        },
    }
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    body = "\n\n".join(f"# {d.title}\n\n{d.text.rstrip()}" for d in fixture.documents)
    return f"---\n{front}---\n\n{body}\n"


def fixture_promote(*, run: Run, case: RunCase, user: Any = None) -> PromoteResult:
    """Write the case's fixture, with a header (org, run, case, noise level, findings, manifest
    excerpt), into QALAB_FIXTURES_DIR as `<org>-run<id>-<case>-<fixture>-<sha8>.md`.

    The name is built from slugs only, the file is created exclusively inside the folder (never
    outside it, never through a symlink, never over an existing file), and the promotion is
    recorded (who, when, path, sha256). Promoting a fixture whose content was promoted before
    writes nothing and returns that promotion (`created` False). PromoteError otherwise.
    """
    if case.run_id != run.id:
        raise PromoteError(f"case {case.key} is not a case of run {run.id}")
    artifact = run.artifacts.filter(kind=ArtifactKind.FIXTURE, key=case.fixture_key).first()
    if artifact is None:
        raise PromoteError(f"run {run.id} has no fixture {case.fixture_key!r}")
    existing = PromotedFixture.objects.filter(
        organization_id=run.organization_id, fixture_sha256=artifact.sha256
    ).first()
    if existing:
        return PromoteResult(existing, created=False)
    content = _promote_content(run, case, artifact)
    name = "-".join(
        [
            _name_part(run.organization.slug),
            f"run{run.id}",
            _name_part(case.key),
            _name_part(case.fixture_key),
            artifact.sha256[:8],
        ]
    )
    path = _write_new_file(_fixtures_dir(), f"{name}.md", content)
    try:
        with transaction.atomic():
            promotion = PromotedFixture.objects.create(
                organization_id=run.organization_id,
                run=run,
                case_key=case.key,
                fixture_key=case.fixture_key,
                fixture_sha256=artifact.sha256,
                path=str(path),
                sha256=sha256_text(content),
                promoted_by=user if getattr(user, "pk", None) else None,
            )
    except IntegrityError:
        # Another reviewer promoted the same fixture a moment ago: keep theirs.
        path.unlink(missing_ok=True)
        return PromoteResult(
            PromotedFixture.objects.get(
                organization_id=run.organization_id, fixture_sha256=artifact.sha256
            ),
            created=False,
        )
    except BaseException:
        # Not recorded: remove the file, or it would block every later promote (never overwrite).
        path.unlink(missing_ok=True)
        raise
    return PromoteResult(promotion, created=True)
