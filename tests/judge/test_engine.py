"""judge_case end to end on a realistic demo-org conversation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from judge.actions import top_actions
from judge.engine import judge_case
from judge.gate import verdict
from judge.schemas import CaseJudgement
from qalab.domain import SEVERITY_ORDER
from tests.judge.factories import demo_manifest, make_case, make_config, quote_is_in_source


def _messy_case():
    return make_case(
        [
            (
                "Hi, I'd like a cleaning. How much is it?",
                "Hi! A hygiene clean is EUR 80 and takes 45 minutes. What's your name? "
                "Your phone? Which date?",
                {"service": "Hygiene clean"},
            ),
            (
                "Mary O'Brien, 087 123 4567, 15 March please",
                "Thanks Mary! New patients get 20% off, so it's 64 EUR. What's your phone?",
                {"full_name": "Mary O'Brien", "phone": "087 123 4576", "preferred_date": "15/03"},
            ),
            ("I told you already", "Great, your request is sent. See you on 15 March!"),
        ],
        expected_status="COMPLETE",
        actual_status="AWAITING_RESPONSE",
    )


def test_it_judges_a_case_with_every_quote_found_in_the_transcript():
    case = _messy_case()
    judgement = judge_case(case, demo_manifest(), config=make_config())
    rules = {(f.rule_id, f.key) for f in judgement.findings}
    # The invented discount's sentence is one defect: its two invented values are one finding,
    # whose subject is the sentence's stretch from the first to the last, verbatim; the
    # disallowed claim corroborates it instead of being reported again.
    [discount] = [f for f in judgement.findings if f.rule_id == "unsupported_facts"]
    assert discount.subject == "20% off, so it's 64 EUR"
    assert "'20%'" in discount.rationale and "'64 EUR'" in discount.rationale
    assert "disallowed_claims" not in {f.rule_id for f in judgement.findings}
    assert {"disallowed_claims", "ungrounded_sentence"} <= set(discount.corroborating)
    assert ("extraction_accuracy", "phone") in rules
    assert ("questions_per_turn", "more than 2 questions per reply") in rules
    assert ("final_status", "expected COMPLETE, got AWAITING_RESPONSE") in rules
    for finding in judgement.findings:  # every subject is verbatim
        assert any(finding.subject in e.quote for e in finding.evidence), finding
    [repeat] = [f for f in judgement.findings if f.rule_id == "repeated_question"]
    assert "phone" in repeat.subject and repeat.subject in repeat.evidence[0].quote
    for finding in judgement.findings:
        assert finding.rationale and finding.fix_text
        for evidence in finding.evidence:
            assert quote_is_in_source(case, evidence), (finding.rule_id, evidence)
    severities = [SEVERITY_ORDER[f.severity] for f in judgement.findings]
    assert severities == sorted(severities)
    assert judgement.passed is False
    assert verdict(judgement.findings, budget_stopped=False) == "FAIL_CRITICAL"
    assert top_actions(judgement.findings)[0].target_layer == "prompt"
    CaseJudgement.model_validate_json(judgement.model_dump_json())


def test_it_passes_a_clean_case():
    case = make_case(
        [
            (
                "Hi, a hygiene clean please. Price?",
                "A hygiene clean is 80 EUR. What's your name and phone?",
            ),
            (
                "Mary O'Brien, 087 123 4567",
                "Thanks Mary! Which date suits you?",
                {"full_name": "Mary O'Brien", "phone": "0871234567", "service": "hygiene clean"},
            ),
            (
                "15 March",
                "Your request for 15 March is sent; reception confirms by phone.",
                {"preferred_date": "2026-03-15"},
            ),
        ]
    )
    judgement = judge_case(case, demo_manifest(), config=make_config())
    assert judgement.findings == []
    assert judgement.scores.overall == 1.0
    assert judgement.passed is True
    assert verdict(judgement.findings, budget_stopped=False) == "PASS_CLEAN"


def test_it_does_not_import_django_celery_or_runs():
    # Every judge module, in a clean interpreter run from the repository root (not the test's
    # working directory, where `import judge` could fail for another reason).
    code = (
        "import importlib, json, pkgutil, sys, judge\n"
        "for m in pkgutil.walk_packages(judge.__path__, 'judge.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'django', 'celery', 'runs'})))"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == []


def test_it_judges_an_empty_case_without_findings_and_fails_it():
    case = make_case([], actual_status=None)
    judgement = judge_case(case, demo_manifest(), config=make_config())
    assert judgement.findings == []
    assert judgement.scores.groundedness is None
    assert judgement.scores.conversation_quality is None
    assert judgement.scores.overall == 0.0
    assert judgement.passed is False
