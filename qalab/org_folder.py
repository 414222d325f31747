"""Read and validate an org folder (DESIGN §11): `org.yaml` plus `kb/*.md` -> OrgContext."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from qalab.domain import OrgContext
from qalab.org_folder_errors import Problem, report, validation_problems
from qalab.safe_yaml import YamlLimitError, YamlLimits, load_yaml

DEMO_ORG_DIR = Path(__file__).resolve().parent / "demo_org"


class OrgFolderError(Exception):
    """The folder is not a valid org folder: every problem found, each naming the file, the
    field and the value (`problems`); the message is one line per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(report(problems))
        self.problems = problems


@dataclass(frozen=True)
class OrgFolderLimits:
    """What one org folder may hold. The command line takes the sizes from the settings
    `QALAB_ORG_MAX_FILE_BYTES` and `QALAB_ORG_MAX_KB_BYTES`; these are their defaults."""

    max_file_bytes: int = 2 * 2**20
    """Bytes of any one file (org.yaml or a kb/*.md)."""
    max_kb_bytes: int = 10 * 2**20
    """Bytes of all kb/*.md documents together."""
    yaml: YamlLimits = field(default_factory=YamlLimits)
    """Nesting and alias expansion of org.yaml."""


def _read_capped(
    path: Path, size: int, limits: OrgFolderLimits, problems: list[Problem]
) -> bytes | None:
    """The file's bytes, or None (and a problem) above the per-file cap (checked on the size,
    then on what is read, so a file growing meanwhile is no way around it)."""
    over = (
        "{size:,} bytes, over the limit of "
        f"{limits.max_file_bytes:,} bytes per file (QALAB_ORG_MAX_FILE_BYTES)"
    )
    if size > limits.max_file_bytes:
        problems.append(Problem(str(path), over.format(size=size)))
        return None
    with path.open("rb") as handle:
        data = handle.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        problems.append(Problem(str(path), over.format(size=len(data))))
        return None
    return data


def _yaml_error(exc: yaml.YAMLError) -> str:
    """PyYAML's message on one line: the problem and where it is."""
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return f"{problem or 'unreadable'}{where}"
    return " ".join(str(exc).split())


def _read_org_yaml(
    org_file: Path, limits: OrgFolderLimits, problems: list[Problem]
) -> dict[str, Any] | None:
    """org.yaml's fields, or None (and a problem) when it cannot be read as a mapping."""
    name = str(org_file)
    if org_file.is_symlink():
        problems.append(Problem(name, "a symbolic link; an org folder holds its own files only"))
        return None
    if not org_file.is_file():
        problems.append(Problem(name, "missing (an org folder needs org.yaml)"))
        return None
    raw = _read_capped(org_file, org_file.stat().st_size, limits, problems)
    if raw is None:
        return None
    try:
        data = load_yaml(raw.decode("utf-8"), limits.yaml)
    except UnicodeDecodeError as exc:
        problems.append(Problem(name, f"not UTF-8 text: {exc}"))
        return None
    except YamlLimitError as exc:
        problems.append(Problem(name, f"{exc.field}: {exc.message}"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(name, f"not valid YAML: {_yaml_error(exc)}"))
        return None
    if not isinstance(data, dict):
        problems.append(Problem(name, f"must be a mapping of fields, got {type(data).__name__}"))
        return None
    if "kb" in data:
        problems.append(Problem(name, "kb: KB documents belong in kb/*.md, not in org.yaml"))
        data = {k: v for k, v in data.items() if k != "kb"}
    return data


def load_org_folder(path: Path | str, *, limits: OrgFolderLimits | None = None) -> OrgContext:
    """Parse and validate the folder; raise OrgFolderError with every problem found in one
    pass (org.yaml's fields, the KB files, the limits of `limits`, default
    `OrgFolderLimits()`), each naming the file, the field and the value."""
    limits = limits or OrgFolderLimits()
    folder = Path(path)
    if not folder.is_dir():
        raise OrgFolderError([Problem(str(folder), "not a directory")])
    problems: list[Problem] = []
    org_file = folder / "org.yaml"
    data = _read_org_yaml(org_file, limits, problems)
    kb, kb_files = _read_kb(folder / "kb", limits, problems)
    if data is None:
        raise OrgFolderError(problems)
    try:
        context = OrgContext.model_validate({**data, "kb": kb})
    except ValidationError as exc:
        problems += validation_problems(exc, org_file, data, kb_files)
    except RecursionError:  # the YAML limits make this unreachable; never a traceback
        problems.append(Problem(str(org_file), "nested too deeply"))
    if problems:
        raise OrgFolderError(problems)
    return context


def _kb_candidates(kb_dir: Path, problems: list[Problem]) -> list[tuple[Path, int]]:
    """The kb/*.md documents that may be read, with their sizes: regular files, one per name."""
    if kb_dir.is_symlink():
        problems.append(
            Problem(str(kb_dir), "a symbolic link; an org folder holds its own files only")
        )
        return []
    docs = sorted(kb_dir.glob("*.md")) if kb_dir.is_dir() else []
    out: list[tuple[Path, int]] = []
    names: dict[str, Path] = {}
    for doc in docs:
        if doc.is_symlink() or not doc.is_file():
            # A link could import any file of the machine (/etc/passwd) into fixtures and reports.
            problems.append(
                Problem(str(doc), "not a regular file (symbolic links are not followed)")
            )
            continue
        other = names.setdefault(doc.stem.casefold(), doc)
        if other is not doc:
            problems.append(
                Problem(
                    f"{other} and {doc}",
                    "two KB documents with the same name (names are compared without case: "
                    "rename or merge one)",
                )
            )
            continue
        out.append((doc, doc.stat().st_size))
    return out


def _read_kb(
    kb_dir: Path, limits: OrgFolderLimits, problems: list[Problem]
) -> tuple[list[dict[str, str]], list[Path]]:
    """The kb/*.md documents and their files, sizes checked before anything is read; each
    unreadable one is a problem."""
    docs = _kb_candidates(kb_dir, problems)
    total = sum(size for _, size in docs)
    if total > limits.max_kb_bytes:
        problems.append(
            Problem(
                f"{kb_dir}/*.md",
                f"{len(docs)} KB documents of {total:,} bytes together, over the limit of "
                f"{limits.max_kb_bytes:,} bytes per organization (QALAB_ORG_MAX_KB_BYTES)",
            )
        )
        return [], []
    kb, files, read = [], [], 0
    for doc, size in docs:
        data = _read_capped(doc, size, limits, problems)
        if data is None:
            continue
        read += len(data)
        if read > limits.max_kb_bytes:  # a file grew since its size was taken
            problems.append(
                Problem(
                    f"{kb_dir}/*.md",
                    f"over the limit of {limits.max_kb_bytes:,} bytes per organization "
                    "(QALAB_ORG_MAX_KB_BYTES)",
                )
            )
            return [], []
        try:
            # Universal newlines, as a text-mode read gives them (the stored hashes rely on it).
            text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as exc:
            problems.append(Problem(str(doc), f"not UTF-8 text: {exc}"))
            continue
        if not text.strip():
            problems.append(Problem(str(doc), "empty KB document"))
            continue
        first = text.strip().splitlines()[0]
        title = first.lstrip("#").strip() if first.startswith("#") else doc.stem.replace("-", " ")
        kb.append({"slug": doc.stem.lower(), "title": title, "text": text})
        files.append(doc)
    return kb, files


if __name__ == "__main__":  # python -m qalab.org_folder [PATH]: write docs/org-folder.md
    import sys

    from qalab.org_folder_docs import main

    main(sys.argv[1:])
