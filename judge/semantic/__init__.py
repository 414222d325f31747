"""The judge's semantic layer (DESIGN §9, layer 3): a small sentence encoder on onnxruntime.

`get_encoder().encode(texts)` embeds texts with all-MiniLM-L6-v2 (int8 ONNX, no torch); the
model files come from registry packages, pinned by sha256 and verified at load
(`model_files`). `reference` is the fp32 numpy forward pass the encoder is tested against.
"""

from judge.semantic.encoder import DIMENSION, Encoder, get_encoder
from judge.semantic.model_files import SemanticModelError

__all__ = ["DIMENSION", "Encoder", "SemanticModelError", "get_encoder"]
