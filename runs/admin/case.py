"""The case page (transcript with highlighted evidence, fixture), promote fixture, and a finding
the judge missed added by a reviewer."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from qalab.domain import SEVERITIES
from runs import services
from runs.admin.common import RunPagesBase
from runs.highlight import highlight
from runs.models import Run, RunCase, TriageState
from runs.selectors import run_get_case
from runs.services.missed import (
    NOTE_MAX,
    OTHER_TEXT_MAX,
    QUOTE_MAX,
    MissedFindingError,
    add_missed_finding,
    missed_rule_choices,
    missed_rules,
    run_missed_findings,
)


class MissedFindingForm(forms.Form):
    """A defect the judge missed on one turn of the case (checked again by the service)."""

    turn_index = forms.TypedChoiceField(coerce=int, label="Turn")
    rule_id = forms.ChoiceField(label="Rule")
    other_text = forms.CharField(required=False, max_length=OTHER_TEXT_MAX, label="What (other)")
    severity = forms.ChoiceField(choices=[(s, s) for s in SEVERITIES])
    quote = forms.CharField(max_length=QUOTE_MAX, strip=True, widget=forms.Textarea)
    note = forms.CharField(required=False, max_length=NOTE_MAX, widget=forms.Textarea)

    def __init__(self, *args: Any, turns: list[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["turn_index"].choices = [(i, f"turn {i}") for i in turns]
        self.fields["rule_id"].choices = missed_rule_choices()
        self.fields["severity"].initial = missed_rules()[0][2]  # the first rule's usual one


class CasePages(RunPagesBase):
    def _case(self, run: Run, case_key: str) -> RunCase:
        return get_object_or_404(RunCase.objects.filter(run=run).with_key(case_key))

    def case_view(self, request: HttpRequest, object_id: int, case_key: str) -> HttpResponse:
        run = self._run(request, object_id)
        return self._case_page(request, run, self._case(run, case_key))

    def _case_page(
        self,
        request: HttpRequest,
        run: Run,
        case: RunCase,
        missed_form: MissedFindingForm | None = None,
    ) -> HttpResponse:
        data = run_get_case(run=run, case=case)
        for turn in data["turns"]:
            turn["customer_html"] = highlight(turn["customer"], turn["customer_marks"])
            turn["reply_html"] = highlight(turn["reply"], turn["reply_marks"])
        fixture_docs = []
        if data["fixture"] is not None:
            fixture_docs = [
                {"title": d.title, "html": highlight(d.text, data["fixture_marks"])}
                for d in data["fixture"].documents
            ]
        context = self._context(
            request,
            f"Run #{run.pk} · case {case.key}",
            run=run,
            data=data,
            fixture_docs=fixture_docs,
            can_promote=request.user.has_perm("qalab.promote_fixture")
            and data["fixture"] is not None,
            can_triage=request.user.has_perm("qalab.triage_finding"),
            triage_states=TriageState.choices,
            missed=run_missed_findings(run=run, case=case),
            missed_rules=missed_rules(),
            missed_form=missed_form or MissedFindingForm(turns=[t["index"] for t in data["turns"]]),
            can_add_missed=request.user.has_perm("qalab.triage_finding")
            and run.locked_at is not None
            and bool(data["turns"]),
        )
        return TemplateResponse(request, "admin/runs/run/case.html", context)

    def missed_view(self, request: HttpRequest, object_id: int, case_key: str) -> HttpResponse:
        """Add a finding the judge missed on a turn of the case (the run stays locked); a bad
        quote or rule comes back on the case page as a form error, the reviewer's text kept."""
        run = self._run(request, object_id)
        case = self._case(run, case_key)
        if not request.user.has_perm("qalab.triage_finding"):
            raise PermissionDenied
        turns = list(case.turns.order_by("index").values_list("index", flat=True))
        form = MissedFindingForm(request.POST, turns=turns)
        if form.is_valid():
            try:
                result = add_missed_finding(
                    run=run, case=case, user=request.user, **form.cleaned_data
                )
            except MissedFindingError as exc:
                form.add_error(None if exc.field == "__all__" else exc.field, str(exc))
            else:
                miss = result.missed
                if result.created:
                    messages.success(
                        request,
                        f"Missed {miss.severity} {miss.rule_id} added on turn {miss.turn_index}. "
                        f"Run #{run.pk} stays locked and keeps its verdict.",
                    )
                else:
                    who = miss.reviewer.get_username() if miss.reviewer else "a reviewer"
                    messages.warning(
                        request, f"This miss was already added by {who}; nothing added."
                    )
                back = reverse("admin:runs_run_case", args=[run.pk, case.key])
                return HttpResponseRedirect(f"{back}#missed-{miss.pk}")
        return self._case_page(request, run, case, missed_form=form)

    def promote_view(self, request: HttpRequest, object_id: int, case_key: str) -> HttpResponse:
        run = self._run(request, object_id)
        case = self._case(run, case_key)
        if not request.user.has_perm("qalab.promote_fixture"):
            raise PermissionDenied
        back = reverse("admin:runs_run_case", args=[run.pk, case.key])
        try:
            result = services.fixture_promote(run=run, case=case, user=request.user)
        except services.PromoteError as exc:
            messages.error(request, f"Fixture not promoted: {exc}")
            return HttpResponseRedirect(back)
        promotion = result.promotion
        if result.created:
            messages.success(
                request, f"Fixture written to {promotion.path} (sha256 {promotion.sha256[:12]})."
            )
        else:
            who = promotion.promoted_by.get_username() if promotion.promoted_by else "someone"
            messages.warning(
                request,
                f"This fixture was already promoted to {promotion.path} by {who} on "
                f"{promotion.created_at:%Y-%m-%d %H:%M} (run #{promotion.run_id}); nothing written.",
            )
        return HttpResponseRedirect(back)
