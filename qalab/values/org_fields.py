"""The validation behind `qalab.domain`'s org specs: a service's price and duration read from
a number or the org's own words, opening hours as businesses write them, and one currency per
organization. Errors are pydantic ValidationErrors at the field at fault (`services.2.price`)
with the value as written, so the org folder loader can name the file, the field and the value;
every failure of a folder is reported at once (`validated`: what is read before pydantic
validates the rest is reported together with what pydantic finds).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from qalab.values.currency import choose, infer_currency, normalize_currency, price_currencies
from qalab.values.hours import read_hours, read_time_pair
from qalab.values.service_values import ValueFormError, read_duration, read_price

Loc = tuple[str | int, ...]
T = TypeVar("T")


def line_error(loc: Loc, value: Any, message: str, kind: str = "value_error") -> InitErrorDetails:
    """One failure, as pydantic reports its own: at `loc`, with the value as written."""
    error = PydanticCustomError(kind, "{message}", {"message": message})
    return InitErrorDetails(type=error, loc=loc, input=value)


def again(item: ErrorDetails, loc: Loc | None = None) -> InitErrorDetails:
    """A reported failure as one to report again (at `loc`, when given)."""
    where = item["loc"] if loc is None else loc
    return line_error(where, item.get("input"), item["msg"], item["type"])


def invalid(title: str, loc: Loc, value: Any, message: str) -> ValidationError:
    """A ValidationError of one field, as pydantic reports its own."""
    return ValidationError.from_exception_data(title, [line_error(loc, value, message)])


def validated(
    title: str,
    data: dict[str, Any],
    handler: Callable[[Any], T],
    errors: list[InitErrorDetails],
    dropped: frozenset[str] = frozenset(),
) -> T:
    """`handler(data)` with the `dropped` fields left out, its failures reported together with
    `errors` (what was read before it), so a folder learns of every failure in one pass. A
    dropped field is not also reported missing."""
    try:
        result = handler({k: v for k, v in data.items() if k not in dropped})
    except ValidationError as exc:
        if not errors:
            raise
        errors = errors + [
            again(e) for e in exc.errors() if not (e["type"] == "missing" and _dropped(e, dropped))
        ]
    if errors:
        raise ValidationError.from_exception_data(title, errors)
    return result


def _dropped(item: ErrorDetails, dropped: frozenset[str]) -> bool:
    return bool(item["loc"]) and item["loc"][0] in dropped


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


_PRICE_FIELDS = frozenset({"price", "price_text", "price_kind", "price_max"})
_DURATION_FIELDS = frozenset({"duration", "duration_text", "duration_max"})


def service_fields(data: dict[str, Any]) -> tuple[dict[str, Any], list[InitErrorDetails]]:
    """A service's raw fields with `price` and `duration` read (numbers, or the org's words kept
    in `price_text` / `duration_text`), and the failures of both."""
    data = dict(data)
    errors: list[InitErrorDetails] = []
    for read in (_read_price, _read_duration):
        try:
            data = read(data)
        except ValidationError as exc:
            errors += [again(e) for e in exc.errors()]
    return data, errors


def read_service(data: Any, handler: Callable[[Any], T]) -> T:
    """Validate one service (`handler`) with its price and duration read first; every failure
    of it at once (a bad price does not hide a bad duration or a missing name)."""
    if not isinstance(data, dict):
        return handler(data)
    data, errors = service_fields(data)
    dropped = frozenset().union(
        *(
            group
            for group in (_PRICE_FIELDS, _DURATION_FIELDS)
            if any(_in(e, group) for e in errors)
        )
    )
    return validated("ServiceSpec", data, handler, errors, dropped)


def _in(error: InitErrorDetails, fields: frozenset[str]) -> bool:
    return bool(error["loc"]) and error["loc"][0] in fields


def _read_price(data: dict[str, Any]) -> dict[str, Any]:
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
    return data


def _read_duration(data: dict[str, Any]) -> dict[str, Any]:
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


# ------------------------------------------------------------------------------- hours


def read_hours_field(value: Any, handler: Callable[[Any], T]) -> T:
    """Validate `hours` (`handler`, a list of lines) from what the folder wrote: text, a
    mapping of days to times, or a list (`qalab.values.hours.read_hours`). Failures are
    reported at the place the value was written, all at once."""
    reading = read_hours(value)
    errors = [line_error(p.loc, p.value, p.message) for p in reading.problems]
    try:
        result = handler(reading.lines)
    except ValidationError as exc:
        for item in exc.errors():
            loc = item["loc"]
            if loc and isinstance(loc[0], int) and loc[0] < len(reading.places):
                loc = (*reading.places[loc[0]], *loc[1:])  # the line's place as written
            errors.append(again(item, loc))
    if errors:
        raise ValidationError.from_exception_data("OrgContext", errors)
    return result


def read_hours_line(data: Any, handler: Callable[[Any], T]) -> T:
    """Validate one {days, opens, closes} line with its times read together
    (`read_time_pair`: '9am', '17:30', 9; '9' to '5' is 09:00 to 17:00)."""
    if not isinstance(data, dict) or not {"opens", "closes"} <= set(data):
        return handler(data)
    pair, problems = read_time_pair(data["opens"], data["closes"])
    if pair is not None:
        return handler({**data, "opens": pair[0], "closes": pair[1]})
    errors = [line_error(p.loc, p.value, p.message) for p in problems]
    return validated("HoursSpec", data, handler, errors, frozenset({"opens", "closes"}))


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


def with_currency(data: dict[str, Any]) -> dict[str, Any]:
    """The org's raw fields with `currency` as an ISO code: the field normalized ('£' -> GBP),
    or, when absent, inferred from the first price that names a currency (given the locale)."""
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


def price_currency_errors(
    price_texts: list[str], currency: str, locale: str
) -> list[InitErrorDetails]:
    """Every price that names a currency other than the org's."""
    errors = []
    for index, text in enumerate(price_texts):
        codes = price_currencies(text)
        if codes and currency not in codes:
            named = choose(codes, locale) or " or ".join(codes)
            message = f"this price is in {named}, but the organization's currency is {currency}"
            errors.append(line_error(("services", index, "price"), text, message))
    return errors


def read_org(data: Any, handler: Callable[[Any], T], *, default_currency: str) -> T:
    """Validate an organization (`handler`) with its currency read first and every price that
    names a currency checked against it; every failure of the folder at once (a currency
    error does not wait for the other fields to be right, nor they for it)."""
    if not isinstance(data, dict):
        return handler(data)
    errors: list[InitErrorDetails] = []
    try:
        data = with_currency(data)
    except ValidationError as exc:
        errors += [again(e) for e in exc.errors()]
        data = {k: v for k, v in data.items() if k != "currency"}
    else:
        currency = data.get("currency", default_currency)
        locale = data.get("locale") if isinstance(data.get("locale"), str) else ""
        if isinstance(currency, str):
            errors += price_currency_errors(_texts(data), currency, locale)
    return validated("OrgContext", data, handler, errors)
