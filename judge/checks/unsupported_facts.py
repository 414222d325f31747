"""Check: money, times, durations, percentages, phones, emails and URLs a reply invents."""

from __future__ import annotations

import re
from decimal import Decimal

from generator.schemas import Manifest
from judge.arithmetic import RESULT, rates_in
from judge.checks.base import Check, Rule
from judge.facts import (
    Fact,
    SupportIndex,
    conversation_counts,
    day_spans,
    days_of_month,
    extract_facts,
    money_text,
    readable_text,
)
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.text import quote_around, sentence_at, split_sentences

_LABELS = {
    "money": "the price",
    "time": "the time",
    "duration": "the duration",
    "percent": "the percentage",
    "phone": "the phone number",
    "email": "the email address",
    "url": "the web address",
}
# Regex extraction is exact for money/contacts; a bare "6:00" or "2 hours" is more often
# conversational, so those carry less confidence.
_CONFIDENCE = {"time": 0.9, "duration": 0.8}
_FIX = {
    "money": "Instruct the responder to quote only prices from the KB price list and to say a "
    "price will be confirmed by the team otherwise; if {value} is a real price, add it to the KB.",
    "time": "Instruct the responder to state opening hours and times only as written in the KB "
    "and never to promise slots it cannot see; if {value} is correct, add it to the KB.",
    "duration": "Instruct the responder to give durations and response times only from the KB; "
    "if {value} minutes is correct, add it to the KB.",
    "percent": "Instruct the responder never to quote percentages (discounts, rates) that are "
    "not in the KB.",
    "phone": "Instruct the responder to give only the contact numbers listed in the KB.",
    "email": "Instruct the responder to give only the email addresses listed in the KB.",
    "url": "Instruct the responder to link only to the web addresses listed in the KB.",
}


def support_index(case: CaseTranscript, manifest: Manifest) -> SupportIndex:
    """Facts a reply may state: the fixture text plus the manifest's ground truth."""
    index = SupportIndex(default_currency=manifest.currency)
    index.add_text(case.fixture.text)
    for service in manifest.services:
        for amount in (service.price, service.price_max):
            if amount is not None:
                index.add_value("money", f"{money_text(amount)} {manifest.currency}")
        for minutes in (service.duration_minutes, service.duration_max_minutes):
            if minutes is not None:
                index.add_value("duration", str(minutes))
        if service.price_text or service.duration_text:
            index.add_text(f"{service.price_text}\n{service.duration_text}")
    for hours in manifest.hours:
        index.add_text(f"{hours.opens} {hours.closes}")
    for contact in manifest.contacts:
        index.add_text(contact.value)
    for policy in manifest.policies:
        index.add_text(policy.text)
    return index


_BARE_HOUR = re.compile(r"\W*(1[0-2]|0?[1-9])(?:\s*(?:please|pls|ish|o'?clock))?\W*", re.I)


def unsupported_in_turns(case: CaseTranscript, manifest: Manifest) -> list[tuple[int, str, Fact]]:
    """(turn index, reply, fact) for every fact no source supports; one per fact per turn."""
    index = support_index(case, manifest)
    found: list[tuple[int, str, Fact]] = []
    said = ""  # the customer's messages so far
    # The conversation so far, replies included, read message by message (once each).
    shifts: list[str] = []
    stated: list[str] = []
    all_rates: set[Decimal] = set()
    for turn in case.turns:
        # What the customer said so far (this turn's message included) is fair to repeat back.
        index.add_text(turn.customer)
        # "11" as the whole answer to "what time?" names an hour, morning or afternoon.
        if hour := _BARE_HOUR.fullmatch(turn.customer):
            for clock in (int(hour.group(1)), int(hour.group(1)) + 12):
                index.add_value("time", f"{clock % 24:02d}:00")
        said += "\n" + turn.customer
        counts = conversation_counts(f"{said}\n{turn.reply}")
        facts = extract_facts(turn.reply, default_currency=manifest.currency)
        for message in (turn.customer, turn.reply):
            read = extract_facts(readable_text(message), default_currency=manifest.currency)
            shifts += [f.value for f in read if f.kind == "duration"]
            stated += [f.value for f in read if f.kind == "money"]
            all_rates |= rates_in(message)
        # "from the 3rd to the 10th" ... "7 days": days counted between two days one message
        # names (the customer's or the reply's).
        spans_of_days = day_spans(days_of_month(turn.customer)) | day_spans(
            days_of_month(turn.reply)
        )
        # Besides the supported percentages: rates in words the reply itself applies ("half
        # price", "a third off"), and for a figure presented as a result those of the whole
        # conversation. An invented "20% off" is no operand.
        own_rates = rates_in(turn.reply)
        times = [f for f in facts if f.kind == "time"]
        spans = {
            (int(b.value[:2]) * 60 + int(b.value[3:]) - int(a.value[:2]) * 60 - int(a.value[3:]))
            % (24 * 60)
            for a in times
            for b in times
        }
        seen: set[str] = set()
        theirs = [f for f in extract_facts(said) if f.kind in ("phone", "email")]
        for fact in facts:
            if fact.key in seen or index.supports(fact) or _misread(fact, theirs):
                continue
            listed = [f.value for f in facts if f.kind == "money" and f.end <= fact.start]
            result = _presented_as_result(turn.reply, fact, facts)
            if index.derives(
                fact,
                counts,
                shifts,
                stated,
                result=result,
                listed=listed,
                rates=all_rates if result else own_rates,
                spans=spans,
                day_spans=spans_of_days,
            ):
                index.add(fact)  # a total worked out once may be repeated
                continue
            seen.add(fact.key)
            found.append((turn.index, turn.reply, fact))
    return found


def _presented_as_result(reply: str, fact: Fact, facts: list[Fact]) -> bool:
    """The reply introduces `fact` as worked out: a result word ("so", "total", "=", "comes
    to") between the start of its sentence (or the figure before it) and the figure."""
    sentence = sentence_at(split_sentences(reply), fact.start)
    start = max(
        [reply.rfind("\n", 0, fact.start) + 1]
        + ([sentence.start] if sentence else [])
        + [f.end for f in facts if f.end <= fact.start]
    )
    return bool(RESULT.search(reply[start : fact.start]))


def _misread(fact: Fact, theirs: list[Fact]) -> bool:
    """`fact` is the customer's own phone or email read back wrongly (two digits swapped, the
    domain changed): not an invented fact but a contradiction of the customer, which
    `partner_contradiction` reports."""
    for other in theirs:
        if other.kind != fact.kind:
            continue
        if fact.kind == "phone":
            a, b = fact.value[-10:], other.value[-10:]
            if len(a) == len(b) and (
                sorted(a) == sorted(b) or sum(x != y for x, y in zip(a, b, strict=True)) <= 2
            ):
                return True
        else:
            mine, _, domain = fact.value.partition("@")
            local, _, their_domain = other.value.partition("@")
            if mine == local or (
                domain == their_domain and re.sub(r"[._-]", "", mine) == re.sub(r"[._-]", "", local)
            ):
                return True
    return False


_PLURALS = {
    "money": "the prices",
    "time": "the times",
    "duration": "the durations",
    "percent": "the percentages",
    "phone": "the phone numbers",
    "email": "the email addresses",
    "url": "the web addresses",
}


def _stated(reply: str, facts: list[Fact]) -> str:
    """ "the time '05:45'", "the times '05:45' and '23:15'", "the price '€14' and the time
    '9pm'": what a sentence states that nothing supports, each value as the reply wrote it."""
    kinds: dict[str, list[str]] = {}
    for fact in facts:
        kinds.setdefault(fact.kind, []).append(f"'{reply[fact.start : fact.end]}'")
    parts = [
        f"{_LABELS[kind] if len(values) == 1 else _PLURALS[kind]} {_and(values)}"
        for kind, values in kinds.items()
    ]
    return _and(parts)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


class UnsupportedFacts(Check):
    """Guarantees: every money amount, time, duration, percentage, phone, email or URL in a
    reply that is absent (after format normalization) from the fixture, the manifest and the
    customer's messages up to that turn is reported, quoting the reply sentence that states it:
    one critical finding per sentence and turn, naming every such value of the sentence (one
    defect = one finding: "open 05:45 to 23:15" with both times wrong is one finding)."""

    rule = Rule(
        "unsupported_facts",
        "critical",
        "deterministic",
        "prompt",
        "A money amount, time, duration, percentage, phone, email or URL in a reply that is in "
        "neither the case's fixture, the manifest nor what the customer said.",
        action="Stop stating facts the KB does not hold",
    )
    needs = frozenset({"kb"})

    def run(self, case: CaseTranscript, manifest: Manifest, config: JudgeConfig) -> list[Finding]:
        # (turn, quote) -> the reply and the unsupported facts its sentence states, in order.
        by_sentence: dict[tuple[int, str], tuple[str, list[Fact]]] = {}
        for turn_index, reply, fact in unsupported_in_turns(case, manifest):
            sentence = sentence_at(split_sentences(reply), fact.start)
            quote = (
                quote_around(reply, sentence, fact.start, fact.end)
                if sentence
                else reply[fact.start : fact.end]
            )
            by_sentence.setdefault((turn_index, quote), (reply, []))[1].append(fact)
        return [
            self._finding(case, turn_index, quote, reply, facts)
            for (turn_index, quote), (reply, facts) in by_sentence.items()
        ]

    def _finding(
        self, case: CaseTranscript, turn_index: int, quote: str, reply: str, facts: list[Fact]
    ) -> Finding:
        first, last = facts[0], facts[-1]
        # Verbatim: the value as the reply wrote it ("€45"), or the stretch of the sentence
        # from the first value to the last ("05:45 to 23:15"); the fingerprint keys the
        # canonical values ("money:45 EUR").
        span = reply[first.start : last.end]
        subject = span if span in quote else reply[first.start : first.end]
        values: dict[str, list[str]] = {}
        for fact in facts:
            values.setdefault(fact.kind, []).append(fact.value)
        fixes = [_FIX[kind].format(value=" or ".join(vs)) for kind, vs in values.items()]
        several = len(facts) > 1
        return self.finding(
            case,
            turn_index=turn_index,
            subject=subject,
            key=" + ".join(f.key for f in facts),
            evidence=[Evidence(source="reply", quote=quote, turn=turn_index)],
            rationale=(
                f"The reply states {_stated(reply, facts)}, which "
                f"{'appear' if several else 'appears'} nowhere in the KB fixture, the manifest or "
                "the customer's messages."
            ),
            fix_text=" ".join(fixes),
            effort="S",
            confidence=max(_CONFIDENCE.get(f.kind, 1.0) for f in facts),
        )
