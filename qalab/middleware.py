"""Response headers every page of the lab carries."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict


class ContentSecurityPolicyMiddleware:
    """Send `settings.QALAB_CONTENT_SECURITY_POLICY` with every response that has none yet.

    Bot and LLM text is escaped on every page; the policy is the second wall: even markup that
    slipped through could run no script but the lab's own files, load nothing from elsewhere and
    post forms nowhere else.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.QALAB_CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


class RejectNulMiddleware:
    """Answer 400 to a request whose path, query or form holds a NUL byte.

    No text column of the database can store one, so any form or filter would otherwise end in
    a database error (a 500) after work was done; refused here, nothing is touched.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            "\x00" in request.path
            or _has_nul(request.GET)
            or (request.method == "POST" and _has_nul(request.POST))
        ):
            return HttpResponseBadRequest(
                "The request contains a NUL byte (\\x00), which no field can store.",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


def _has_nul(data: QueryDict) -> bool:
    return any("\x00" in key or any("\x00" in v for v in data.getlist(key)) for key in data)
