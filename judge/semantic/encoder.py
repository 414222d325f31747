"""The sentence encoder of the semantic layer: all-MiniLM-L6-v2 (int8) on onnxruntime, no torch.

`get_encoder().encode(texts)` gives one L2-normalised float32 vector of 384 per text. The model
loads once per process (the first `get_encoder()` call); its files are verified against their
sha256 pins as they are read (`judge.semantic.model_files`).

Deterministic: one thread, sequential execution, CPU provider. A text's vector does not depend
on the texts it is encoded with: texts are grouped by their exact token count, so a batch is
never padded, and mean pooling runs per text. The same text gives the bit-identical vector
within a process and across processes on the same machine and build.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from judge.semantic.model_files import MODEL_ONNX, TOKENIZER_JSON, read_pinned

#: The embedding size of all-MiniLM-L6-v2.
DIMENSION = 384
#: Tokens per text, [CLS] and [SEP] included: sentence-transformers' max_seq_length for the model.
MAX_SEQ_LENGTH = 256
#: Texts per onnxruntime call, at most.
BATCH_SIZE = 32
#: Tokens per onnxruntime call, at most (a batch of long texts is split): the call's working
#: memory grows with batch x length. Measured on 117 texts up to 256 tokens: peak RSS 534 MB
#: with 32 texts of any length per call, 393 MB with 1,024 tokens, the same time and vectors.
MAX_BATCH_TOKENS = 1024
#: Embeddings kept per process (LRU by text): about 1.6 KB each, so about 7 MB at most.
CACHE_SIZE = 4096


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    size: int
    maxsize: int


class EmbeddingCache:
    """A bounded LRU of embeddings keyed by text, safe to share between threads.

    Stored vectors are read-only copies, so a caller changing the array `encode` returned
    cannot change what later calls get.
    """

    def __init__(self, maxsize: int) -> None:
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._maxsize = max(0, maxsize)
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._items.get(text)
            if vector is None:
                self._misses += 1
                return None
            self._items.move_to_end(text)
            self._hits += 1
            return vector

    def put(self, text: str, vector: np.ndarray) -> None:
        if self._maxsize == 0:
            return
        kept = np.array(vector, dtype=np.float32, copy=True)
        kept.setflags(write=False)
        with self._lock:
            self._items[text] = kept
            self._items.move_to_end(text)
            while len(self._items) > self._maxsize:
                self._items.popitem(last=False)

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._items), self._maxsize)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._hits = self._misses = 0


def _session_options() -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.use_deterministic_compute = True
    options.enable_cpu_mem_arena = True
    options.log_severity_level = 3  # errors only
    return options


class Encoder:
    """all-MiniLM-L6-v2 sentence embeddings from the pinned int8 ONNX model and tokenizer."""

    def __init__(self, model_dir: Path | None = None, cache_size: int = CACHE_SIZE) -> None:
        """Load and verify the model files (from `model_dir` if given, else the installed
        packages); raises `SemanticModelError` if one is missing or not the pinned one."""
        started = time.perf_counter()
        model = read_pinned(MODEL_ONNX, model_dir)
        tokenizer = Tokenizer.from_str(read_pinned(TOKENIZER_JSON, model_dir).decode("utf-8"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        self._tokenizer = tokenizer
        self._session = ort.InferenceSession(
            model, sess_options=_session_options(), providers=["CPUExecutionProvider"]
        )
        self._cache = EmbeddingCache(cache_size)
        #: Seconds spent reading, verifying and loading the model files.
        self.load_seconds = time.perf_counter() - started

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of `texts`: float32 [len(texts), 384], each row of L2 norm 1."""
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            if text in missing:
                missing[text].append(i)
                continue
            cached = self._cache.get(text)
            if cached is None:
                missing[text] = [i]
            else:
                out[i] = cached
        if missing:
            fresh = self._encode_uncached(list(missing))
            for (text, rows), vector in zip(missing.items(), fresh, strict=True):
                out[rows] = vector
                self._cache.put(text, vector)
        return out

    def cache_info(self) -> CacheInfo:
        """Hits and misses (counted per distinct text of a call) and the cache's size."""
        return self._cache.info()

    def cache_clear(self) -> None:
        self._cache.clear()

    def _encode_uncached(self, texts: list[str]) -> np.ndarray:
        """Texts grouped by exact token count (no padding), then run in batches of at most
        `BATCH_SIZE` texts and `MAX_BATCH_TOKENS` tokens."""
        encodings = self._tokenizer.encode_batch(texts)
        by_length: dict[int, list[int]] = {}
        for i, encoding in enumerate(encodings):
            by_length.setdefault(len(encoding.ids), []).append(i)
        vectors = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for length in sorted(by_length):
            group = by_length[length]
            size = max(1, min(BATCH_SIZE, MAX_BATCH_TOKENS // length))
            for start in range(0, len(group), size):
                rows = group[start : start + size]
                ids = np.array([encodings[i].ids for i in rows], dtype=np.int64)
                vectors[rows] = self._run(ids)
        return vectors

    def _run(self, ids: np.ndarray) -> np.ndarray:
        """Mean-pooled, normalised embeddings of unpadded token ids [batch, length]."""
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            },
        )
        pooled = hidden.mean(axis=1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, np.float32(1e-12))


_encoders: dict[tuple[int, Path | None], Encoder] = {}
_encoders_lock = threading.Lock()


def get_encoder(model_dir: Path | None = None) -> Encoder:
    """The process's encoder for `model_dir` (the installed packages when None), loaded on the
    first call and shared afterwards. Per process: an onnxruntime session is not used across a
    fork (a worker's pool child loads its own; the parent's is never touched there)."""
    folder = None if model_dir is None else Path(model_dir).resolve()
    key = (os.getpid(), folder)
    with _encoders_lock:
        encoder = _encoders.get(key)
        if encoder is None:
            encoder = _encoders[key] = Encoder(folder)
        return encoder
