"""The rules catalog covers every rule a finding can carry."""

from __future__ import annotations

from pathlib import Path

from judge.checks import REGISTRY
from judge.rules import RULES, rule_for


def test_every_registered_check_is_in_the_catalog():
    assert set(REGISTRY) <= {r.id for r in RULES}


def test_rule_ids_are_unique_and_llm_rules_share_an_entry():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert rule_for("llm:unsupported_fact").layer == "llm"
    assert rule_for("case_error").layer == "pipeline"
    assert rule_for("nope") is None


def test_the_readme_names_every_rule_of_the_catalog():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert [r.id for r in RULES if f"`{r.id}`" not in readme] == []
