"""A plain numpy forward pass of all-MiniLM-L6-v2 from its fp32 safetensors (tests and tools only).

It is the reference the int8 ONNX encoder is measured against: BERT with 6 layers, hidden size
384, 12 heads, exact (erf) GELU, LayerNorm eps 1e-12, then mean pooling over the tokens and L2
normalisation, as sentence-transformers runs the model. It computes in float64 from the pinned
fp32 weights (`model_files.MODEL_SAFETENSORS`), one text at a time (no padding). The run-time
encoder never imports it.

    python -m judge.semantic.reference write tests/data/semantic/sentences.txt OUT.json

writes the reference embeddings of the sentences (one per line) as JSON; the stored reference
`tests/data/semantic/reference_fp32.json` was made that way, once.

    python -m judge.semantic.reference check tests/data/semantic/reference_fp32.json

recomputes every stored embedding from the verified weights and exits 1 unless each agrees
within `CHECK_ATOL` (the test suite runs it in a subprocess with OPENBLAS_NUM_THREADS=1: numpy's
BLAS is much slower with threads on a busy 2-core machine).
"""

from __future__ import annotations

import json
import math
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from judge.semantic.model_files import MODEL_SAFETENSORS, TOKENIZER_JSON, read_pinned

LAYERS = 6
HIDDEN = 384
HEADS = 12
LAYER_NORM_EPS = 1e-12
MAX_SEQ_LENGTH = 256

_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
_erf = np.frompyfunc(math.erf, 1, 1)

Weights = dict[str, np.ndarray]


def read_safetensors(data: bytes) -> Weights:
    """The tensors of a safetensors file: an 8-byte little-endian header length, a JSON header
    (name -> dtype, shape, data_offsets), then the raw little-endian arrays."""
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors: Weights = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data, dtype=_DTYPES[info["dtype"]], count=-1, offset=base + start)
        count = math.prod(info["shape"])
        if array[:count].nbytes != end - start:
            raise ValueError(f"safetensors: tensor {name} has a bad size")
        tensors[name] = array[:count].reshape(info["shape"])
    return tensors


def load_weights(model_dir: Path | None = None) -> Weights:
    """The verified fp32 weights as float64 arrays."""
    raw = read_safetensors(read_pinned(MODEL_SAFETENSORS, model_dir))
    return {k: v.astype(np.float64) for k, v in raw.items() if v.dtype.kind == "f"}


def _layer_norm(x: np.ndarray, weights: Weights, prefix: str) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * weights[f"{prefix}.weight"] + weights[
        f"{prefix}.bias"
    ]


def _dense(x: np.ndarray, weights: Weights, prefix: str) -> np.ndarray:
    return x @ weights[f"{prefix}.weight"].T + weights[f"{prefix}.bias"]


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def _layer(h: np.ndarray, weights: Weights, i: int) -> np.ndarray:
    p = f"encoder.layer.{i}"
    seq = h.shape[0]
    head = HIDDEN // HEADS

    def split(x: np.ndarray) -> np.ndarray:  # [seq, hidden] -> [heads, seq, head]
        return x.reshape(seq, HEADS, head).transpose(1, 0, 2)

    q = split(_dense(h, weights, f"{p}.attention.self.query"))
    k = split(_dense(h, weights, f"{p}.attention.self.key"))
    v = split(_dense(h, weights, f"{p}.attention.self.value"))
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = scores / scores.sum(axis=-1, keepdims=True)
    context = (probs @ v).transpose(1, 0, 2).reshape(seq, HIDDEN)
    attended = _layer_norm(
        _dense(context, weights, f"{p}.attention.output.dense") + h,
        weights,
        f"{p}.attention.output.LayerNorm",
    )
    inner = _gelu(_dense(attended, weights, f"{p}.intermediate.dense"))
    return _layer_norm(
        _dense(inner, weights, f"{p}.output.dense") + attended, weights, f"{p}.output.LayerNorm"
    )


def embed_ids(weights: Weights, input_ids: Sequence[int]) -> np.ndarray:
    """The normalised sentence embedding (float64, 384) of one text's token ids."""
    ids = np.asarray(input_ids, dtype=np.int64)
    h = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][: len(ids)]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    h = _layer_norm(h, weights, "embeddings.LayerNorm")
    for i in range(LAYERS):
        h = _layer(h, weights, i)
    pooled = h.mean(axis=0)  # one text, no padding: every token counts
    return pooled / np.linalg.norm(pooled)


def token_ids(texts: Sequence[str], model_dir: Path | None = None) -> list[list[int]]:
    """The token ids of each text, truncated to 256 as sentence-transformers does."""
    tokenizer = Tokenizer.from_str(read_pinned(TOKENIZER_JSON, model_dir).decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    return [list(e.ids) for e in tokenizer.encode_batch(list(texts))]


def reference_document(sentences: Sequence[str]) -> dict[str, Any]:
    """The stored reference: each sentence, its token ids and its fp32-model embedding."""
    weights = load_weights()
    items = [
        {
            "text": text,
            "input_ids": ids,
            "embedding": [round(float(x), 8) for x in embed_ids(weights, ids)],
        }
        for text, ids in zip(sentences, token_ids(sentences), strict=True)
    ]
    return {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (fp32 safetensors)",
        "weights_sha256": MODEL_SAFETENSORS.sha256,
        "tokenizer_sha256": TOKENIZER_JSON.sha256,
        "method": "judge.semantic.reference: numpy float64 forward, mean pooling, L2 norm",
        "sentences": items,
    }


def _dumps(document: dict[str, Any]) -> str:
    """JSON with one line per sentence, so a diff shows which sentence changed."""
    head = {k: v for k, v in document.items() if k != "sentences"}
    lines = [json.dumps(item, ensure_ascii=False) for item in document["sentences"]]
    body = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    return body + ',\n "sentences": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def check(document: dict[str, Any]) -> tuple[float, float]:
    """(largest absolute difference, smallest cosine) between the stored embeddings and a fresh
    forward pass of the stored token ids; also checks that the tokenizer still gives those ids."""
    items = document["sentences"]
    texts = [item["text"] for item in items]
    if token_ids(texts) != [item["input_ids"] for item in items]:
        raise ValueError("the tokenizer no longer gives the stored token ids")
    weights = load_weights()
    worst, lowest = 0.0, 1.0
    for item in items:
        stored = np.asarray(item["embedding"], dtype=np.float64)
        fresh = embed_ids(weights, item["input_ids"])
        worst = max(worst, float(np.abs(stored - fresh).max()))
        lowest = min(lowest, float(stored @ fresh / np.linalg.norm(stored)))
    return worst, lowest


#: Stored values are rounded to 8 decimals; BLAS and summation order add less than 1e-9.
CHECK_ATOL = 1e-6


def main(argv: Sequence[str]) -> int:
    """`write SENTENCES.txt OUT.json` or `check REFERENCE.json`."""
    if len(argv) == 3 and argv[0] == "write":
        sentences = Path(argv[1]).read_text(encoding="utf-8").splitlines()
        document = reference_document([s for s in sentences if s.strip()])
        Path(argv[2]).write_text(_dumps(document), encoding="utf-8")
        return 0
    if len(argv) == 2 and argv[0] == "check":
        worst, lowest = check(json.loads(Path(argv[1]).read_text(encoding="utf-8")))
        print(json.dumps({"max_abs_diff": worst, "min_cosine": lowest}))
        return 0 if worst <= CHECK_ATOL else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
