"""Seed derivation: independent, stable random streams per purpose from one run seed."""

from __future__ import annotations

import hashlib
import random


def derive_seed(seed: int, *parts: object) -> int:
    """A 64-bit seed from `seed` and `parts`; stable across processes (unlike `hash()`)."""
    text = ":".join([str(seed), *(str(p) for p in parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def rng_for(seed: int, *parts: object) -> random.Random:
    """A `random.Random` seeded by `derive_seed(seed, *parts)`."""
    return random.Random(derive_seed(seed, *parts))
