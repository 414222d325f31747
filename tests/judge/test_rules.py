"""The rules catalog is generated from the check registry, and what it says is what the findings
carry: docs/rules.md is the catalog as generated, a threshold a finding names is the catalog's,
every finding's severity and fix target are ones its rule documents."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from judge.checks import REGISTRY, load_check
from judge.checks.contradicts_manifest import ContradictsManifest
from judge.checks.groundedness import Groundedness
from judge.examples import CONFIG, demo_manifest, find_check, load_examples
from judge.rules import DOCS_PATH, RULES, catalog_rows, rule_for, rules_markdown
from judge.schemas import Finding
from tests.judge.factories import demo_manifest as factory_manifest
from tests.judge.factories import make_case, make_config

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden"

# A KB the groundedness check retrieves from, and a reply sentence it barely touches.
KB = """\
# Treatments and prices
| Treatment | Price | Time |
|---|---|---|
| Check-up and exam | 65 EUR | 30 min |
| Hygiene clean | 80 EUR | 45 min |

# Opening hours
- Monday to Thursday: 08:30 to 18:00
- Friday: 08:30 to 16:00
- Sunday: closed
"""


def test_every_registered_check_carries_its_catalog_rule():
    for check_id in REGISTRY:
        check = load_check(check_id)
        assert check.rule is not None and check.rule.id == check_id
        assert rule_for(check_id) is check.rule
    assert [r.id for r in RULES][: len(REGISTRY)] == list(REGISTRY)


def test_rule_ids_are_unique_and_llm_rules_share_an_entry():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert rule_for("llm:unsupported_fact").layer == "llm"
    assert rule_for("case_error").layer == "pipeline"
    assert rule_for("nope") is None


def test_docs_rules_md_is_the_catalog_as_generated():
    written = DOCS_PATH.read_text(encoding="utf-8")
    assert written == rules_markdown(), "docs/rules.md is stale: run `python -m judge.rules`"


def test_the_docs_name_every_rule_of_the_catalog_with_its_numbers():
    docs = DOCS_PATH.read_text(encoding="utf-8")
    assert [r.id for r in RULES if f"`{r.id}`" not in docs] == []
    for rule in RULES:
        for name, value in rule.thresholds.items():
            assert f"`{name} = {value}`" in docs, (rule.id, name)


def test_every_threshold_is_named_in_its_rule_texts_and_every_placeholder_is_a_threshold():
    for rule in RULES:
        templates = [rule.description, *rule.severity_when.values()]
        templates += rule.fix_target_when.values()
        named = {
            field.split(":")[0].split("!")[0]
            for template in templates
            for _, field, _, _ in string.Formatter().parse(template)
            if field is not None
        }
        assert named == set(rule.thresholds), rule.id
        assert "{" not in rule.summary and "{" not in rule.other_severities, rule.id


def test_the_page_rows_and_the_docs_show_the_same_texts():
    docs = DOCS_PATH.read_text(encoding="utf-8")
    for row in catalog_rows():
        line = next(line for line in docs.splitlines() if line.startswith(f"| `{row.id}` |"))
        plain = line.replace("\\|", "|").replace("&lt;", "<").replace("&gt;", ">")
        plain = plain.replace("&amp;", "&")
        assert row.summary in plain and row.severity in plain and row.fix_target in plain
        assert row.other_severities in plain and row.other_fix_targets in plain


# --------------------------------------------------------------------------- thresholds


def test_the_support_threshold_an_ungrounded_finding_names_is_the_catalogs():
    case = make_case(
        [("can I park?", "We also have free underground parking for all patients.")],
        fixture_text=KB,
    )
    [finding] = Groundedness().run(case, factory_manifest(), make_config())
    support, named = re.search(r"support (\d\.\d+) < (\d\.\d+)\)", finding.rationale).groups()
    rule = rule_for("ungrounded_sentence")
    assert float(named) == rule.thresholds["FINDING_THRESHOLD"]
    assert float(support) < float(named)
    assert f"support score under {named};" in rule.summary


# --------------------------------------------------------------------------- findings vs catalog


def _documented(rule_id: str, severity: str, fix_target: str) -> list[str]:
    """What of a finding its rule does not document (empty when all of it is)."""
    rule = rule_for(rule_id)
    if rule is None:
        return [f"{rule_id}: not in the catalog"]
    wrong = [f"{rule_id}: severity {severity}"] if severity not in rule.severities else []
    if fix_target not in rule.fix_targets:
        wrong.append(f"{rule_id}: fix target {fix_target}")
    return wrong


@pytest.mark.parametrize("report", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.name)
def test_every_golden_finding_carries_a_severity_and_fix_target_its_rule_documents(report):
    findings = json.loads(report.read_text(encoding="utf-8"))["findings"]
    assert findings
    wrong = [
        why
        for f in findings
        for why in _documented(f["rule_id"], f["severity"], f["fix"]["target"])
    ]
    assert wrong == []


def test_every_finding_of_the_labelled_examples_carries_what_its_rule_documents():
    findings: list[Finding] = []
    for loaded in load_examples():
        check = find_check(loaded.example.check)
        assert not isinstance(check, str), check
        findings += check.run(loaded.example.case(), demo_manifest(), CONFIG)
    assert {f.rule_id for f in findings} == set(REGISTRY)
    assert [why for f in findings for why in _documented(f.rule_id, f.severity, f.fix_target)] == []


def test_a_contradiction_the_kb_itself_states_is_the_kbs_to_fix_as_the_catalog_says():
    rule = rule_for("contradicts_manifest")
    turns = [("how much is a clean", "A hygiene clean is 85 EUR.")]
    bot = ContradictsManifest().run(make_case(turns, fixture_text=KB), factory_manifest(), CONFIG)
    kb = ContradictsManifest().run(
        make_case(turns, fixture_text=KB.replace("| 80 EUR |", "| 85 EUR |")),
        factory_manifest(),
        CONFIG,
    )
    assert [f.fix_target for f in bot] == [rule.fix_target] == ["prompt"]
    assert [f.fix_target for f in kb] == ["kb"] and "kb" in rule.fix_target_when
