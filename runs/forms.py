"""The Start run form."""

from __future__ import annotations

import secrets
from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import RegexValidator
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from qalab.models import Organization
from runs.models import GATE_WAIVABLE_STATES, TriageState
from runs.presets import MAX_TRIALS, PRESETS
from runs.simulator.adapters import web_spec_refusal
from runs.simulator.canary import FAULTS


def responder_help(python_allowed: tuple[str, ...]) -> SafeString:
    """Every kind of responder the Start run form takes, each with an example; `python:` only
    with the specs an operator registered (QALAB_WEB_PYTHON_RESPONDERS), the only ones the web
    takes (`web_spec_refusal`)."""
    prompt_dir = (settings.QALAB_RESPONDER_PROMPT_DIRS or ("docs/prompts",))[0]
    kinds = [
        ("reference", "the lab's built-in bot, answering from the organization's KB"),
        (
            "canary:invent_price+wrong_hours",
            "the reference bot with planted faults, to check the lab catches them (faults: "
            + ", ".join(FAULTS)
            + "); one of the lab's own runs, marked in the runs list",
        ),
        (
            f"openai-chat:MODEL?prompt=file:{prompt_dir}/NAME.md&kb=retrieve:4",
            "a model with your system prompt and the 4 best KB passages per turn (without "
            "MODEL: QALAB_RESPONDER_MODEL; kb=full and kb=none work too)",
        ),
        (
            "https://bot.example.com/qalab/chat",
            "your deployed bot, any http(s)://host/path on an address the outbound policy "
            "allows (QALAB_RESPONDER_ALLOWED_HOSTS)",
        ),
    ]
    if python_allowed:
        kinds.append(
            (
                "python:module:function",
                "a Python bot, here only one registered in QALAB_WEB_PYTHON_RESPONDERS: "
                + ", ".join(python_allowed),
            )
        )
    return format_html(
        "Leave empty for the organization's responder (default: <code>reference</code>). One "
        'of (docs/responders.md):<ul class="qa-responder-kinds">{}</ul>',
        format_html_join("", "<li><code>{}</code>: {}</li>", kinds),
    )


class StartRunForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.none())
    preset = forms.ChoiceField(
        choices=[
            (
                p.name,
                f"{p.label} — {p.scenarios} scenarios, {p.max_turns} turns, "
                f"{p.token_budget:,} tokens",
            )
            for p in PRESETS.values()
        ],
        initial="quick",
    )
    # Its help lists every kind of responder the web takes (`responder_help`, set per form).
    responder = forms.CharField(required=False, max_length=500)
    responder_budget = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=2**31 - 1,
        label="Bot token budget",
        help_text="Tokens the bot itself may spend when the lab runs it (openai-chat:, the "
        "reference bot), metered apart from the preset's budget, which covers the lab's roles "
        "(generator, simulator, judge). Empty: QALAB_RESPONDER_TOKEN_BUDGET, else the preset's "
        "budget.",
    )
    trials = forms.IntegerField(
        required=False,
        initial=1,
        min_value=1,
        max_value=MAX_TRIALS,
        label="Trials",
        help_text="Play every scenario this many times against the bot, with the same customer "
        "plan: the report gives each scenario's pass rate, pass^k (all trials pass) and pass@k, "
        "and marks the findings that only some trials show as flaky. Both token budgets are "
        "multiplied by the trials.",
    )

    same_test_set_as = forms.IntegerField(
        required=False,
        min_value=1,
        label="Same test set as run #",
        help_text="Reuse that run's fixtures, manifest and scenarios (no generation tokens), "
        "so the delta measures the responder and nothing else.",
    )
    as_of = forms.DateField(
        required=False,
        label="As of (reference date)",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Advanced: the day the scenarios' dates count from (default: today). The same "
        "organization, preset, seed and date give identical test sets on any day; a reused test "
        "set keeps its own date.",
    )

    # One-time token of this form, tied to the run it makes: a second POST of the same form
    # (a double click, a retry) leads to that run instead of making another.
    start_token = forms.CharField(
        required=False,
        widget=forms.HiddenInput,
        max_length=64,
        validators=[RegexValidator(r"^[A-Za-z0-9_-]{16,64}$", "not a Start run form token")],
    )

    def __init__(self, *args: Any, organizations: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["start_token"].initial = secrets.token_urlsafe(24)
        self.fields["responder"].help_text = responder_help(settings.QALAB_WEB_PYTHON_RESPONDERS)
        self.fields["organization"].queryset = organizations
        if organizations.count() == 1:
            self.fields["organization"].initial = organizations.first()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        org = data.get("organization")
        spec = data.get("responder") or (org.responder if org else "") or "reference"
        refusal = web_spec_refusal(spec, python_allowed=settings.QALAB_WEB_PYTHON_RESPONDERS)
        if refusal:
            field = "responder" if data.get("responder") else None
            prefix = "" if field else "the organization's default "
            self.add_error(field, prefix + refusal)
        return data


class FindingIdsField(forms.Field):
    """The ids of the findings ticked in the report (one `finding` value per checkbox)."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {
        "required": "select at least one finding",
        "invalid": "finding ids must be whole numbers",
    }

    def to_python(self, value: Any) -> list[int]:
        if not value:
            return []
        values = value if isinstance(value, list | tuple) else [value]
        try:
            # A grouped finding's checkbox carries all its ids: "12,13,14".
            return [int(v) for item in values for v in str(item).split(",") if v.strip()]
        except (TypeError, ValueError) as exc:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from exc


class TriageForm(forms.Form):
    """One triage decision applied to one or several findings of a run."""

    finding = FindingIdsField()
    state = forms.ChoiceField(choices=TriageState.choices)
    note = forms.CharField(required=False, max_length=2000, strip=True)
    gate_waived = forms.BooleanField(
        required=False,
        label="does not fail the gate",
        help_text="Won't fix / false positive only. Later runs that carry this decision do not "
        "count the finding toward FAIL_CRITICAL; this run's verdict stays as it is.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("gate_waived") and data.get("state") not in GATE_WAIVABLE_STATES:
            self.add_error(
                "gate_waived",
                "'does not fail the gate' is only for won't fix or false positive",
            )
        return data
