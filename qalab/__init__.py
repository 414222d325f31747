"""AI QA Lab: the project package and the shared core (settings, org context, LLM layer)."""

from __future__ import annotations

from qalab.celery import app as celery_app

__all__ = ["celery_app"]
