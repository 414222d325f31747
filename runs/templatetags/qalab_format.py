"""Shares, score changes and long words as the lab's pages show them: `{% load qalab_format %}`.

`{{ v|pct }}` is `runs.report.trials.share_pct` (a whole percentage that never rounds up to
100% or down to 0% unless it is exactly that: 0.998 is 99%, never 100%); `{{ used|pct_of:total
}}` the share of a total; `{{ change|pts }}` a change in percentage points with its sign and one
decimal (+0.4 pts, never +0 pts for a change that is not nothing); `{{ word|soft_breaks }}` a
long identifier that may wrap after its underscores (AWAITING_RESPONSE, correction_mid_conversation).
"""

from __future__ import annotations

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from runs.report.words import share_pct

register = template.Library()


@register.filter
def pct(value: float | str | None) -> str:
    """0.998 -> '99%', 1.0 -> '100%', 0.001 -> '1%'; None, or a value the page does not have
    (a missing key renders as ''), -> 'n/a'."""
    if value is None or value == "":
        return "n/a"
    return share_pct(float(value))


@register.filter
def pct_of(part: float | None, total: float | None) -> str:
    """`part` as a share of `total` ('n/a' without a total)."""
    if part is None or not total:
        return "n/a"
    return share_pct(float(part) / float(total))


@register.filter
def pts(change: float | None) -> str:
    """A change of a share in percentage points: 0.004 -> '+0.4', -0.25 -> '-25.0', 0 -> '0.0';
    the unit ('pts') is the template's."""
    if change is None:
        return "—"
    value = float(change) * 100
    if value == 0:
        return "0.0"
    shown = f"{value:+.1f}"
    # A change too small for one decimal is not shown as none.
    if shown in ("+0.0", "-0.0"):
        return "+<0.1" if value > 0 else "-<0.1"
    return shown


@register.filter
def soft_breaks(value: object) -> SafeString:
    """The escaped text with a line-break opportunity (<wbr>) after each underscore, so a
    table column of snake_case names can be narrower than its longest name."""
    escaped = str(conditional_escape(value))  # entities (&amp; &#x27;) hold no underscore
    return mark_safe(escaped.replace("_", "_<wbr>"))  # noqa: S308 -- escaped above
