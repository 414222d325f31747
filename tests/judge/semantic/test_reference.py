"""The stored fp32 reference is what the verified fp32 weights give (numpy forward pass)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from judge.semantic.model_files import MODEL_SAFETENSORS, TOKENIZER_JSON
from judge.semantic.reference import CHECK_ATOL, read_safetensors
from tests.judge.semantic.conftest import REFERENCE, ROOT


def test_the_stored_reference_names_the_pinned_files(reference):
    assert reference["weights_sha256"] == MODEL_SAFETENSORS.sha256
    assert reference["tokenizer_sha256"] == TOKENIZER_JSON.sha256
    for item in reference["sentences"]:
        assert len(item["embedding"]) == 384
        assert np.linalg.norm(item["embedding"]) == pytest.approx(1.0, abs=1e-6)


def test_the_numpy_forward_pass_reproduces_the_stored_reference():
    """Recomputes all ~30 embeddings from the sha256-checked safetensors (a few seconds, in a
    subprocess so numpy's BLAS runs on one thread)."""
    done = subprocess.run(
        [sys.executable, "-m", "judge.semantic.reference", "check", str(REFERENCE)],
        cwd=ROOT,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    measured = json.loads(done.stdout)
    assert measured["max_abs_diff"] <= CHECK_ATOL
    assert measured["min_cosine"] > 1 - 1e-9


def test_read_safetensors_reads_the_header_and_the_arrays():
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, -8], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    raw = json.dumps(header).encode()
    tensors = read_safetensors(struct.pack("<Q", len(raw)) + raw + a.tobytes() + b.tobytes())
    assert set(tensors) == {"a", "b"}
    assert np.array_equal(tensors["a"], a) and np.array_equal(tensors["b"], b)
