"""An offline engine over an in-memory ledger: simulator tests need no database."""

from __future__ import annotations

import pytest

from qalab.llm import get_engine
from qalab.llm.base import NullLedger


@pytest.fixture
def ledger():
    return NullLedger()


@pytest.fixture
def engine(ledger):
    return get_engine("offline", ledger=ledger)
