"""Importing the semantic layer (and using it) loads neither torch nor Django nor Celery; the
package itself is light (no onnxruntime) until the encoder is used."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.judge.semantic.conftest import ROOT

_PROBE = """
import json, sys
import judge.semantic
light = "onnxruntime" not in sys.modules
from judge.semantic.layer import apply_semantic
from judge.semantic.scores import takeup_miss
takeup_miss("what time do you open?", "We open at nine.")
print(json.dumps(sorted(sys.modules) + (["<light>"] if light else [])))
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
    assert "<light>" in loaded  # `import judge.semantic` alone did not load onnxruntime
    assert "judge.semantic.reference" not in loaded  # tests and tools only
