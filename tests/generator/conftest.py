"""Shared helpers for generator tests: the two org folders and an offline engine per test."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from qalab.domain import OrgContext
from qalab.llm import NullLedger, OfflineEngine
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder

BIKES_ORG_DIR = Path(__file__).resolve().parents[1] / "data" / "orgs" / "bikes"
TODAY = date(2026, 3, 2)
QUICK = {"scenarios": 12, "max_turns": 4, "mix": (20, 50, 30)}
REGRESSION = {"scenarios": 24, "max_turns": 5, "mix": (10, 40, 50)}


@pytest.fixture(scope="session")
def demo() -> OrgContext:
    return load_org_folder(DEMO_ORG_DIR)


@pytest.fixture(scope="session")
def bikes() -> OrgContext:
    return load_org_folder(BIKES_ORG_DIR)


@pytest.fixture(params=["demo", "bikes"])
def org(request: pytest.FixtureRequest) -> OrgContext:
    return request.getfixturevalue(request.param)


@pytest.fixture
def engine() -> OfflineEngine:
    return OfflineEngine(ledger=NullLedger())
