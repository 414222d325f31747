"""The Markdown export carries a bot's text as inert text: no live link, image, HTML or table
break, wherever the text lands (verdict reason, findings, evidence, fixes, turns)."""

from __future__ import annotations

import re

import pytest

from runs.report import report_to_markdown
from runs.report.build import report_build
from tests.runs.helpers import start_run

pytestmark = pytest.mark.django_db


def test_links_and_markup_a_bot_writes_are_inert_in_the_markdown(demo_org):
    run = start_run(demo_org, responder="python:tests.responders:markdown_links", scenarios=2)
    markdown = report_to_markdown(report_build(run=run))
    assert "javascript:" in markdown  # the text is there, as text
    assert re.search(r"(?<!\\)\]\(", markdown) is None  # no unescaped "](": no link, no image
    assert "<javascript:" not in markdown  # no autolink
    assert "| forged | cell |" not in markdown  # no forged table cells
    assert "19 EUR" in markdown  # the invented price is reported
