"""Secrets never land in a row, a report or a log line, even when the bot echoes them."""

from __future__ import annotations

import json
import logging

import pytest
from django.db import connection

from qalab.redact import REDACTED, RedactingFilter, redact
from runs.report import report_to_markdown
from runs.report.build import report_build
from tests.runs.helpers import start_run

CANARY = "cAnArY-7f3e9d2b41c8a605"


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("Authorization: Bearer abc.DEF-123_456", "Authorization: Bearer", "abc.DEF-123_456"),
        ("use sk-proj-AbCdEfGhIjKlMnOpQrSt to call", "to call", "sk-proj-AbCdEfGhIjKlMnOpQrSt"),
        ('{"api_key": "zz9-plural-z-alpha"}', '"api_key"', "zz9-plural-z-alpha"),
        ("x-api-key=0123456789abcdef", "x-api-key=", "0123456789abcdef"),
    ],
)
def test_credential_shaped_text_is_redacted(text, kept, gone):
    out = redact(text, secrets=[])
    assert gone not in out and kept in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "A clean is €45, call +353 1 555 0142 or book for 14:30 on 2026-03-15. Ask for Mary.",
        "Our basic appointment costs 40 EUR; the Basic Cleaning package is 55 EUR.",
        "I hate to be the bearer of unwelcome news, but Basic whitening is sold out.",
        "Basic-level checkups and basic       questionnaires are free.",
    ],
)
def test_ordinary_conversation_text_is_left_alone(text):
    assert redact(text, secrets=[]) == text


@pytest.mark.parametrize(
    "token", ["dXNlcjpwYXNzd29yZA==", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "Zx9kQ2mP7r"]
)
def test_real_bearer_and_basic_tokens_are_redacted(token):
    for scheme in ("Bearer", "Basic", "bearer"):
        out = redact(f"header: {scheme} {token} end", secrets=[])
        assert token not in out and f"{scheme} {REDACTED} end" in out


def test_known_secret_values_are_redacted_wherever_they_appear(settings):
    settings.QALAB_LLM_API_KEY = CANARY
    assert redact(f"the key{CANARY}inside a word") == f"the key{REDACTED}inside a word"


def test_the_log_filter_redacts_messages_arguments_and_tracebacks(settings):
    settings.QALAB_LLM_API_KEY = CANARY
    try:
        raise RuntimeError(f"server said {CANARY}")
    except RuntimeError:
        record = logging.LogRecord("qalab", logging.ERROR, __file__, 1, "got %s", (CANARY,), None)
        import sys

        record.exc_info = sys.exc_info()
    RedactingFilter().filter(record)
    assert CANARY not in record.getMessage() and CANARY not in (record.exc_text or "")
    printed = logging.Formatter("%(message)s").format(record)
    assert "RuntimeError: server said [REDACTED]" in printed and CANARY not in printed


@pytest.mark.django_db
def test_a_bot_echoing_its_secrets_leaves_none_in_rows_reports_or_logs(
    demo_org, settings, monkeypatch, caplog
):
    monkeypatch.setenv("QALAB_TEST_BOT_TOKEN", CANARY)
    settings.QALAB_RESPONDER_AUTH_ENV = "QALAB_TEST_BOT_TOKEN"
    caplog.set_level(logging.INFO)
    run = start_run(demo_org, responder="python:tests.responders:echo_secret", scenarios=2)
    assert run.cases.filter(turns__responder_reply__contains=REDACTED).exists()

    with connection.cursor() as cursor:
        for table, columns in {
            "qa_run_turns": ("customer_message", "responder_reply", "extracted::text"),
            "qa_run_cases": ("error",),
            "qa_run_findings": ("subject", "evidence::text", "rationale", "fix_text"),
            "qa_run_top_actions": ("title", "rationale"),
            "qa_llm_calls": ("raw_reply", "detail"),
            "qa_runs": ("error", "config::text", "source::text"),
        }.items():
            if connection.vendor != "postgresql":
                columns = tuple(c.split("::")[0] for c in columns)
            for column in columns:
                cursor.execute(
                    f"SELECT count(*) FROM {table} WHERE {column} LIKE %s", [f"%{CANARY}%"]
                )
                assert cursor.fetchone()[0] == 0, (table, column)
                cursor.execute(
                    f"SELECT count(*) FROM {table} WHERE {column} LIKE %s", ["%sk-live-abcdef%"]
                )
                assert cursor.fetchone()[0] == 0, (table, column)

    report = report_build(run=run)
    exported = json.dumps(report.to_json()) + report_to_markdown(report)
    assert CANARY not in exported and "sk-live-abcdef" not in exported
    assert "19 EUR" in exported  # the rest of the reply is still judged and shown
    assert CANARY not in caplog.text


@pytest.mark.django_db
def test_a_key_pasted_into_a_kb_document_never_reaches_fixtures_or_reports(tmp_path):
    import shutil
    from io import StringIO

    from django.core.management import call_command

    from qalab.models import KbDocument
    from qalab.org_folder import DEMO_ORG_DIR
    from runs.models import RunArtifact

    folder = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, folder)
    doc = folder / "kb" / "booking-and-policies.md"
    key = "sk-live-Zq8wErTy1234567890abcd"
    doc.write_text(
        doc.read_text()
        + f"\n## Integrations\nBooking widget api_key: {key}\nStaff Wi-Fi password: clinic-2024-wifi\n"
    )
    err = StringIO()
    call_command("qalab_import_org", str(folder), stderr=err)
    assert "kb/booking-and-policies.md: a credential-shaped value" in err.getvalue()
    stored = KbDocument.objects.get(slug="booking-and-policies").text
    assert key not in stored and "clinic-2024-wifi" not in stored
    assert "Booking widget api_key: [REDACTED]" in stored  # the rest of the text is kept

    from qalab.models import Organization

    run = start_run(Organization.objects.get(slug="demo"), scenarios=2)
    artifacts = " ".join(a.content for a in RunArtifact.objects.filter(run=run))
    assert "Booking widget" in artifacts  # the document did reach the fixtures
    report = report_build(run=run)
    exported = json.dumps(report.to_json()) + report_to_markdown(report) + artifacts
    assert key not in exported and "clinic-2024-wifi" not in exported
