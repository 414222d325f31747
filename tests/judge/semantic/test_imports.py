"""Importing the semantic layer loads neither torch nor Django nor Celery."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.judge.semantic.conftest import ROOT

_PROBE = """
import json, sys
import judge.semantic
print(json.dumps(sorted(sys.modules)))
"""

_UNWANTED = {"torch", "django", "celery", "transformers", "sentence_transformers"}


def test_importing_the_semantic_layer_loads_no_torch_django_or_celery():
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    loaded = set(json.loads(done.stdout))
    assert {name.split(".")[0] for name in loaded} & _UNWANTED == set()
    assert "judge.semantic.encoder" in loaded  # the probe did load the layer
    assert "judge.semantic.reference" not in loaded  # tests and tools only
