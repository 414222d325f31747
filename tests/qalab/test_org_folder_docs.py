"""docs/org-folder.md is generated from OrgContext and its specs (`python -m qalab.org_folder`):
the checked-in file equals the generated one, names every field, and every form it gives as
an example is one the import accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from qalab.domain import DURATION_EXAMPLES, PRICE_EXAMPLES, OrgContext, ServiceSpec
from qalab.org_folder_docs import DOCS_PATH, reference_text

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_reference_equals_the_generated_one() -> None:
    assert DOCS_PATH.read_text(encoding="utf-8") == reference_text(), (
        "docs/org-folder.md differs from OrgContext (qalab/domain.py): regenerate it with "
        "`python -m qalab.org_folder` and commit it"
    )


def _fields(model: type[BaseModel]) -> set[str]:
    names = set(model.model_fields)
    for field in model.model_fields.values():
        for arg in (field.annotation, *getattr(field.annotation, "__args__", ())):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                names |= _fields(arg)
    return names


def test_it_names_every_field_with_its_type_and_whether_it_is_required() -> None:
    text = reference_text()
    for name in _fields(OrgContext):
        assert f"| `{name}` |" in text, name
    assert "| `price` | number or text | yes |" in text
    assert "| `duration` | minutes or text | yes |" in text
    assert "| `locale` | text | no | `en_US` |" in text
    assert "*Set by the import.*" in text
    assert "`£52`" in text and "`about an hour`" in text and "`2 visits`" in text


@pytest.mark.parametrize("price", PRICE_EXAMPLES)
def test_every_price_it_shows_is_accepted(price: str) -> None:
    ServiceSpec.model_validate({"name": "x", "price": price, "duration": 30})


@pytest.mark.parametrize("duration", DURATION_EXAMPLES)
def test_every_duration_it_shows_is_accepted(duration: str) -> None:
    ServiceSpec.model_validate({"name": "x", "price": 10, "duration": duration})


def test_python_m_qalab_org_folder_writes_it(tmp_path: Path) -> None:
    out = tmp_path / "org-folder.md"
    subprocess.run(
        [sys.executable, "-m", "qalab.org_folder", str(out)], cwd=ROOT, check=True, timeout=60
    )
    assert out.read_text(encoding="utf-8") == reference_text()
