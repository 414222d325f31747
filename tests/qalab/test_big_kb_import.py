"""A multi-megabyte KB imports whole: every document, byte for byte (the speed is in make bench)."""

from __future__ import annotations

import hashlib
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from qalab.models import Organization
from tests.big_kb import write_big_org

pytestmark = pytest.mark.django_db

TWO_MB = 2 * 2**20


def test_a_two_megabyte_kb_imports_completely(tmp_path: Path) -> None:
    folder = tmp_path / "org"
    files = write_big_org(folder, total_bytes=TWO_MB, slug="big-kb")
    assert sum(f.size for f in files) >= TWO_MB and len(files) > 50

    out = StringIO()
    call_command("qalab_import_org", str(folder), stdout=out)

    assert f"{len(files)} KB documents" in out.getvalue()
    org = Organization.objects.get(slug="big-kb")
    stored = {d.slug: d for d in org.kb_documents.all()}
    assert sorted(stored) == sorted(Path(f.name).stem.lower() for f in files)
    for f in files:
        doc = stored[Path(f.name).stem.lower()]
        data = (folder / "kb" / f.name).read_bytes()
        assert len(doc.text.encode("utf-8")) == f.size == len(data), f.name
        assert doc.text == data.decode("utf-8"), f.name
        assert doc.sha256 == hashlib.sha256(data).hexdigest(), f.name
        assert doc.title == data.decode("utf-8").splitlines()[0].lstrip("#").strip(), f.name


def test_the_generated_kb_is_realistic_and_seeded(tmp_path: Path) -> None:
    first = write_big_org(tmp_path / "a", total_bytes=200_000)
    second = write_big_org(tmp_path / "b", total_bytes=200_000)
    assert first == second  # same seed, same documents
    text = "".join((tmp_path / "a" / "kb" / f.name).read_text(encoding="utf-8") for f in first)
    for marker in ("€", "£", " EUR", "+353 1 555 ", "Monday", ":30", "| Treatment | Price |"):
        assert marker in text, marker
    other = write_big_org(tmp_path / "c", total_bytes=200_000, seed=8)
    assert (tmp_path / "c" / "kb" / other[-1].name).read_text(encoding="utf-8") != (
        tmp_path / "a" / "kb" / first[-1].name
    ).read_text(encoding="utf-8")
