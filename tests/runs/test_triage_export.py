"""The export of a triaged organization round-trips (issue 36, acceptance 3):
`qalab_calibrate --from-triage ORG --out FILE` writes the labelled cases as dialogues, and
`qalab_calibrate --natural` on that file gives, for every rule the export says round-trips,
the precision (and label count) the accuracy page gives (`runs.accuracy.rule_precision`).

Runs are real (offline engine, inline) against bots defined here: the reference bot with
planted defects (invented price, wrong hours, a repeated question, too many questions, a self
contradiction), and one that extracts every field wrong and says COMPLETE from its second reply
on (the scenario checks: `final_status`, `extraction_accuracy`), a real bot's runs, not the
lab's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judge.dialogues import Dialogue, judge_dialogue
from judge.natural import LabelledDialogue
from qalab.llm.base import NullLedger
from qalab.llm.offline import OfflineEngine
from qalab.models import Organization
from runs.accuracy import rule_precision, triage_labels
from runs.inline import InlineDispatcher
from runs.models import FindingTriage, MissedFinding, Run, RunFinding, TriageState
from runs.services.case_judging import file_judge_config
from runs.simulator.canary import CanaryResponder
from runs.simulator.contract import ResponderRequest
from tests.runs.helpers import start_run

pytestmark = pytest.mark.django_db

BOT = "python:tests.runs.test_triage_export:bot"
INTAKE_BOT = "python:tests.runs.test_triage_export:intake_bot"
_FAULTY = CanaryResponder(
    "canary:invent_price+wrong_hours+repeat_question+too_many_questions+contradict_self"
)
STATES = (TriageState.CONFIRMED, TriageState.FALSE_POSITIVE, TriageState.WONT_FIX)


def bot(request: dict[str, Any]) -> dict[str, Any]:
    """The reference bot with the planted defects, called in process."""
    reply = _FAULTY.respond(
        ResponderRequest.model_validate(request),
        engine=OfflineEngine(ledger=NullLedger()),
        purpose="test bot",
    )
    return reply.model_dump(mode="json")


_WRONG_FIELDS = CanaryResponder("canary:wrong_extraction")


def intake_bot(request: dict[str, Any]) -> dict[str, Any]:
    """The reference bot extracting every field wrong and saying COMPLETE from its second
    reply on, whatever is still missing."""
    parsed = ResponderRequest.model_validate(request)
    reply = _WRONG_FIELDS.respond(
        parsed, engine=OfflineEngine(ledger=NullLedger()), purpose="test intake bot"
    )
    if any(m.role == "assistant" for m in parsed.messages):
        reply = reply.model_copy(update={"status": "COMPLETE"})
    return reply.model_dump(mode="json")


def _triage(run: Run, reviewer: Any) -> list[RunFinding]:
    """Decide the run's findings by hand, in turn confirmed / false positive / won't fix,
    leaving every fourth one open (no decision); a second, newer decision on the first finding
    makes it a false positive. Returns the findings left open."""
    findings = list(run.findings.filter(case__isnull=False).order_by("position"))
    open_ones = []
    for i, finding in enumerate(findings):
        if i % 4 == 3:
            open_ones.append(finding)
            continue
        FindingTriage.objects.create(
            run=run, finding=finding, state=STATES[i % 3], reviewer=reviewer
        )
    FindingTriage.objects.create(
        run=run, finding=findings[0], state=TriageState.FALSE_POSITIVE, reviewer=reviewer
    )
    return open_ones


def _miss(run: Run, reviewer: Any) -> MissedFinding:
    case = run.cases.order_by("scenario_key").first()
    assert case is not None
    turn = case.turns.order_by("index").first()
    assert turn is not None
    return MissedFinding.objects.create(
        run=run,
        case=case,
        turn_index=turn.index,
        rule_id="ignored_question",
        severity="major",
        quote=turn.responder_reply[:20],
        note="the customer's question went unanswered",
        reviewer=reviewer,
        fingerprint="f" * 64,
    )


def _calibrate(*args: str, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / f"figures-{len(list(tmp_path.glob('figures-*.json')))}.json"
    call_command("qalab_calibrate", *args, "--json", str(out))
    return json.loads(out.read_text())


def test_the_export_round_trips(
    demo_org: Organization, django_user_model: Any, tmp_path: Path
) -> None:
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    first = start_run(demo_org, responder=BOT, scenarios=3, seed=4)
    open_ones = _triage(first, reviewer)
    assert open_ones, "the test needs findings left open"
    _miss(first, reviewer)
    # A later run carries the decisions (copies, no new labels) and gets one of its own.
    later = start_run(demo_org, responder=BOT, scenarios=3, seed=4)
    assert later.triage.filter(carried_from_run=first.id).exists()
    new_label = later.findings.filter(case__isnull=False).order_by("-position").first()
    assert new_label is not None
    FindingTriage.objects.create(
        run=later, finding=new_label, state=TriageState.CONFIRMED, reviewer=reviewer
    )

    folder = tmp_path / "export"
    exported = _calibrate(
        "--from-triage", demo_org.slug, "--out", str(folder / "triage.jsonl"), tmp_path=tmp_path
    )["from_triage"]
    page = rule_precision(triage_labels(demo_org))
    lines = [json.loads(x) for x in (folder / "triage.jsonl").read_text().splitlines()]

    # The figures are the page's, exactly; the miss is counted apart.
    assert exported["labels"] == sum(p.labels for p in page.values())
    for rule, p in page.items():
        row = exported["rules"][rule]
        assert (row["labels"], row["right"]) == (p.labels, p.right)
        assert row["precision"] == round(p.value, 4)  # type: ignore[arg-type]
        assert row["interval"] == [round(p.low, 4), round(p.high, 4)]  # type: ignore[arg-type]
    assert exported["rules"]["ignored_question"]["misses"] == 1

    # One line per case with a label or a miss: the later run's case with its new label too.
    assert {line["source"]["run"] for line in lines} == {first.id, later.id}
    unlabelled = [u for line in lines for u in line["unlabelled"]]
    assert len([u for u in unlabelled if u]) >= len(open_ones)
    assert any(label.get("missed") for line in lines for label in line["labels"])

    holding = exported["round_trip_rules"]
    assert {"unsupported_facts", "repeated_question", "contradicts_manifest"} <= set(holding)
    natural = _calibrate("--natural", str(folder), tmp_path=tmp_path)["natural"]["all"]
    for rule in holding:
        assert natural[rule]["findings"] == page[rule].labels, rule
        assert natural[rule]["correct"] == page[rule].right, rule
        assert natural[rule]["precision"] == round(page[rule].value, 4), rule  # type: ignore[arg-type]
    # The miss is a label of its rule on the natural side (recall), never a finding.
    assert natural["ignored_question"]["labels"] >= 1


def test_a_rule_whose_findings_a_dialogue_does_not_give_back_is_named(
    demo_org: Organization, django_user_model: Any, tmp_path: Path
) -> None:
    """A labelled finding re-judging cannot give (here: a finding a test adds to the run, as
    the LLM judge's would be) takes its rule out of the round-trip claim, with the reason."""
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    run = start_run(demo_org, responder=BOT, scenarios=1, seed=4, lock=False)
    template = run.findings.filter(case__isnull=False, turn_index__isnull=False).first()
    assert template is not None
    added = RunFinding.objects.create(
        run=run,
        case=template.case,
        position=run.findings.count(),
        turn_index=template.turn_index,
        rule_id="unsafe_advice",
        severity="critical",
        subject="a dose",
        evidence=template.evidence,
        rationale="added by the test",
        fix_target="prompt",
        fix_text="fix it",
        effort="S",
        confidence=0.9,
        detector="llm",
        fingerprint="e" * 64,
    )
    FindingTriage.objects.create(
        run=run, finding=added, state=TriageState.CONFIRMED, reviewer=reviewer
    )
    FindingTriage.objects.create(
        run=run, finding=template, state=TriageState.CONFIRMED, reviewer=reviewer
    )
    figures = _calibrate("--from-triage", demo_org.slug, tmp_path=tmp_path)["from_triage"]
    trip = figures["rules"]["unsafe_advice"]["round_trip"]
    assert trip["holds"] is False and trip["missing"] == 1
    assert "re-judging gives 0 finding(s) where the runs had 1" in trip["why"]
    assert "unsafe_advice" not in figures["round_trip_rules"]
    assert template.rule_id in figures["round_trip_rules"]


def test_from_triage_refuses_an_unknown_org(db: None, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no organization with slug 'nope'"):
        call_command("qalab_calibrate", "--from-triage", "nope")
    with pytest.raises(CommandError, match="go with --from-triage"):
        call_command("qalab_calibrate", "--natural", str(tmp_path), "--out", "x.jsonl")


SCENARIO_RULES = ("extraction_accuracy", "final_status")


def _scenario_run(organization: Organization) -> Run:
    """Three scenarios played twice each (trial cases: `sc-01.t2` plays scenario `sc-01`)."""
    from runs import services

    run = services.run_create(
        organization=organization,
        preset="quick",
        responder_spec=INTAKE_BOT,
        scenarios=3,
        seed=4,
        trials=2,
    )
    dispatcher = InlineDispatcher()
    services.run_start(run=run, dispatcher=dispatcher)
    dispatcher.drain()
    run.refresh_from_db()
    return run


def test_the_scenario_rules_round_trip(
    demo_org: Organization, django_user_model: Any, tmp_path: Path
) -> None:
    """The export carries each case's blueprint and the bot's extracted values and statuses,
    so `final_status` and `extraction_accuracy` are judged again as the run judged them."""
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    run = _scenario_run(demo_org)
    for rule in SCENARIO_RULES:
        findings = list(run.findings.filter(rule_id=rule).order_by("position"))
        assert len(findings) >= 2, rule
        for i, finding in enumerate(findings):
            if i % 4 == 3:
                continue  # left open
            state = TriageState.FALSE_POSITIVE if i % 2 else TriageState.CONFIRMED
            FindingTriage.objects.create(run=run, finding=finding, state=state, reviewer=reviewer)
    page = rule_precision(triage_labels(demo_org))
    for rule in SCENARIO_RULES:
        assert 0 < page[rule].right < page[rule].labels, rule  # labelled right and wrong

    folder = tmp_path / "export"
    exported = _calibrate(
        "--from-triage", demo_org.slug, "--out", str(folder / "triage.jsonl"), tmp_path=tmp_path
    )["from_triage"]
    assert set(SCENARIO_RULES) <= set(exported["round_trip_rules"])
    for rule in SCENARIO_RULES:
        trip = exported["rules"][rule]["round_trip"]
        assert trip["stored"] == trip["rejudged"] > 0 and not trip["missing"], rule

    # A trial's line carries its scenario's blueprint; bot messages what the bot returned.
    lines = [json.loads(x) for x in (folder / "triage.jsonl").read_text().splitlines()]
    trial = next(line for line in lines if line["source"]["case"].endswith(".t2"))
    case = next(c for c in run.cases.all() if c.key == trial["source"]["case"])
    assert trial["blueprint"]["key"] == case.scenario_key != case.key
    bots = [m for m in trial["turns"] if m["role"] == "bot"]
    assert bots[-1]["status"] == case.actual_status == "COMPLETE"
    assert all("extracted" in m for m in bots) and any(m["extracted"] for m in bots)
    assert all(set(m) == {"role", "text"} for m in trial["turns"] if m["role"] == "customer")

    natural = _calibrate("--natural", str(folder), tmp_path=tmp_path)["natural"]["all"]
    for rule in SCENARIO_RULES:
        assert natural[rule]["findings"] == page[rule].labels, rule
        assert natural[rule]["correct"] == page[rule].right, rule
        assert natural[rule]["precision"] == round(page[rule].value, 4), rule  # type: ignore[arg-type]

    # The same lines without the new keys read as before: the scenario checks are skipped and
    # every other finding is the same.
    for line in lines:
        old = {k: v for k, v in line.items() if k != "blueprint"}
        old["turns"] = [{"role": m["role"], "text": m["text"]} for m in line["turns"]]
        manifest = LabelledDialogue.model_validate(line).manifest
        new = judge_dialogue(Dialogue.model_validate(line), manifest, config=file_judge_config())
        before = judge_dialogue(Dialogue.model_validate(old), manifest, config=file_judge_config())
        assert set(SCENARIO_RULES) <= set(before.skipped_checks)
        assert not set(SCENARIO_RULES) & set(new.skipped_checks)
        assert before.findings == [f for f in new.findings if f.rule not in SCENARIO_RULES]


def test_only_a_bot_message_carries_extracted_and_status() -> None:
    turn = {"role": "customer", "text": "hi", "status": "COMPLETE"}
    with pytest.raises(ValueError, match="only a bot message carries extracted or status"):
        Dialogue.model_validate({"id": "d", "turns": [turn]})
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        Dialogue.model_validate({"id": "d", "turns": [{"role": "bot", "text": "hi", "x": 1}]})


# The semantic layer's rules this bot makes it confirm (irrelevant_reply's head threshold, 0.8,
# is not reached by its canned line: no such finding to label).
SEMANTIC_RULES = ("ignored_question", "self_contradiction")


def evasive_bot(request: dict[str, Any]) -> dict[str, Any]:
    """A bot that answers questions with a canned line about parking, and says the opposite of
    its first reply about Sundays: findings the semantic layer confirms."""
    parsed = ResponderRequest.model_validate(request)
    turn = sum(m.role == "assistant" for m in parsed.messages)
    replies = [
        "We are open on Sundays from 10 to 4. Parking is free behind the building.",
        "Parking is free behind the building, just follow the blue signs.",
        "We are closed on Sundays. Parking is free behind the building.",
    ]
    return {"reply": replies[min(turn, 2)], "status": "AWAITING_RESPONSE", "extracted": {}}


def test_the_semantic_rules_round_trip(
    demo_org: Organization, django_user_model: Any, tmp_path: Path
) -> None:
    """Findings the semantic layer confirmed (their confidence is the head's score) come back
    the same when the export is judged again with the layer: --natural gives the page's
    precision for them too."""
    reviewer = django_user_model.objects.create_user(username="rita", password="pw-123456")
    run = start_run(
        demo_org, responder="python:tests.runs.test_triage_export:evasive_bot", scenarios=4, seed=4
    )
    assert run.config["semantic"]["on"]  # the layer judged the run (its heads confirmed these)
    for rule in SEMANTIC_RULES:
        findings = list(run.findings.filter(rule_id=rule).order_by("position"))
        assert findings, rule
        for i, finding in enumerate(findings):
            state = TriageState.FALSE_POSITIVE if i % 2 else TriageState.CONFIRMED
            FindingTriage.objects.create(run=run, finding=finding, state=state, reviewer=reviewer)
    folder = tmp_path / "export"
    exported = _calibrate(
        "--from-triage", demo_org.slug, "--out", str(folder / "triage.jsonl"), tmp_path=tmp_path
    )["from_triage"]
    assert set(SEMANTIC_RULES) <= set(exported["round_trip_rules"])
    page = rule_precision(triage_labels(demo_org))
    natural = _calibrate("--natural", str(folder), tmp_path=tmp_path)["natural"]["all"]
    for rule in SEMANTIC_RULES:
        assert natural[rule]["findings"] == page[rule].labels, rule
        assert natural[rule]["correct"] == page[rule].right, rule
        assert natural[rule]["precision"] == round(page[rule].value, 4), rule  # type: ignore[arg-type]
