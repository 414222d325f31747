"""Read and validate an org folder (DESIGN §11): `org.yaml` plus `kb/*.md` -> OrgContext."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from qalab.domain import OrgContext
from qalab.safe_yaml import YamlLimitError, YamlLimits, load_yaml

DEMO_ORG_DIR = Path(__file__).resolve().parent / "demo_org"


class OrgFolderError(Exception):
    """The folder is not a valid org folder; the message names the file and the field."""


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


def _read_capped(path: Path, size: int, limits: OrgFolderLimits) -> bytes:
    """The file's bytes, refused above the per-file cap (checked on the size, then on what is
    read, so a file growing meanwhile is no way around it)."""
    over = (
        f"{path}: {{size:,}} bytes, over the limit of {limits.max_file_bytes:,} bytes per file "
        "(QALAB_ORG_MAX_FILE_BYTES)"
    )
    if size > limits.max_file_bytes:
        raise OrgFolderError(over.format(size=size))
    with path.open("rb") as handle:
        data = handle.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        raise OrgFolderError(over.format(size=len(data)))
    return data


def _yaml_error(exc: yaml.YAMLError) -> str:
    """PyYAML's message on one line: the problem and where it is."""
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return f"{problem or 'unreadable'}{where}"
    return " ".join(str(exc).split())


def _describe(error: ValidationError, filename: str) -> str:
    if error.error_count() == 1:  # one failure, one line
        item = error.errors()[0]
        return f"{filename}: field {_where(item['loc'])}: {item['msg']}{_shown_value(item)}"
    lines = [f"{filename}: {error.error_count()} invalid field(s)"]
    for item in error.errors():
        lines.append(
            f"  {filename}: field {_where(item['loc'])}: {item['msg']}{_shown_value(item)}"
        )
    return "\n".join(lines)


def _where(loc: tuple[Any, ...]) -> str:
    """The field as the folder writes it, and as pydantic names it when that differs:
    `'services[2].price' (services.2.price)`."""
    dotted = ".".join(str(part) for part in loc)
    if not dotted:
        return "'(top level)'"
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return f"'{path}'" if path == dotted else f"'{path}' ({dotted})"


# Fields whose values an error may repeat (no secret lives there): services, hours, intake
# fields, currency, locale and slug.
_SHOWN = frozenset({"services", "hours", "intake_fields", "currency", "locale", "slug"})


def _shown_value(item: Any) -> str:
    """` (got '...')` for a value the message does not quote already, in the fields of
    `_SHOWN` and responder_http. Never a header or query value, nor a free-text field: those
    may hold what must not be shown."""
    loc, value = item["loc"], item.get("input")
    shown = loc[:1] == ("responder_http",) or (loc[:1] and loc[0] in _SHOWN)
    if not shown or loc[1:2] in (("headers",), ("query",)):
        return ""
    if not isinstance(value, (str, int, float, Decimal)) or (
        value != "" and str(value) in item["msg"]
    ):
        return ""
    return f" (got {str(value)[:80]!r})"


def load_org_folder(path: Path | str, *, limits: OrgFolderLimits | None = None) -> OrgContext:
    """Parse and validate the folder; raise OrgFolderError naming the file and field at fault
    (one line per failure) or the limit it breaks (`limits`, default `OrgFolderLimits()`)."""
    limits = limits or OrgFolderLimits()
    folder = Path(path)
    if not folder.is_dir():
        raise OrgFolderError(f"{folder}: not a directory")
    org_file = folder / "org.yaml"
    for path in (org_file, folder / "kb"):
        if path.is_symlink():
            raise OrgFolderError(f"{path}: a symbolic link; an org folder holds its own files only")
    if not org_file.is_file():
        raise OrgFolderError(f"{org_file}: missing (an org folder needs org.yaml)")
    raw = _read_capped(org_file, org_file.stat().st_size, limits)
    try:
        data = load_yaml(raw.decode("utf-8"), limits.yaml)
    except UnicodeDecodeError as exc:
        raise OrgFolderError(f"{org_file}: not UTF-8 text: {exc}") from None
    except YamlLimitError as exc:
        raise OrgFolderError(f"{org_file}: field '{exc.field}': {exc.message}") from None
    except yaml.YAMLError as exc:
        raise OrgFolderError(f"{org_file}: not valid YAML: {_yaml_error(exc)}") from None
    if not isinstance(data, dict):
        raise OrgFolderError(f"{org_file}: must be a mapping of fields, got {type(data).__name__}")
    if "kb" in data:
        raise OrgFolderError(
            f"{org_file}: field 'kb': KB documents belong in kb/*.md, not org.yaml"
        )
    kb = _read_kb(folder / "kb", limits)
    try:
        return OrgContext.model_validate({**data, "kb": kb})
    except ValidationError as exc:
        raise OrgFolderError(_describe(exc, str(org_file))) from None
    except RecursionError:  # the YAML limits make this unreachable; never a traceback
        raise OrgFolderError(f"{org_file}: nested too deeply") from None


def _read_kb(kb_dir: Path, limits: OrgFolderLimits) -> list[dict[str, str]]:
    """The kb/*.md documents, sizes checked before anything is read."""
    docs = sorted(kb_dir.glob("*.md")) if kb_dir.is_dir() else []
    sizes, names = [], {}
    for doc in docs:
        if doc.is_symlink() or not doc.is_file():
            # A link could import any file of the machine (/etc/passwd) into fixtures and reports.
            raise OrgFolderError(f"{doc}: not a regular file (symbolic links are not followed)")
        other = names.setdefault(doc.stem.casefold(), doc)
        if other is not doc:
            raise OrgFolderError(
                f"{other} and {doc}: two KB documents with the same name (names are compared "
                "without case: rename or merge one)"
            )
        size = doc.stat().st_size
        if size > limits.max_file_bytes:
            _read_capped(doc, size, limits)  # raises, naming the file
        sizes.append(size)
    if sum(sizes) > limits.max_kb_bytes:
        raise OrgFolderError(
            f"{kb_dir}/*.md: {len(docs)} KB documents of {sum(sizes):,} bytes together, over "
            f"the limit of {limits.max_kb_bytes:,} bytes per organization (QALAB_ORG_MAX_KB_BYTES)"
        )
    kb, total = [], 0
    for doc, size in zip(docs, sizes, strict=True):
        data = _read_capped(doc, size, limits)
        total += len(data)
        if total > limits.max_kb_bytes:  # a file grew since its size was taken
            raise OrgFolderError(
                f"{kb_dir}/*.md: over the limit of {limits.max_kb_bytes:,} bytes per "
                "organization (QALAB_ORG_MAX_KB_BYTES)"
            )
        try:
            # Universal newlines, as a text-mode read gives them (the stored hashes rely on it).
            text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as exc:
            raise OrgFolderError(f"{doc}: not UTF-8 text: {exc}") from None
        if not text.strip():
            raise OrgFolderError(f"{doc}: empty KB document")
        first = text.strip().splitlines()[0]
        title = first.lstrip("#").strip() if first.startswith("#") else doc.stem.replace("-", " ")
        kb.append({"slug": doc.stem.lower(), "title": title, "text": text})
    return kb


if __name__ == "__main__":  # python -m qalab.org_folder [PATH]: write docs/org-folder.md
    import sys

    from qalab.org_folder_docs import main

    main(sys.argv[1:])
