"""The semantic tests share one encoder per process (the model loads once) and one uncached one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.semantic.encoder import Encoder, get_encoder

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / "tests/data/semantic/reference_fp32.json"


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """The process's shared encoder, as the judge uses it (with its cache)."""
    return get_encoder()


@pytest.fixture(scope="session")
def uncached() -> Encoder:
    """An encoder without a cache: every call runs the model."""
    return Encoder(cache_size=0)


@pytest.fixture(scope="session")
def reference() -> dict:
    """The stored fp32 reference: sentences, their token ids and embeddings."""
    return json.loads(REFERENCE.read_text(encoding="utf-8"))
