"""Critical facts of an org and how to find them again in noisy text, read with the shared
money, clock and phone readers (the judge reads the same values the same way)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from generator.facts.clock import clock_times, extract_times
from generator.facts.money import FREE_RE, extract_money, money_text
from generator.facts.phone import PHONE_RE, phone_digits
from generator.facts.spans import mask_spans
from qalab.domain import OrgContext

FactKind = Literal["money", "time", "phone", "email", "number"]

EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
INT_RE = re.compile(r"(?<![\d.,:])\d+(?![\d]|[.,:]\d)")


@dataclass(frozen=True)
class Fact:
    """One fact that must stay recoverable: canonical `value`, where it came from, optional anchor.

    `anchor` (e.g. a service name) must occur within a few lines of the value, so a price is
    recoverable *as the price of that service*, not just as a number somewhere.
    """

    kind: FactKind
    value: str
    label: str
    source: str
    anchor: str = ""


def _mask_non_phones(text: str) -> str:
    # Amounts, times and emails go first: "08.30  18.00" must not read as one phone number.
    spans = [(s, e) for _, s, e in extract_money(text)]
    spans += [m.span() for m in EMAIL_RE.finditer(text)]
    masked = mask_spans(text, spans)
    return mask_spans(masked, [(s, e) for _, s, e in clock_times(masked)])


def extract_phones(text: str) -> list[str]:
    """Digit strings of phone-like runs (7+ digits) in `text`, ignoring amounts and times."""
    out = []
    for m in PHONE_RE.finditer(_mask_non_phones(text)):
        digits = phone_digits(m.group(0))
        if len(digits) >= 7:
            out.append(digits)
    return out


def extract_numbers(text: str) -> list[int]:
    """Standalone integers not part of a time, money amount, phone or email."""
    spans = [(s, e) for _, s, e in extract_money(text)]
    spans += [(s, e) for _, s, e in clock_times(mask_spans(text, spans))]
    spans += [m.span() for m in EMAIL_RE.finditer(text)]
    masked = mask_spans(text, spans)
    return [int(m.group(0)) for m in INT_RE.finditer(masked)]


def canonical_values(text: str) -> set[str]:
    """Every value in `text` in canonical form ('money:80', 'time:08:30', 'phone:…', 'int:24').

    Noise may change how a value is written but never the value, so for any noisy text
    `canonical_values(noisy) <= canonical_values(clean)` must hold.
    """
    values = {f"money:{money_text(a)}" for a, _, _ in extract_money(text)}
    values |= {f"time:{t}" for t in extract_times(text)}
    values |= {f"email:{m.group(0).casefold()}" for m in EMAIL_RE.finditer(text)}
    values |= {f"phone:{p}" for p in extract_phones(text)}
    masked = _mask_non_phones(text)
    masked = mask_spans(masked, [m.span() for m in PHONE_RE.finditer(masked)])
    values |= {f"int:{int(m.group(0))}" for m in INT_RE.finditer(masked)}
    return values


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[|*#`_]", " ", text)).casefold().strip()


def _money_values(text: str) -> frozenset[str]:
    """Every amount in `text`, and '0' when it says something is free ("gratis", "no charge")."""
    found = {money_text(a) for a, _, _ in extract_money(text)}
    if FREE_RE.search(text):
        found.add("0")
    return frozenset(found)


def _value_in(text: str, fact: Fact) -> bool:
    if fact.kind == "money":
        return fact.value in _money_values(text)
    if fact.kind == "time":
        return fact.value in extract_times(text)
    if fact.kind == "phone":
        return any(p.endswith(fact.value) or fact.value.endswith(p) for p in extract_phones(text))
    if fact.kind == "email":
        return any(m.group(0).casefold() == fact.value for m in EMAIL_RE.finditer(text))
    return int(fact.value) in extract_numbers(text)


class _FactReader:
    """Reads one text for many facts: each kind of value is extracted from the whole text once,
    and its lines are normalised once, instead of once per fact (a fixture carries the whole KB,
    which may be megabytes). Answers exactly as `_value_in` and the window scan would."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self._values: dict[str, frozenset[str] | frozenset[int] | tuple[str, ...]] = {}
        self._windows: dict[int, list[str]] = {}

    def _read(self, kind: str) -> frozenset[str] | frozenset[int] | tuple[str, ...]:
        found = self._values.get(kind)
        if found is None:
            text = self.text
            if kind == "money":
                found = _money_values(text)
            elif kind == "time":
                found = frozenset(extract_times(text))
            elif kind == "phone":
                found = tuple(extract_phones(text))
            elif kind == "email":
                found = frozenset(m.group(0).casefold() for m in EMAIL_RE.finditer(text))
            else:
                found = frozenset(extract_numbers(text))
            self._values[kind] = found
        return found

    def value_in_text(self, fact: Fact) -> bool:
        """`_value_in(self.text, fact)`, from values read once per kind."""
        found = self._read(fact.kind)
        if fact.kind == "phone":
            return any(p.endswith(fact.value) or fact.value.endswith(p) for p in found)
        if fact.kind in ("money", "time", "email"):
            return fact.value in found
        return int(fact.value) in found

    def window_norms(self, window: int) -> list[str]:
        """`_norm(" ".join(lines[i : i + window]))` for each line i: the normalised lines
        joined, which is the same string (_norm maps characters one by one, then collapses
        and trims whitespace), at a fraction of the cost."""
        norms = self._windows.get(window)
        if norms is None:
            normed = [_norm(line) for line in self.lines]
            norms = [" ".join(n for n in normed[i : i + window] if n) for i in range(len(normed))]
            self._windows[window] = norms
        return norms

    def holds(self, fact: Fact, window: int) -> bool:
        if not fact.anchor:
            return self.value_in_text(fact)
        anchor = _norm(fact.anchor)
        lines = self.lines
        for i, norm in enumerate(self.window_norms(window)):
            if anchor in norm and _value_in(" ".join(lines[i : i + window]), fact):
                return True
        return False


def find_fact(text: str, fact: Fact, *, window: int = 3) -> bool:
    """True when `fact` is recoverable from `text` (with its anchor within `window` lines)."""
    return _FactReader(text).holds(fact, window)


def missing_facts(text: str, facts: list[Fact]) -> list[Fact]:
    """The facts of `facts` that `text` no longer holds."""
    reader = _FactReader(text)
    return [f for f in facts if not reader.holds(f, 3)]


def policy_facts(text: str, *, label: str, source: str) -> list[Fact]:
    """The checkable values inside one policy text: amounts, times, phones, emails, numbers."""
    facts = [Fact("money", money_text(a), label, source) for a, _, _ in extract_money(text)]
    facts += [Fact("time", t, label, source) for t in extract_times(text)]
    facts += [Fact("email", m.group(0).casefold(), label, source) for m in EMAIL_RE.finditer(text)]
    masked = _mask_non_phones(text)
    phones = [m for m in PHONE_RE.finditer(masked) if len(phone_digits(m.group(0))) >= 7]
    facts += [Fact("phone", phone_digits(m.group(0)), label, source) for m in phones]
    phone_masked = mask_spans(text, [m.span() for m in phones])
    facts += [Fact("number", str(n), label, source) for n in extract_numbers(phone_masked)]
    unique: dict[tuple[str, str], Fact] = {}
    for fact in facts:
        unique.setdefault((fact.kind, fact.value), fact)
    return list(unique.values())


def critical_facts(org: OrgContext) -> list[Fact]:
    """Every fact each fixture must keep: prices (by service; both ends of a range, a free
    service's "free"), opening times, contacts, and the values inside critical policies."""
    facts = [
        Fact(
            "money",
            money_text(s.price),
            f"price of {s.name}",
            f"org.yaml:services[{i}]",
            anchor=s.name,
        )
        for i, s in enumerate(org.services)
    ]
    facts += [
        Fact(
            "money",
            money_text(s.price_max),
            f"top price of {s.name}",
            f"org.yaml:services[{i}]",
            anchor=s.name,
        )
        for i, s in enumerate(org.services)
        if s.price_max is not None
    ]
    for i, h in enumerate(org.hours):
        facts.append(Fact("time", h.opens, f"{h.days} opens", f"org.yaml:hours[{i}]"))
        facts.append(Fact("time", h.closes, f"{h.days} closes", f"org.yaml:hours[{i}]"))
    if org.contact.phone:
        facts.append(
            Fact("phone", phone_digits(org.contact.phone), "phone", "org.yaml:contact.phone")
        )
    if org.contact.email:
        facts.append(Fact("email", org.contact.email.casefold(), "email", "org.yaml:contact.email"))
    for i, policy in enumerate(org.policies):
        if policy.critical:
            label = f"policy {policy.id}"
            facts += policy_facts(policy.text, label=label, source=f"org.yaml:policies[{i}]")
    return facts
