"""Responders for tests, reachable as `python:tests.responders:<name>`."""

from __future__ import annotations

from typing import Any


def hostile(request: dict[str, Any]) -> dict[str, Any]:
    """A responder whose reply tries to inject markup into the report page."""
    return {"reply": "<script>alert('x')</script> Thanks, noted.", "status": "AWAITING_RESPONSE"}
