"""Start run and the rules catalog."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse

from judge.rules import catalog_rows
from qalab.orgs import organizations_for
from runs import services
from runs.admin.common import RunPagesBase, no_membership_hint
from runs.forms import StartRunForm
from runs.models import Run
from runs.tasks import CeleryDispatcher


class StartPages(RunPagesBase):
    def rules_view(self, request: HttpRequest) -> HttpResponse:
        """The rules catalog: every rule a finding can carry, and how scores are computed."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = self._context(request, "Rules catalog", rules=catalog_rows())
        return TemplateResponse(request, "admin/runs/run/rules.html", context)

    def start_view(self, request: HttpRequest) -> HttpResponse:
        if not request.user.has_perm("qalab.start_run"):
            raise PermissionDenied
        orgs = organizations_for(request.user)
        initial = {}
        if reuse := request.GET.get("same_test_set_as"):
            initial["same_test_set_as"] = reuse
        form = StartRunForm(request.POST or None, organizations=orgs, initial=initial)
        if request.method == "POST" and form.is_valid():
            reuse_id = form.cleaned_data["same_test_set_as"]
            if (
                reuse_id
                and not self.get_queryset(request)
                .filter(pk=reuse_id, organization=form.cleaned_data["organization"])
                .exists()
            ):
                form.add_error("same_test_set_as", f"No run #{reuse_id} of this organization.")
            elif (token := form.cleaned_data["start_token"]) and (
                earlier := services.run_get_by_start_token(token)
            ):
                return self._started_already(request, earlier)
            else:
                try:
                    with transaction.atomic():
                        run = services.run_create(
                            organization=form.cleaned_data["organization"],
                            preset=form.cleaned_data["preset"],
                            responder_spec=form.cleaned_data["responder"] or None,
                            responder_budget=form.cleaned_data["responder_budget"],
                            trials=form.cleaned_data["trials"] or 1,
                            reuse_artifacts=reuse_id,
                            as_of=form.cleaned_data["as_of"],
                            created_by=request.user,
                        )
                        if token:  # a simultaneous POST of this form: one of them rolls back
                            services.run_claim_start_token(token=token, run=run)
                        services.run_start(run=run, dispatcher=CeleryDispatcher())
                except services.AlreadyStarted as exc:
                    return self._started_already(request, exc.run)
                except ValueError as exc:
                    form.add_error(None, str(exc))
                else:
                    messages.success(request, f"Run #{run.pk} started.")
                    return HttpResponseRedirect(self._report_url(run))
        context = self._context(
            request,
            "Start run",
            form=form,
            no_membership=no_membership_hint(request.user, has_orgs=orgs.exists()),
        )
        return TemplateResponse(request, "admin/runs/run/start.html", context)

    def _started_already(self, request: HttpRequest, run: Run) -> HttpResponse:
        """A second POST of a Start run form: to the run the first one made."""
        if not self.get_queryset(request).filter(pk=run.pk).exists():
            raise PermissionDenied
        messages.info(request, f"This form already started run #{run.pk}.")
        return HttpResponseRedirect(self._report_url(run))
