"""The judge's semantic layer (DESIGN §9, layer 3): a small sentence encoder on onnxruntime and
small learned heads on its embeddings.

`get_encoder().encode(texts)` embeds texts with all-MiniLM-L6-v2 (int8 ONNX, no torch); the
model files come from registry packages, pinned by sha256 and verified at load
(`model_files`). `heads` holds the trained heads, `scores` what the checks ask of them,
`thresholds` the rules and their defaults (light: importing this package or `thresholds` loads
no model and no onnxruntime), `train` how the heads are fitted, `reference` the fp32 numpy
forward pass the encoder is tested against.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DIMENSION", "Encoder", "SemanticModelError", "get_encoder"]


def __getattr__(name: str) -> Any:
    """The encoder's names, imported on first use (onnxruntime is heavy to import)."""
    if name in ("DIMENSION", "Encoder", "get_encoder"):
        from judge.semantic import encoder

        return getattr(encoder, name)
    if name == "SemanticModelError":
        from judge.semantic.model_files import SemanticModelError

        return SemanticModelError
    raise AttributeError(f"module 'judge.semantic' has no attribute {name!r}")
