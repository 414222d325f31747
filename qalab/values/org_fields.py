"""The validation behind `qalab.domain.ServiceSpec` and `OrgContext`'s currency: a service's
price and duration read from a number or the org's own words, and one currency per
organization. Errors are pydantic ValidationErrors at the field at fault (`services.2.price`)
with the value as written, so the org folder loader can name the file, the field and the value.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from qalab.values.currency import choose, infer_currency, normalize_currency, price_currencies
from qalab.values.service_values import ValueFormError, read_duration, read_price


def invalid(title: str, loc: tuple[str | int, ...], value: Any, message: str) -> ValidationError:
    """A ValidationError of one field, as pydantic reports its own."""
    error = PydanticCustomError("value_error", "{message}", {"message": message})
    return ValidationError.from_exception_data(
        title, [InitErrorDetails(type=error, loc=loc, input=value)]
    )


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _written(data: dict[str, Any], field: str) -> tuple[Any, str, str]:
    """(value, words, where): the field's value, the org's words for it (the value itself when
    it is text, else `<field>_text`), and the field to blame for them."""
    value, text = data.get(field), data.get(f"{field}_text") or ""
    if isinstance(value, str):
        if text and text.strip() != value.strip():
            raise invalid(
                "ServiceSpec",
                (f"{field}_text",),
                text,
                f"{field}_text is set from {field}: write the value once, in {field}",
            )
        return value, value, field
    return value, text, f"{field}_text"


def service_fields(data: Any) -> Any:
    """A service's raw fields with `price` and `duration` read (numbers, or the org's words kept
    in `price_text` / `duration_text`); raise a ValidationError for a malformed one."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    value, text, where = _written(data, "price")
    if text or isinstance(value, str):
        try:
            reading = read_price(text)
        except ValueFormError as exc:
            raise invalid("ServiceSpec", (where,), text, str(exc)) from None
        number = None if isinstance(value, str) else _decimal(value)
        if value is not None and not isinstance(value, str) and number != reading.amount:
            raise invalid("ServiceSpec", ("price",), value, f"price_text {text!r} says otherwise")
        data.update(
            price=reading.amount,
            price_kind=reading.kind,
            price_max=reading.maximum,
            price_text=text.strip(),
        )
    elif isinstance(value, str | int | float | Decimal) and not isinstance(value, bool):
        try:
            read_price(value)
        except ValueFormError as exc:
            raise invalid("ServiceSpec", ("price",), value, str(exc)) from None
    value, text, where = _written(data, "duration")
    if text or isinstance(value, str):
        try:
            span = read_duration(text)
        except ValueFormError as exc:
            raise invalid("ServiceSpec", (where,), text, str(exc)) from None
        if value is not None and not isinstance(value, str) and value != span.minutes:
            raise invalid(
                "ServiceSpec", ("duration",), value, f"duration_text {text!r} says otherwise"
            )
        data.update(duration=span.minutes, duration_max=span.maximum, duration_text=text.strip())
    elif "duration" in data and value is None:
        raise invalid("ServiceSpec", ("duration",), value, "give minutes or words ('1h 30')")
    elif isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        try:
            read_duration(value)
        except ValueFormError as exc:
            raise invalid("ServiceSpec", ("duration",), value, str(exc)) from None
    return data


def check_service(
    price: Decimal,
    kind: str,
    price_max: Decimal | None,
    duration: int | None,
    duration_max: int | None,
) -> None:
    """A range has a top above its bottom; only a range has a top. Raises ValueError."""
    if (kind == "range") != (price_max is not None):
        raise ValueError("price_max is the top of a price range: set both, or neither")
    if price_max is not None and price_max <= price:
        raise ValueError("price_max must be above price")
    if duration_max is not None and (duration is None or duration_max <= duration):
        raise ValueError("duration_max must be above duration")


def _texts(data: dict[str, Any]) -> list[str]:
    services = data.get("services")
    texts = []
    for service in services if isinstance(services, list) else []:
        raw = service.get("price_text") or service.get("price") if isinstance(service, dict) else ""
        texts.append(raw if isinstance(raw, str) else "")
    return texts


def with_currency(data: Any) -> Any:
    """The org's raw fields with `currency` as an ISO code: the field normalized ('£' -> GBP),
    or, when absent, inferred from the first price that names a currency (given the locale)."""
    if not isinstance(data, dict):
        return data
    locale = data.get("locale") if isinstance(data.get("locale"), str) else ""
    currency = data.get("currency")
    if currency is None:  # absent, or an empty `currency:` line
        data = {k: v for k, v in data.items() if k != "currency"}
    if isinstance(currency, str):
        try:
            return {**data, "currency": normalize_currency(currency, locale)}
        except ValueError as exc:
            raise invalid("OrgContext", ("currency",), currency, str(exc)) from None
    if currency is not None:
        return data
    inferred, index = infer_currency(_texts(data), locale)
    if index is None:
        return data
    if inferred is None:
        text = _texts(data)[index]
        codes = ", ".join(price_currencies(text))
        raise invalid(
            "OrgContext",
            ("services", index, "price"),
            text,
            f"its currency may be {codes}: set the organization's currency",
        )
    return {**data, "currency": inferred}


def check_price_currencies(price_texts: list[str], currency: str, locale: str) -> None:
    """Every price that names a currency names the org's; raise a ValidationError at the first
    that does not."""
    for index, text in enumerate(price_texts):
        codes = price_currencies(text)
        if codes and currency not in codes:
            named = choose(codes, locale) or " or ".join(codes)
            raise invalid(
                "OrgContext",
                ("services", index, "price"),
                text,
                f"this price is in {named}, but the organization's currency is {currency}",
            )
