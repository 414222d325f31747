"""Read and validate an org folder (DESIGN §11): `org.yaml` plus `kb/*.md` -> OrgContext."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from qalab.domain import OrgContext

DEMO_ORG_DIR = Path(__file__).resolve().parent / "demo_org"


class OrgFolderError(Exception):
    """The folder is not a valid org folder; the message names the file and the field."""


def _describe(error: ValidationError, filename: str) -> str:
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


def load_org_folder(path: Path | str) -> OrgContext:
    """Parse and validate the folder; raise OrgFolderError naming the file and field at fault."""
    folder = Path(path)
    if not folder.is_dir():
        raise OrgFolderError(f"{folder}: not a directory")
    org_file = folder / "org.yaml"
    for path in (org_file, folder / "kb"):
        if path.is_symlink():
            raise OrgFolderError(f"{path}: a symbolic link; an org folder holds its own files only")
    if not org_file.is_file():
        raise OrgFolderError(f"{org_file}: missing (an org folder needs org.yaml)")
    try:
        data = yaml.safe_load(org_file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise OrgFolderError(f"{org_file}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise OrgFolderError(f"{org_file}: must be a mapping of fields, got {type(data).__name__}")
    if "kb" in data:
        raise OrgFolderError(
            f"{org_file}: field 'kb': KB documents belong in kb/*.md, not org.yaml"
        )

    kb = []
    kb_dir = folder / "kb"
    for doc in sorted(kb_dir.glob("*.md")) if kb_dir.is_dir() else []:
        if doc.is_symlink() or not doc.is_file():
            # A link could import any file of the machine (/etc/passwd) into fixtures and reports.
            raise OrgFolderError(f"{doc}: not a regular file (symbolic links are not followed)")
        try:
            text = doc.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise OrgFolderError(f"{doc}: not UTF-8 text: {exc}") from exc
        if not text.strip():
            raise OrgFolderError(f"{doc}: empty KB document")
        first = text.strip().splitlines()[0]
        title = first.lstrip("#").strip() if first.startswith("#") else doc.stem.replace("-", " ")
        kb.append({"slug": doc.stem.lower(), "title": title, "text": text})

    try:
        return OrgContext.model_validate({**data, "kb": kb})
    except ValidationError as exc:
        raise OrgFolderError(_describe(exc, str(org_file))) from exc


if __name__ == "__main__":  # python -m qalab.org_folder [PATH]: write docs/org-folder.md
    import sys

    from qalab.org_folder_docs import main

    main(sys.argv[1:])
