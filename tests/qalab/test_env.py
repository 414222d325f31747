"""Settings parsers: bad values fail loudly, defaults are the embedded demo."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from qalab.env import envbool, envchoice, envdb, envint


def test_it_parses_booleans(monkeypatch):
    monkeypatch.setenv("X_FLAG", "yes")
    assert envbool("X_FLAG") is True
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        envbool("X_FLAG")


def test_it_rejects_a_bad_integer(monkeypatch):
    monkeypatch.setenv("X_INT", "ten")
    with pytest.raises(ImproperlyConfigured, match="X_INT"):
        envint("X_INT", 3)
    monkeypatch.setenv("X_INT", "0")
    with pytest.raises(ImproperlyConfigured, match=">= 1"):
        envint("X_INT", 3, minimum=1)


def test_it_rejects_an_unknown_engine(monkeypatch):
    monkeypatch.setenv("QALAB_LLM_ENGINE", "magic")
    with pytest.raises(ImproperlyConfigured, match="QALAB_LLM_ENGINE"):
        envchoice("QALAB_LLM_ENGINE", "offline", ("offline",))


def test_it_defaults_to_sqlite_and_switches_to_postgres(monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert envdb("DATABASE_URL", tmp_path / "x.sqlite3")["ENGINE"] == "django.db.backends.sqlite3"
    monkeypatch.setenv("DATABASE_URL", "postgres://u@127.0.0.1:5432/qalab")
    config = envdb("DATABASE_URL", tmp_path / "x.sqlite3")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert config["NAME"] == "qalab"
