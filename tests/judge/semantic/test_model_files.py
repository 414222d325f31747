"""The model files are pinned by sha256 and checked at load; a wrong or missing file is a clear
error that names QALAB_SEMANTIC."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from judge.semantic import SemanticModelError
from judge.semantic.encoder import Encoder
from judge.semantic.model_files import (
    MODEL_ONNX,
    MODEL_SAFETENSORS,
    RUNTIME_FILES,
    TOKENIZER_JSON,
    _installed_path,
    read_pinned,
)


def test_every_pin_is_a_full_sha256():
    for spec in (MODEL_ONNX, TOKENIZER_JSON, MODEL_SAFETENSORS):
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256), spec.name
    assert MODEL_ONNX.sha256.startswith("8199be6f699a395f")
    assert MODEL_SAFETENSORS.sha256.startswith("53aa5117")


def _good_dir(tmp_path: Path) -> Path:
    """A model directory linking the installed model and holding the tokenizer."""
    (tmp_path / MODEL_ONNX.name).symlink_to(_installed_path(MODEL_ONNX))
    (tmp_path / TOKENIZER_JSON.name).write_bytes(read_pinned(TOKENIZER_JSON))
    return tmp_path


def test_a_model_dir_with_the_pinned_files_loads_and_encodes_the_same(tmp_path, encoder):
    texts = ["Can I bring my dog?", "We accept Visa and cash."]
    other = Encoder(_good_dir(tmp_path), cache_size=0)
    assert np.array_equal(other.encode(texts), encoder.encode(texts))


def test_a_corrupted_tokenizer_is_refused_naming_the_setting_and_both_hashes(tmp_path):
    model_dir = _good_dir(tmp_path)
    data = bytearray(read_pinned(TOKENIZER_JSON))
    data[100] ^= 0x01
    (model_dir / TOKENIZER_JSON.name).write_bytes(bytes(data))
    with pytest.raises(SemanticModelError) as caught:
        Encoder(model_dir)
    message = str(caught.value)
    assert "QALAB_SEMANTIC=off" in message
    assert "tokenizer.json" in message
    assert TOKENIZER_JSON.sha256 in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message


def test_a_model_that_is_not_the_pinned_one_is_refused(tmp_path):
    (tmp_path / MODEL_ONNX.name).write_bytes(b"not the model")
    with pytest.raises(SemanticModelError, match=r"model\.onnx.*QALAB_SEMANTIC=off") as caught:
        Encoder(tmp_path)
    assert hashlib.sha256(b"not the model").hexdigest() in str(caught.value)
    assert MODEL_ONNX.sha256 in str(caught.value)


def test_a_missing_file_is_refused_naming_the_setting(tmp_path):
    with pytest.raises(SemanticModelError, match=r"model\.onnx is missing.*QALAB_SEMANTIC=off"):
        Encoder(tmp_path)
    (tmp_path / MODEL_ONNX.name).symlink_to(_installed_path(MODEL_ONNX))
    with pytest.raises(SemanticModelError, match=r"tokenizer\.json is missing.*QALAB_SEMANTIC"):
        Encoder(tmp_path)


def test_a_package_that_is_not_installed_is_refused_naming_the_setting():
    absent = dataclasses.replace(MODEL_ONNX, distribution="qalab-no-such-package")
    with pytest.raises(SemanticModelError, match=r"not installed.*QALAB_SEMANTIC=off"):
        read_pinned(absent)
    no_member = dataclasses.replace(TOKENIZER_JSON, member="no-such-member.json")
    with pytest.raises(SemanticModelError, match=r"missing.*QALAB_SEMANTIC=off"):
        read_pinned(no_member)


def test_the_runtime_reads_the_model_and_the_tokenizer():
    assert {spec.name for spec in RUNTIME_FILES} == {"model.onnx", "tokenizer.json"}
