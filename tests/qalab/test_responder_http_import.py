"""An org folder's `responder_http` mapping: validated at import, errors name file, field and
value, nothing lands; a valid one is stored and read back; no secret ever in the folder."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from qalab.models import Organization
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
from qalab.orgs import org_context_hash, organization_get_context

pytestmark = pytest.mark.django_db

URL = "http://127.0.0.1:5005/webhooks/rest/webhook"
MAPPING: dict[str, Any] = {
    "method": "post",
    "headers": {"X-Bot-Channel": "qalab", "X-Session": "{{session_id}}"},
    "request": {"sender": "{{session_id}}", "message": "{{message}}"},
    "response": {
        "reply": "$[*].text",
        "status": "$[-1].custom.state",
        "status_map": {"done": "COMPLETE", "open": "AWAITING_RESPONSE", True: "COMPLETE"},
        "extracted": {"phone": "$[-1].custom.slots['phone number']"},
    },
}


def _folder(tmp_path: Path, change: Callable[[dict[str, Any]], Any] | None = None) -> Path:
    folder = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, folder)
    data = yaml.safe_load((folder / "org.yaml").read_text())
    data.update(slug="mapped", responder=URL, responder_http=copy.deepcopy(MAPPING))
    if change:
        change(data)
    (folder / "org.yaml").write_text(yaml.safe_dump(data))
    return folder


def test_a_mapping_imports_and_reads_back(tmp_path):
    call_command("qalab_import_org", str(_folder(tmp_path)))
    org = Organization.objects.get(slug="mapped")
    assert org.responder == URL
    stored = org.responder_http
    assert stored["method"] == "POST" and stored["response"]["reply"] == "$[*].text"
    # YAML's `true:` key becomes the text the bot's JSON `true` is looked up by.
    assert stored["response"]["status_map"]["true"] == "COMPLETE"
    assert stored["history"]["roles"] == {"customer": "user", "assistant": "assistant"}
    context = organization_get_context(organization=org)
    assert context.responder_http is not None
    assert context.responder_http.model_dump(mode="json") == stored
    # How to talk to the bot is no part of what it is tested on: the org hash ignores it.
    assert org_context_hash(context) == org_context_hash(
        context.model_copy(update={"responder_http": None})
    )


def test_a_request_template_may_be_a_json_string(tmp_path):
    def change(d: dict[str, Any]) -> None:
        d["responder_http"]["request"] = '{"sender": "{{session_id}}", "message": "{{message}}"}'

    context = load_org_folder(_folder(tmp_path, change))
    assert context.responder_http is not None
    assert context.responder_http.request == {"sender": "{{session_id}}", "message": "{{message}}"}


def test_a_plain_responder_spec_still_works_and_clears_a_mapping(tmp_path):
    call_command("qalab_import_org", str(_folder(tmp_path)))
    plain = tmp_path / "plain"
    shutil.copytree(DEMO_ORG_DIR, plain)
    data = yaml.safe_load((plain / "org.yaml").read_text())
    data.update(slug="mapped", responder="reference")
    (plain / "org.yaml").write_text(yaml.safe_dump(data))
    call_command("qalab_import_org", str(plain), "--replace")
    org = Organization.objects.get(slug="mapped")
    assert org.responder == "reference" and org.responder_http == {}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        target = data
        for key in parents:
            target = target[key]
        target[last] = value

    return change


BAD = [
    (
        _set("responder_http/response/reply", "$.choices[0.message"),
        "responder_http.response.reply",
        "path '$.choices[0.message': expected [number], [*] or ['key'] at position 9",
    ),
    (
        _set("responder_http/response/status", "meta.state"),
        "responder_http.response.status",
        "path 'meta.state': a path starts with '$'",
    ),
    (
        _set("responder_http/request", {"sender": "{{session_id}}", "text": "{{customer_text}}"}),
        "responder_http.request",
        "text: unknown placeholder {{customer_text}} (known: history, history_before",
    ),
    (
        _set("responder_http/request", '{"sender": "{{session_id}}", '),
        "responder_http.request",
        "template is not JSON: Expecting property name",
    ),
    (
        _set("responder_http/request", {"message": "{{message}}", "when": date(2024, 1, 2)}),
        "responder_http.request",
        "template is not JSON: when: date datetime.date(2024, 1, 2) is not JSON",
    ),
    (
        _set("responder_http/request", {"message": "Earlier: {{history}}"}),
        "responder_http.request",
        "message: {{history}} is a list: use it as a whole value",
    ),
    (
        _set("responder_http/history", {"item": {"who": "{{speaker}}", "text": "{{content}}"}}),
        "responder_http.history.item",
        "who: unknown placeholder {{speaker}} (known: content, role)",
    ),
    (
        _set("responder_http/response/status_map", {"done": "FINISHED"}),
        "responder_http.response.status_map.done",
        "'FINISHED' — should be 'AWAITING_RESPONSE' or 'COMPLETE'",
    ),
    (
        _set("responder_http/method", "DELETE"),
        "responder_http.method",
        "'DELETE' — should be 'POST', 'PUT', 'PATCH' or 'GET'",
    ),
    (
        _set("responder_http/response", {"status": "$.state"}),
        "responder_http.response.reply",
        "missing (required)",
    ),
    (
        _set("responder", "reference"),
        "(top level)",
        "responder_http maps the JSON of an http(s):// bot: set responder to its URL "
        "(responder is 'reference')",
    ),
]


@pytest.mark.parametrize(("change", "field", "says"), BAD)
def test_a_bad_mapping_names_file_field_and_value_and_imports_nothing(
    tmp_path, change, field, says
):
    folder = _folder(tmp_path, change)
    with pytest.raises(CommandError) as exc:
        call_command("qalab_import_org", str(folder))
    message = str(exc.value)
    assert f"{folder / 'org.yaml'}: {field}: " in message
    assert says in message
    assert not Organization.objects.filter(slug="mapped").exists()


SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


@pytest.mark.parametrize(
    ("where", "name", "value"),
    [
        ("headers", "Authorization", "Basic dXNlcjpwYXNzd29yZA=="),
        ("headers", "X-Api-Key", "abc"),
        ("headers", "Ocp-Apim-Subscription-Key", "whatever"),
        ("headers", "X-Channel", f"Bearer {SECRET}"),
        ("headers", "X-Channel", SECRET),
        ("headers", "X-Channel", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"),
        ("headers", "X-Channel", "a8f7d6e5c4b3a2918273645546372819aa"),
        ("query", "access_token", "x"),
        ("query", "lang", f"en&api_key={SECRET}"),
    ],
)
def test_a_credential_in_the_folder_is_refused_and_never_shown(tmp_path, where, name, value):
    folder = _folder(tmp_path, _set(f"responder_http/{where}", {name: value}))
    with pytest.raises(CommandError) as exc:
        call_command("qalab_import_org", str(folder))
    message = str(exc.value)
    assert f"org.yaml: responder_http.{where}: " in message
    assert f"{name!r} looks like a credential" in message
    assert "QALAB_RESPONDER_AUTH_ENV" in message and "QALAB_RESPONDER_AUTH_HEADER" in message
    assert value not in message and SECRET not in message


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({"Content-Length": "12"}, "header 'Content-Length' is set by the lab"),
        ({"Bad Name": "x"}, "header name 'Bad Name' is not a valid HTTP header name"),
        ({"X-Channel": "a\r\nX-Evil: 1"}, "header 'X-Channel': a line break or NUL"),
        ({"X-Channel": "{{message}}"}, "X-Channel: unknown placeholder {{message}}"),
    ],
)
def test_headers_are_plain_and_static(tmp_path, headers, says):
    folder = _folder(tmp_path, _set("responder_http/headers", headers))
    with pytest.raises(CommandError, match=None) as exc:
        call_command("qalab_import_org", str(folder))
    assert says in str(exc.value)


def test_ordinary_ids_are_not_taken_for_credentials(tmp_path):
    headers = {"X-Tenant": "123e4567-e89b-12d3-a456-426614174000", "X-Channel": "web chat"}
    context = load_org_folder(_folder(tmp_path, _set("responder_http/headers", headers)))
    assert context.responder_http is not None and context.responder_http.headers == headers
