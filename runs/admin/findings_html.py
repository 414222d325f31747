"""The report page's finding entries (one `<li>` per finding group), rendered in Python.

A run with hundreds of findings made this loop most of the page's time in the template engine
(~40 tags per entry; issue 19, point 2: the page in at most 150 ms with 400 findings). This
writes the same markup the template loop wrote, character for character, escaping every value
as Django's autoescape does (`django.utils.html.escape`).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape as _escape
from typing import Any

from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from runs.report.page import FindingGroup

_CORROBORATING = "other rules that flagged the same reply span"
_UNCONFIRMED = "a second LLM pass did not confirm it as critical"
_FLAKY = "the bot did this in some trials of the scenario and not in others"
_WAIVED = "won't fix / false positive: does not count toward FAIL_CRITICAL in runs that carry it"


def e(value: Any) -> str:
    """A value as `{{ value }}` shows it under autoescape (str, int or None)."""
    return _escape(str(value))


class _Urls:
    """`{% url %}` of the run's case and report pages, each reversed once per render."""

    def __init__(self, run_pk: int) -> None:
        self.run_pk = run_pk
        self._case: dict[str, str] = {}
        self._report: dict[int, str] = {}

    def case(self, key: str) -> str:
        url = self._case.get(key)
        if url is None:
            url = self._case[key] = e(reverse("admin:runs_run_case", args=[self.run_pk, key]))
        return url

    def report(self, run_id: int) -> str:
        url = self._report.get(run_id)
        if url is None:
            url = self._report[run_id] = e(reverse("admin:runs_run_report", args=[run_id]))
        return url


def _turn(turn: int | None) -> str:
    """`{{ turn|default:0 }}`."""
    return str(turn or 0)


def _head(g: FindingGroup, severity: str, urls: _Urls, can_triage: bool) -> str:
    f = g.finding
    n = len(g.items)
    parts = ["<div>"]
    if can_triage:
        others = f" and its {n - 1} other occurrence(s)" if n > 1 else ""
        parts.append(
            f'<input type="checkbox" name="finding" value="{e(g.ids)}" '
            f'aria-label="select finding {f.id}{others}"> '
        )
    parts.append(f'<span class="qa-badge qa-sev-{e(severity)}">{e(severity)}</span>\n')
    parts.append(f"        <code>{e(f.rule_id)}</code>")
    if f.subject:
        parts.append(f" · {e(Truncator(f.subject).chars(80))}")
    parts.append("\n        · ")
    if f.case:
        turn = f", turn {f.turn}" if f.turn is not None else ""
        parts.append(
            f'<a class="qa-case-link" href="{urls.case(f.case)}#turn-{_turn(f.turn)}">'
            f"case {e(f.case)}{turn}</a>"
        )
    else:
        parts.append("run-wide")
    parts.append(f"\n        · {e(f.detector)}")
    if f.corroborating:
        also = ", ".join(e(c) for c in f.corroborating)
        parts.append(
            f' · <span class="qa-corroborating" title="{_CORROBORATING}">also {also}</span>'
        )
    if not f.confirmed:
        parts.append(f' <span class="qa-badge" title="{_UNCONFIRMED}">unconfirmed</span>')
    if g.flaky:
        parts.append(f' <span class="qa-badge qa-flaky" title="{_FLAKY}">{e(g.flaky)}</span>')
    parts.append(f"\n        · confidence {floatformat(f.confidence, 2)}\n")
    t = f.triage
    title = f"last by {e(t.reviewer)} at {e(t.at)}" if t.reviewer else "not triaged yet"
    parts.append(
        f'        · <span class="qa-triage-state qa-tri-{e(g.state)}" title="{title}">'
        f"{e(g.state_label)}</span>"
    )
    if t.carried_from:
        parts.append(
            f'\n        · <a class="qa-carried" href="{urls.report(t.carried_from)}" '
            f'title="inherited by fingerprint">carried from run {t.carried_from}</a>'
        )
    if t.gate_waived:
        parts.append(
            f' <span class="qa-badge qa-gate-waived" title="{_WAIVED}">does not fail the gate</span>'
        )
    parts.append("\n      </div>\n")
    return "".join(parts)


def _body(g: FindingGroup, urls: _Urls) -> str:
    f = g.finding
    evidence = "".join(
        f"<li><span>{e(ev.source)}{'' if ev.turn is None else f' turn {ev.turn}'}</span> "
        f"<q>{e(ev.quote)}</q></li>"
        for ev in f.evidence
    )
    parts = [
        f"      <p>{e(f.rationale)}</p>\n",
        f'      <ul class="qa-evidence">{evidence}</ul>\n',
        f'      <p class="qa-fix"><strong>Fix ({e(f.fix.target)}, effort {e(f.effort)}):</strong> '
        f"{e(f.fix.text)}</p>\n      ",
    ]
    n = len(g.items)
    if n > 1:
        cases = len(g.cases)
        occurrences = ", ".join(
            f'<a id="occ-{o.id}" href="{urls.case(o.case or "-")}#turn-{_turn(o.turn)}" '
            f'title="finding #{o.id}">{e(o.case)}{"" if o.turn is None else f" turn {o.turn}"}</a>'
            for o in g.items
        )
        parts.append(
            f'<p class="qa-occurrences"><strong>{n} occurrences</strong> in {cases} '
            f"case{'' if cases == 1 else 's'}:\n        {occurrences}</p>\n      "
        )
    else:
        parts.append(f'<span id="occ-{f.id}"></span>')
    parts.append("\n      ")
    parts.extend(
        f'<p class="qa-triage-note"><strong>Note</strong> ({e(t.reviewer or "")}): {e(t.note)}</p>'
        for t in g.notes
    )
    parts.append("\n    </li>\n  ")
    return "".join(parts)


def finding_items_html(
    groups: Sequence[FindingGroup], *, severity: str, run_pk: int, can_triage: bool
) -> SafeString:
    """The `<li>` of each group of one severity, as the report template's loop wrote them."""
    urls = _Urls(run_pk)
    return mark_safe(  # noqa: S308 -- every value above is escaped
        "".join(
            f'\n    <li class="qa-finding qa-sev-{e(severity)}" id="finding-{g.finding.id}">\n'
            f"      {_head(g, severity, urls, can_triage)}{_body(g, urls)}"
            for g in groups
        )
    )
