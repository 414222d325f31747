"""Quick runs on the `openai` engine against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from collections import Counter
from contextlib import contextmanager

import pytest
from django.test import override_settings

from runs.models import LlmCall, Run, RunStatus
from tests.conftest import run_celery_worker
from tests.factories import import_demo_org
from tests.llm_server import FakeOpenAI
from tests.runs.helpers import AS_OF, qalab_run

MODELS = {
    "generator": "gen-model-1",
    "simulator": "sim-model-1",
    "judge": "judge-model-1",
    "responder": "resp-model-1",
}


def schema_title(body: dict) -> str | None:
    """The title of the JSON schema a request asks for (json_schema or json_object mode)."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    return schema.get("title")


def notes_brain(body: dict) -> dict | None:
    """Valid fixture notes (a heading, no figures); every other reply comes from the schema.

    The schema-filled manifest and blueprints fail their task checks, get one repair turn and
    fall back to the offline implementation, which the report counts.
    """
    if schema_title(body) == "FixtureNotes":
        return {"markdown": "# Front desk notes\nPlease greet every patient by name.\n"}
    return None


def _llm_env(server: FakeOpenAI, **extra: str) -> dict[str, str]:
    env = {
        "QALAB_LLM_ENGINE": "openai",
        "QALAB_LLM_BASE_URL": server.base_url,
        "QALAB_LLM_API_KEY": "sk-test-not-a-secret",
        "QALAB_LLM_TIMEOUT_SECONDS": "5",
        "QALAB_GENERATOR_MODEL": MODELS["generator"],
        "QALAB_SIMULATOR_MODEL": MODELS["simulator"],
        "QALAB_JUDGE_MODEL": MODELS["judge"],
        "QALAB_RESPONDER_MODEL": MODELS["responder"],
        "QALAB_LLM_MAX_FALLBACK_SHARE": "1",
    }
    env.update(extra)
    return env


@contextmanager
def openai_settings(server: FakeOpenAI, **extra: object):
    values: dict[str, object] = {
        "QALAB_LLM_ENGINE": "openai",
        "QALAB_LLM_BASE_URL": server.base_url,
        "QALAB_LLM_API_KEY": "sk-test-not-a-secret",
        "QALAB_LLM_TIMEOUT_SECONDS": 5.0,
        "QALAB_LLM_JSON_MODE": "json_schema",
        "QALAB_LLM_REPLAY_DIR": "",
        "QALAB_GENERATOR_MODEL": MODELS["generator"],
        "QALAB_SIMULATOR_MODEL": MODELS["simulator"],
        "QALAB_JUDGE_MODEL": MODELS["judge"],
        "QALAB_RESPONDER_MODEL": MODELS["responder"],
        # This server fills schemas with words: the manifest and blueprints fall back by design
        # (notes_brain), so these runs are not gated on their fallback share (test_fallbacks is).
        "QALAB_LLM_MAX_FALLBACK_SHARE": 1.0,
    }
    values.update(extra)
    with override_settings(**values):
        yield


def _role(body: dict) -> str:
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    return name.split("_", 1)[0]


def _assert_tokens_match(report: dict, server: FakeOpenAI) -> None:
    tokens = report["tokens"]
    # The lab's roles and the bot (the reference bot on the model), metered apart (issue 34).
    assert tokens["used"] + tokens["responder_used"] == server.usage_total
    assert sum(tokens["by_role"].values()) == tokens["used"] + tokens["responder_used"]
    assert tokens["estimated"] is False


def _assert_one_ledger_row_per_request(run_id: int, server: FakeOpenAI) -> None:
    rows = LlmCall.objects.filter(run_id=run_id).exclude(
        status__in=("fallback", "replayed", "denied", "invalid")
    )
    assert rows.count() == len(server.requests)


def test_it_completes_a_quick_run_inline_with_json_schema(demo_org, tmp_path):
    with FakeOpenAI(seed=1, brain=notes_brain) as server, openai_settings(server):
        code, report = qalab_run("--org", "demo", "--inline", "--seed", "5", tmp_path=tmp_path)
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    assert report["engine"] == "openai"
    assert len(report["cases"]) == 12
    assert all(1 <= len(c["turns"]) <= 4 for c in report["cases"])
    requests = server.requests
    roles = Counter(_role(body) for body in requests)
    assert {"generator", "simulator", "judge", "responder"} <= set(roles)
    for body in requests:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"]["schema"]["type"] == "object"
        assert body["model"] == MODELS[_role(body)]
    _assert_tokens_match(report, server)
    _assert_one_ledger_row_per_request(report["run_id"], server)
    # The schema-filled replies of this server quote nothing real: every LLM-judge finding is
    # dropped as unsupported, and nothing is invented from them.
    assert report["summary"]["unsupported_findings"] >= 1
    assert not [f for f in report["findings"] if f["detector"] == "llm"]
    assert "sk-test" not in json.dumps(report)


def test_it_uses_json_object_where_json_schema_is_rejected(demo_org, tmp_path):
    with (
        FakeOpenAI(seed=2, reject_json_schema=True, brain=notes_brain) as server,
        openai_settings(server, QALAB_LLM_JSON_MODE="json_object"),
    ):
        code, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "6", "--scenarios", "3", tmp_path=tmp_path
        )
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    assert {b["response_format"]["type"] for b in server.requests} == {"json_object"}
    assert all("schema" in b["response_format"] for b in server.requests)
    _assert_tokens_match(report, server)


@pytest.mark.parametrize("status", [400, 500])  # 500: what llama.cpp's server answers
def test_it_probes_the_json_mode_in_auto(demo_org, tmp_path, status):
    from qalab.llm import _PROBED

    _PROBED.clear()
    with (
        FakeOpenAI(
            seed=2, reject_json_schema=True, json_schema_status=status, brain=notes_brain
        ) as server,
        openai_settings(server, QALAB_LLM_JSON_MODE="auto"),
    ):
        code, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "6", "--scenarios", "1", tmp_path=tmp_path
        )
    _PROBED.clear()
    assert code in (0, 1)
    assert report["status"] == RunStatus.DONE, report["error"]
    assert server.fault_counts["reject_json_schema"] == 1  # the probe, once
    probe, *rest = [b["response_format"]["type"] for b in server.requests]
    assert probe == "json_schema"
    assert set(rest) == {"json_object"}
    assert report["source"]["json_mode"] == "json_object"  # the snapshot names the mode used


def test_it_completes_despite_rate_limits_errors_and_invalid_replies(demo_org, tmp_path):
    with (
        FakeOpenAI(seed=3, rate_429=0.2, rate_500=0.1, rate_invalid_json=0.1) as server,
        openai_settings(server, QALAB_LLM_MAX_RETRIES=6),
    ):
        code, report = qalab_run(
            "--org", "demo", "--inline", "--seed", "7", "--scenarios", "4", tmp_path=tmp_path
        )
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    assert server.fault_counts["429"] > 0 and server.fault_counts["500"] > 0
    assert report["tokens"]["retries"] == server.fault_counts["429"] + server.fault_counts["500"]
    assert report["tokens"]["invalid"] >= server.fault_counts["invalid_json"] > 0
    _assert_tokens_match(report, server)
    # One retry layer: every request the server saw is exactly one ledger row.
    _assert_one_ledger_row_per_request(report["run_id"], server)


def test_it_replays_a_run_without_spending_tokens(demo_org, tmp_path):
    replay = tmp_path / "replay"
    with (
        FakeOpenAI(seed=4) as server,
        openai_settings(server, QALAB_LLM_REPLAY_DIR=str(replay)),
    ):
        _, first = qalab_run(
            "--org", "demo", "--inline", "--seed", "8", "--scenarios", "3", tmp_path=tmp_path
        )
        seen = len(server.requests)
        _, second = qalab_run(
            "--org", "demo", "--inline", "--seed", "8", "--scenarios", "3", tmp_path=tmp_path
        )
    assert first["tokens"]["used"] > 0
    assert second["tokens"]["used"] == 0
    assert second["tokens"]["replayed"] > 0
    assert len(server.requests) == seen
    fingerprints = [sorted(f["fingerprint"] for f in r["findings"]) for r in (first, second)]
    assert fingerprints[0] == fingerprints[1]


def test_it_fails_fast_when_the_account_has_no_quota(demo_org, tmp_path):
    with FakeOpenAI(seed=5, quota_429=1.0) as server, openai_settings(server):
        code, report = qalab_run("--org", "demo", "--inline", "--seed", "9", tmp_path=tmp_path)
    assert code == 4
    assert report["status"] == RunStatus.ERROR
    assert "quota" in report["error"]
    assert len(server.requests) == 1  # no retry of an exhausted quota


@pytest.mark.django_db(transaction=True)
def test_it_completes_with_a_worker(tmp_path):
    import_demo_org()
    with (
        FakeOpenAI(seed=6, brain=notes_brain) as server,
        openai_settings(server),
        run_celery_worker(concurrency=4, env=_llm_env(server)),
    ):
        code, report = qalab_run(
            "--org", "demo", "--wait", "--timeout", "300", "--seed", "10", tmp_path=tmp_path
        )
    assert code in (0, 1), report["error"]
    assert report["status"] == RunStatus.DONE
    assert {_role(b) for b in server.requests} >= {"generator", "simulator", "judge"}
    _assert_tokens_match(report, server)


@pytest.mark.django_db(transaction=True)
def test_it_never_overspends_a_tiny_budget_with_8_concurrent_cases(tmp_path):
    """20 runs on the same test set, budget 3,000, 8 cases at a time: always a clean stop."""
    import_demo_org()
    with (
        FakeOpenAI(seed=7, latency=0.02, brain=notes_brain) as server,
        openai_settings(server, QALAB_RUN_MAX_CONCURRENT_CASES=8),
    ):
        code, base = qalab_run(
            "--org", "demo", "--inline", "--seed", "11", "--budget", "100000", tmp_path=tmp_path
        )
        assert base["status"] == RunStatus.DONE, base["error"]
        completed = 0
        with run_celery_worker(concurrency=8, env=_llm_env(server)):
            for _ in range(20):
                before = server.usage_total
                code, report = qalab_run(
                    "--org",
                    "demo",
                    "--wait",
                    "--timeout",
                    "120",
                    "--budget",
                    "3000",
                    "--reuse-artifacts",
                    str(base["run_id"]),
                    tmp_path=tmp_path,
                )
                assert code == 3, report["error"]
                assert report["verdict"] == "BUDGET_STOPPED"
                assert report["status"] == RunStatus.BUDGET_STOPPED
                assert 0 < report["tokens"]["used"] <= 3000
                spent = report["tokens"]["used"] + report["tokens"]["responder_used"]
                assert spent == server.usage_total - before
                statuses = Counter(c["status"] for c in report["cases"])
                assert statuses["skipped_budget"] > 0
                assert set(statuses) <= {"done", "skipped_budget"}
                assert report["summary"]["skipped_budget"] == statuses["skipped_budget"]
                # Findings come only from cases that completed (deterministic checks are free).
                done = {c["id"] for c in report["cases"] if c["status"] == "done"}
                assert {f["case"] for f in report["findings"]} <= done
                completed += statuses["done"]
                run = Run.objects.get(id=report["run_id"])
                assert run.tokens_reserved == 0
    assert completed > 0  # over the 20 runs, some cases finish before the budget runs out


def _compliant_brain(seed: int, scenarios: int, max_turns: int):
    """A model that writes what the generator asks for (content of the offline writers'
    length), so the ledger measures the real cost of generation with the openai engine."""
    from generator.manifest import build_manifest
    from generator.scenarios import build_blueprints, plan_scenarios
    from qalab.org_folder import DEMO_ORG_DIR, load_org_folder

    org = load_org_folder(DEMO_ORG_DIR)
    plan = plan_scenarios(org, scenarios=scenarios, seed=seed)
    blueprints = build_blueprints(org, plan, max_turns=max_turns, seed=seed, start=AS_OF)

    def brain(body: dict) -> dict | None:
        title = schema_title(body)
        if title == "Manifest":
            return build_manifest(org).model_dump(mode="json", exclude={"instructions"})
        if title == "BlueprintSet":
            return {"blueprints": [b.model_dump(mode="json") for b in blueprints]}
        return notes_brain(body)

    return brain


def test_generation_stays_within_30_percent_of_the_quick_budget(demo_org, tmp_path):
    with (
        FakeOpenAI(seed=8, brain=_compliant_brain(13, 12, 4)) as server,
        openai_settings(server),
    ):
        # Room above the Quick budget so the judge's LLM review of every case fits on this test
        # server (its schema-filled replies are long: the whole run takes ~53k); the generator's
        # share is measured against the Quick budget itself below.
        code, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "13",
            "--budget",
            "70000",
            "--as-of",
            AS_OF.isoformat(),
            tmp_path=tmp_path,
        )
    assert code in (0, 1), report["error"]
    generator = LlmCall.objects.filter(run_id=report["run_id"], role="generator")
    assert not generator.filter(status__in=("fallback", "invalid")).exists()
    used = report["tokens"]["by_role"]["generator"]
    print(f"generation with the openai engine: {used} tokens of 50,000 ({used / 500:.1f}%)")
    assert 0 < used <= 0.30 * 50_000


def _invented_quotes_brain(body: dict) -> dict | None:
    """An LLM judge that reports schema-valid findings whose quotes are invented."""
    title = schema_title(body)
    if title == "LlmReview":
        return {
            "findings": [
                {
                    "rule_id": "unsupported_fact",
                    "severity": "critical",
                    "turn": 0,
                    "quote": "We guarantee perfectly white teeth forever",
                    "rationale": "made up",
                    "fix_target": "prompt",
                    "fix_text": "n/a",
                    "effort": "S",
                }
            ]
        }
    return notes_brain(body)


def test_no_llm_finding_with_an_invented_quote_reaches_the_report(demo_org, tmp_path):
    with (
        FakeOpenAI(seed=9, brain=_invented_quotes_brain) as server,
        openai_settings(server),
    ):
        _, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "14",
            "--scenarios",
            "3",
            "--responder",
            "python:tests.responders:judge_injector",
            tmp_path=tmp_path,
        )
    assert report["status"] == RunStatus.DONE, report["error"]
    assert not [f for f in report["findings"] if f["detector"] == "llm"]
    assert report["summary"]["unsupported_findings"] == 3  # one invented quote per case
    # The reply aimed at the judge does not silence it: the real findings and an injection one.
    rules = {f["rule_id"] for f in report["findings"]}
    assert {"unsupported_facts", "judge_injection"} <= rules
    assert report["verdict"] == "FAIL_CRITICAL"


def _phrasing_brain(invent: bool):
    """A judge that phrases the top actions: grounded wording, or one with an invented price."""

    def brain(body: dict) -> dict | None:
        title = schema_title(body)
        if title != "ActionPhrasing":
            return notes_brain(body)
        prompt = body["messages"][-1]["content"]
        ranks = sorted({int(r) for r in re.findall(r"\brank (\d)\b", prompt)})
        extra = " Offer a 50 EUR voucher to every upset customer." if invent else ""
        return {
            "actions": [
                {
                    "rank": rank,
                    "title": f"Phrased action {rank}: correct what the assistant says",
                    "text": f"Change the assistant so the findings of action {rank} stop.{extra}",
                }
                for rank in ranks
            ]
        }

    return brain


@pytest.mark.parametrize("invent", [False, True])
def test_the_judge_model_phrases_top_actions_only_from_their_findings(demo_org, tmp_path, invent):
    with (
        FakeOpenAI(seed=4, brain=_phrasing_brain(invent)) as server,
        openai_settings(server),
    ):
        _, report = qalab_run(
            "--org",
            "demo",
            "--inline",
            "--seed",
            "5",
            "--scenarios",
            "3",
            "--responder",
            "canary:invent_price",
            tmp_path=tmp_path,
        )
    assert report["status"] == RunStatus.DONE, report["error"]
    actions = report["top_actions"]
    assert 1 <= len(actions) <= 5
    finding_ids = {f["id"] for f in report["findings"]}
    for action in actions:
        assert action["finding_ids"] and set(action["finding_ids"]) <= finding_ids
    calls = LlmCall.objects.filter(run_id=report["run_id"], purpose="judge:actions")
    if invent:
        # "50 EUR" is in no finding: one repair turn, then the template wording.
        assert not any(a["title"].startswith("Phrased action") for a in actions)
        assert any(a["title"].startswith("Stop quoting prices") for a in actions)
        assert calls.filter(status="fallback").count() == 1
        assert "50" in (calls.filter(status="invalid").first().detail or "")
    else:
        assert [a["title"] for a in actions] == [
            f"Phrased action {a['rank']}: correct what the assistant says" for a in actions
        ]
        assert not calls.filter(status="fallback").exists()
