"""Written values: the one reader of money (`money`) and spans of time (`duration`), and the
reading of a service's whole price or duration value as an org folder writes it
(`service_values`). Pure Python, in the lowest layer: the org import reads an org folder with
it, and `generator.facts` (the generator and the judge) re-exports it."""

from __future__ import annotations

from qalab.values.service_values import (
    PRICE_KINDS,
    DurationReading,
    PriceKind,
    PriceReading,
    ValueFormError,
    read_duration,
    read_price,
)

__all__ = [
    "PRICE_KINDS",
    "DurationReading",
    "PriceKind",
    "PriceReading",
    "ValueFormError",
    "read_duration",
    "read_price",
]
