"""The layers hold: the pure core loads no Django or Celery; no upward import; no cycle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.architecture.imports import import_graph, violations

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500

# Imports every module of the pure core, then lists what got loaded from Django and Celery.
_PROBE = """
import importlib, json, pkgutil, sys
import judge, generator
for package in (judge, generator):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("django", "celery"))))
"""


def test_the_pure_core_imports_neither_django_nor_celery():
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == []


def test_no_module_imports_a_higher_layer_and_no_modules_import_each_other_in_a_circle():
    assert [str(v) for v in violations(ROOT)] == []


def test_no_module_of_the_layered_packages_is_over_500_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for layer in ("qalab", "generator", "judge", "runs")
        for path in (ROOT / layer).rglob("*.py")
        if "migrations" not in path.parts
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for layer in ("qalab", "generator", "judge", "runs"):
        (root / layer).mkdir(parents=True, exist_ok=True)
        (root / layer / "__init__.py").write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_contract_fails_on_a_throwaway_upward_import(tmp_path):
    root = _tree(
        tmp_path,
        {
            "qalab/domain.py": "X = 1\n",
            "generator/plant.py": "from qalab.domain import X\n",
            "judge/read.py": "from generator import plant\nfrom qalab import domain\n",
        },
    )
    assert violations(root) == []
    assert import_graph(root)["judge.read"] == {"generator.plant", "qalab.domain"}

    (root / "generator" / "upward.py").write_text(
        "def late():\n    from judge.read import thing  # a lazy import counts too\n"
    )
    assert [str(v) for v in violations(root)] == ["upward: generator.upward imports judge.read"]


def test_the_contract_fails_on_a_throwaway_cycle_but_not_on_type_checking_imports(tmp_path):
    root = _tree(
        tmp_path,
        {
            "runs/a.py": "from runs import b\n",
            "runs/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from runs.a import A\n"
            ),
        },
    )
    assert violations(root) == []

    (root / "runs" / "c.py").write_text("from . import a\n")
    (root / "runs" / "b.py").write_text("from .c import C\n")
    assert [str(v) for v in violations(root)] == ["cycle: runs.a <-> runs.b <-> runs.c"]
