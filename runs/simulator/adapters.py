"""Responder adapters, chosen by a responder spec (`reference`, `python:pkg.mod:func`).

Whatever an adapter gets back is untrusted: it is validated into a `ResponderReply` at the
edge, and anything that does not fit becomes a `ResponderError` (the case is marked `error`
with the reason; the rest of the run goes on).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import ValidationError

from qalab.llm import Engine
from runs.simulator.contract import ResponderReply, ResponderRequest
from runs.simulator.reference import reference_respond

_PYTHON_SPEC = re.compile(r"^python:(?P<module>[A-Za-z_][\w.]*):(?P<func>[A-Za-z_]\w*)$")
SPEC_HELP = "use 'reference' or 'python:package.module:function'"


class ResponderError(Exception):
    """The responder failed or answered outside the contract."""


class Responder(Protocol):
    spec: str

    def respond(
        self, request: ResponderRequest, *, engine: Engine, purpose: str
    ) -> ResponderReply: ...


class ReferenceResponder:
    spec = "reference"

    def respond(self, request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
        return reference_respond(request, engine=engine, purpose=purpose)


class PythonResponder:
    """Calls `func(request: dict) -> dict` in process; the dict must fit the reply contract."""

    def __init__(self, spec: str, func: Callable[[dict[str, Any]], Any]) -> None:
        self.spec = spec
        self._func = func

    def respond(self, request: ResponderRequest, *, engine: Engine, purpose: str) -> ResponderReply:
        try:
            raw = self._func(request.model_dump(mode="json"))
        except Exception as exc:
            raise ResponderError(f"{self.spec} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(raw, dict):
            raise ResponderError(f"{self.spec} returned {type(raw).__name__}, not a JSON object")
        try:
            return ResponderReply.model_validate(raw)
        except ValidationError as exc:
            raise ResponderError(
                f"{self.spec} returned a reply outside the contract: {exc}"
            ) from exc


def get_responder(spec: str) -> Responder:
    """The adapter for `spec`; ValueError with a clear message when the spec is not usable."""
    spec = (spec or "").strip()
    if spec == "reference":
        return ReferenceResponder()
    match = _PYTHON_SPEC.match(spec)
    if match:
        try:
            module = importlib.import_module(match["module"])
        except ImportError as exc:
            raise ValueError(f"responder {spec!r}: cannot import {match['module']}: {exc}") from exc
        func = getattr(module, match["func"], None)
        if not callable(func):
            raise ValueError(
                f"responder {spec!r}: {match['module']} has no function {match['func']}"
            )
        return PythonResponder(spec, func)
    raise ValueError(f"unknown responder spec {spec!r}: {SPEC_HELP}")
