"""Replies as real OpenAI-compatible servers write them (issue 20, point 3): raw newlines in
strings, code fences, text around the JSON; and a repair message that names the real error."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from qalab.llm.structured import validate_reply


class Note(BaseModel):
    title: str
    priority: Literal["low", "high"]
    score: int = Field(ge=1, le=5)
    tags: list[str]


VALID = {"title": "Front desk", "priority": "low", "score": 2, "tags": ["a"]}


def test_raw_newlines_and_tabs_inside_strings_are_accepted() -> None:
    raw = '{"title": "two\nlines\tand a tab", "priority": "high", "score": 5, "tags": []}'
    result, error = validate_reply(raw, Note)
    assert error == "" and result is not None and result.title == "two\nlines\tand a tab"


def test_a_code_fence_around_the_json_is_stripped() -> None:
    for fence in ("```json\n{}\n```", "```\n{}\n```", "  ```JSON \n{}\n```  \n"):
        raw = fence.replace("{}", json.dumps(VALID, indent=2))
        result, error = validate_reply(raw, Note)
        assert error == "" and result == Note(**VALID), raw


def test_the_outermost_object_wins_over_a_nested_part_of_it() -> None:
    # The whole object has a raw newline (strict JSON refuses it) and a nested object: the
    # old search skipped the outer one and reported the nested one's missing fields.
    raw = (
        "Sure! Here it is:\n"
        '{"title": "Desk\nnotes", "priority": "low", "score": 3, "tags": [],'
        ' "meta": {"source": "kb"}}\nHope that helps.'
    )
    result, error = validate_reply(raw, Note)
    assert error == "" and result is not None and result.title == "Desk\nnotes"


def test_a_reply_that_is_json_of_the_wrong_shape_gets_its_own_error() -> None:
    # The model answered JSON: the repair turn tells it what is wrong with that JSON, rather
    # than fishing a nested object out of it.
    result, error = validate_reply(json.dumps({"result": VALID}), Note)
    assert result is None and "title: Field required" in error


def test_when_nothing_validates_the_error_is_the_outermost_objects() -> None:
    raw = 'ok: {"title": "x", "extra": {"priority": "low"}}'
    result, error = validate_reply(raw, Note)
    assert result is None
    assert error.startswith("the JSON does not match the schema")
    assert "priority" in error and "score" in error  # the outer object's gaps, not the inner's


def test_a_reply_with_no_json_quotes_the_parse_error() -> None:
    result, error = validate_reply("I cannot help with that {", Note)
    assert result is None
    assert error == "the reply is not JSON (Expecting value at line 1 column 1)"
