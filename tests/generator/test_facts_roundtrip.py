"""Round trip, property-based: what the generator writes (money, phones, times, durations), the
judge reads back as the same canonical value, and the generator reads it as the judge does."""

from __future__ import annotations

import random
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.facts import CURRENCY_SYMBOLS, extract_money, extract_phones
from generator.facts.money import currency_of, money_text
from generator.noise import apply_noise
from generator.prompts import price, service_line
from generator.schemas import FixtureDocument
from judge.facts import extract_facts
from qalab.domain import OrgContext

# Fast and the same on every run.
roundtrip = settings(max_examples=60, derandomize=True, deadline=None, database=None)

# The currencies the generator writes: by symbol (EUR, USD, GBP) or by ISO code.
CODES = ["EUR", "USD", "GBP", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "AUD", "CAD", "NZD"]
amounts = st.integers(min_value=0, max_value=9_999_999).map(lambda cents: Decimal(cents) / 100)


def read(text: str, kind: str) -> list[str]:
    return [f.value for f in extract_facts(text) if f.kind == kind]


def money_shapes(amount: Decimal, code: str) -> list[str]:
    """Every shape the generator writes an amount in: the canonical '80 EUR' and the variants
    its noise re-renders it as (`generator.noise`): code before or after, symbol before or
    after, two decimals with a point or a comma, 'euro'."""
    plain, two = money_text(amount), f"{amount.quantize(Decimal('0.01'))}"
    shapes = [f"{plain} {code}", f"{code} {plain}", f"{two} {code}"]
    symbol = CURRENCY_SYMBOLS.get(code)
    if symbol:
        shapes += [f"{plain}{symbol}", f"{symbol}{plain}", f"{two.replace('.', ',')} {symbol}"]
    if code == "EUR":
        shapes.append(f"{plain} euro")
    return shapes


@roundtrip
@given(amount=amounts, code=st.sampled_from(CODES))
def test_it_reads_back_every_written_shape_of_an_amount(amount, code):
    expected = f"{money_text(amount)} {currency_of(code)}"
    for shape in money_shapes(amount, code):
        text = f"The check-up costs {shape} per visit."
        assert read(text, "money") == [expected], text
        assert [a for a, _, _ in extract_money(text)] == [amount], text


@roundtrip
@given(amount=amounts, code=st.sampled_from(CODES), seed=st.integers(0, 2**32 - 1))
def test_it_reads_a_noisy_price_line_as_the_clean_one(amount, code, seed, demo):
    org = OrgContext.model_validate({**demo.model_dump(), "currency": code})
    service = org.services[0].model_copy(update={"price": amount})
    line = service_line(org, service, description=False)
    assert price(org, service) in line
    doc = FixtureDocument(id="prices", title="Prices", text=f"Prices\n{line}\n")
    noisy = apply_noise([doc], "messy", random.Random(seed)).documents[0].text
    expected = [f"{money_text(amount)} {currency_of(code)}"]
    assert read(line, "money") == expected
    assert sorted(set(read(noisy, "money"))) == expected, noisy


@roundtrip
@given(
    amount=st.integers(min_value=1000, max_value=999_999_999).map(lambda c: Decimal(c) / 100),
    style=st.sampled_from([(",", "."), (".", ","), (" ", ","), ("\u00a0", ".")]),
    code=st.sampled_from(CODES),
    before=st.booleans(),
)
def test_it_reads_amounts_with_thousands_separators(amount, style, code, before):
    group, point = style
    whole, cents = f"{amount:.2f}".split(".")
    grouped = f"{int(whole):,}".replace(",", group) + point + cents
    shape = f"{code} {grouped}" if before else f"{grouped} {code}"
    text = f"A full set is {shape} in total."
    assert read(text, "money") == [f"{money_text(amount)} {currency_of(code)}"], text
    assert [a for a, _, _ in extract_money(text)] == [amount], text


phones = st.tuples(
    st.integers(1, 999),  # country code
    st.lists(st.integers(2, 4), min_size=2, max_size=4),  # group lengths of the national number
    st.randoms(use_true_random=False),
)


@roundtrip
@given(phone=phones, prefix=st.sampled_from(["+", "00"]), separator=st.sampled_from([" ", "-", ""]))
def test_it_reads_back_a_phone_number_however_it_is_dialled(phone, prefix, separator):
    country, groups, rng = phone
    national = ["".join(str(rng.randrange(10)) for _ in range(n)) for n in groups]
    national[0] = str(rng.randrange(1, 10)) + national[0][1:]
    digits = f"{country}{''.join(national)}"
    if not 7 <= len(digits) <= 13:
        return
    written = prefix + separator.join([str(country), *national])
    text = f"Call us on {written} for a booking."
    assert read(text, "phone") == [digits], text
    assert extract_phones(text) == [digits], text


@roundtrip
@given(hour=st.integers(0, 23), minute=st.integers(0, 59), shape=st.integers(0, 3))
def test_it_reads_back_a_24_hour_time(hour, minute, shape):
    written = [f"{hour:02d}:{minute:02d}", f"{hour}:{minute:02d}", f"{hour:02d}.{minute:02d}"]
    written.append(f"{hour}.{minute:02d}")
    text = f"Saturday: opens {written[shape]} sharp."
    assert read(text, "time") == [f"{hour:02d}:{minute:02d}"], text


@roundtrip
@given(
    hour=st.integers(1, 12),
    minute=st.integers(0, 59),
    half=st.sampled_from(["am", "pm", "AM", "p.m.", " pm", " a.m."]),
    separator=st.sampled_from([":", "."]),
)
def test_it_reads_back_an_am_pm_time(hour, minute, half, separator):
    written = f"{hour}{half}" if minute == 0 else f"{hour}{separator}{minute:02d}{half}"
    expected = f"{hour % 12 + (12 if 'p' in half.casefold() else 0):02d}:{minute:02d}"
    text = f"Saturday: opens {written} sharp."
    assert read(text, "time") == [expected], text


@roundtrip
@given(
    minutes=st.integers(1, 600),
    shape=st.sampled_from(["{m} min", "{m} minutes", "{m}-minute", "{h}h {r}m", "{h} hours"]),
)
def test_it_reads_back_a_duration_in_minutes_or_hours(minutes, shape, demo):
    hours, rest = divmod(minutes, 60)
    if ("{h}" in shape and not hours) or (shape == "{h} hours" and rest):
        return
    if shape == "{h}h {r}m" and not rest:
        return
    text = f"The appointment takes {shape.format(m=minutes, h=hours, r=rest)} in the chair."
    assert read(text, "duration") == [str(minutes)], text
    service = demo.services[0].model_copy(update={"duration": minutes})
    assert read(service_line(demo, service, description=False), "duration") == [str(minutes)]
