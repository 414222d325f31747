"""Create a run with its immutable snapshot, and start it."""

from __future__ import annotations

import functools
import secrets
from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from judge.semantic.model_files import SemanticModelError
from qalab.domain import ArtifactKind
from qalab.llm.prompts import prompt_hashes
from qalab.models import Organization
from qalab.orgs import org_context_hash, organization_get_context, sha256_text
from runs.dispatch import Dispatcher
from runs.models import (
    PURPOSE_STAND_IN,
    Run,
    RunStartToken,
)
from runs.presets import MAX_TRIALS, preset_get
from runs.services.common import (
    PROMPT_DIRS,
    canonical_hash,
    code_version,
)
from runs.simulator.adapters import get_responder
from runs.simulator.outbound import responder_refusal
from runs.stand_in import stand_in_needed, stand_in_refusal

# What a run can hold: the columns' ranges, and sizes far beyond any useful run.
MAX_SCENARIOS = 1_000
MAX_TURNS = 100
MAX_BUDGET = 2**31 - 1  # token_budget is an integer column
MAX_SEED = 2**63 - 1  # seed is a bigint column


def run_create(
    *,
    organization: Organization,
    preset: str = "quick",
    responder_spec: str | None = None,
    scenarios: int | None = None,
    max_turns: int | None = None,
    budget: int | None = None,
    responder_budget: int | None = None,
    trials: int = 1,
    seed: int | None = None,
    reuse_artifacts: int | None = None,
    as_of: date | None = None,
    created_by: Any = None,
    purpose: str = "check",
) -> Run:
    """Create a queued run with its immutable snapshot (config, settings hash, source metadata).

    `as_of` is the run's reference date: the day its scenarios' dates ("next Tuesday", "the
    14th") count from (default: today, UTC). A reused test set keeps its run's date.
    `purpose` is "check" for a real bot's run, "selftest" for the lab's own (`Run.probe`).
    `budget` is the lab's roles' (generator, simulator, judge); `responder_budget` the bot's
    own calls' when the lab runs the bot (default: QALAB_RESPONDER_TOKEN_BUDGET, else the
    preset's budget). `trials` plays every scenario that many times (one case per trial, the
    same customer plan); both budgets scale with it unless they are given.
    Raises ValueError for an unknown preset or responder spec, and for an `openai-chat:` bot on
    the offline engine unless QALAB_OPENAI_CHAT_STAND_IN asks for the reference bot to stand in
    (such a run's purpose is then "stand-in": one of the lab's own). Does not dispatch.
    """
    if not 1 <= trials <= MAX_TRIALS:
        raise ValueError(f"trials must be between 1 and {MAX_TRIALS}, not {trials}")
    base = preset_get(preset)
    chosen = base.with_overrides(
        scenarios=scenarios,
        max_turns=max_turns,
        # Every trial plays and is judged: the budget a scenario needs, K times over.
        token_budget=budget if budget is not None else base.token_budget * trials,
    )
    bot_budget = responder_budget or (
        (settings.QALAB_RESPONDER_TOKEN_BUDGET or base.token_budget) * trials
    )
    if chosen.scenarios < 1 or chosen.max_turns < 1 or chosen.token_budget < 1:
        raise ValueError("scenarios, max turns and budget must be positive")
    if responder_budget is not None and responder_budget < 1:
        raise ValueError("the bot's budget must be positive")
    for name, value, limit in (
        ("scenarios", chosen.scenarios, MAX_SCENARIOS),
        ("cases (scenarios × trials)", chosen.scenarios * trials, MAX_SCENARIOS),
        ("max turns", chosen.max_turns, MAX_TURNS),
        ("budget", chosen.token_budget, MAX_BUDGET),
        ("the bot's budget", bot_budget, MAX_BUDGET),
    ):
        if value > limit:
            raise ValueError(f"{name} {value:,} is over the limit of {limit:,}")
    if seed is not None and not -MAX_SEED <= seed <= MAX_SEED:
        raise ValueError(f"seed {seed} is out of range (at most {MAX_SEED:,} either way)")
    spec = responder_spec or organization.responder or "reference"
    # The org's mapping goes with its own bot's URL only: another URL speaks the lab's contract.
    http = organization.responder_http if spec.strip() == organization.responder.strip() else {}
    responder = get_responder(spec, http=http)  # validates the spec now, not in a worker later
    if refusal := responder_refusal(spec):  # where an http(s) bot may point (checked again later)
        raise ValueError(refusal)
    engine = settings.QALAB_LLM_ENGINE
    if refusal := stand_in_refusal(spec, engine):  # never a verdict on a bot not called
        raise ValueError(refusal)
    if stand_in_needed(spec, engine):  # asked for: one of the lab's own runs (Run.probe)
        purpose = PURPOSE_STAND_IN
    models_used = {
        "generator": settings.QALAB_GENERATOR_MODEL,
        "simulator": settings.QALAB_SIMULATOR_MODEL,
        "judge": settings.QALAB_JUDGE_MODEL,
        "responder": settings.QALAB_RESPONDER_MODEL,
    }
    if own_model := getattr(responder, "model", ""):  # openai-chat:MODEL, the bot's own
        models_used["responder"] = own_model
    if engine == "offline":
        models_used = {role: "offline" for role in models_used}
    run_seed = seed if seed is not None else secrets.randbelow(2**31)
    if reuse_artifacts is not None:
        source_run = Run.objects.filter(id=reuse_artifacts, organization=organization).first()
        if (
            source_run is None
            or not source_run.artifacts.filter(kind=ArtifactKind.MANIFEST).exists()
        ):
            raise ValueError(
                f"run {reuse_artifacts} has no test set of organization {organization.slug!r} to reuse"
            )
        blueprints = source_run.artifacts.filter(kind=ArtifactKind.BLUEPRINT).count()
        chosen = chosen.with_overrides(
            scenarios=blueprints, max_turns=source_run.config["max_turns"]
        )
        if blueprints * trials > MAX_SCENARIOS:
            raise ValueError(
                f"cases (scenarios × trials) {blueprints * trials:,} is over the limit of "
                f"{MAX_SCENARIOS:,}"
            )
        run_seed = source_run.seed
        source_as_of = source_run.as_of
        if as_of is not None and as_of != source_as_of:
            raise ValueError(
                f"run {reuse_artifacts}'s test set was built as of {source_as_of.isoformat()}; "
                f"a reused test set keeps its date (drop the as-of date {as_of.isoformat()})"
            )
        as_of = source_as_of
    if as_of is None:
        as_of = timezone.now().date()
    context = organization_get_context(organization=organization)
    config = {
        **chosen.as_config(),
        "responder_token_budget": bot_budget,
        "responder": spec,
        "engine": engine,
        "models": models_used,
        "seed": run_seed,
        "reuse_artifacts": reuse_artifacts,
        "as_of": as_of.isoformat(),
        "max_concurrent_cases": settings.QALAB_RUN_MAX_CONCURRENT_CASES,
    }
    if trials > 1:  # absent for one trial: such a run's snapshot is as before trials existed
        config["trials"] = trials
    if settings.QALAB_SEMANTIC == "on":
        # Absent when off: such a run's snapshot (and settings hash) is the deterministic
        # judge's alone, as before the layer existed.
        config["semantic"] = semantic_config(organization)
    if engine != "offline":
        config["json_mode"] = settings.QALAB_LLM_JSON_MODE
        config["max_fallback_share"] = settings.QALAB_LLM_MAX_FALLBACK_SHARE
    if http:  # snapshotted: a later edit of the org's mapping changes no run made before it
        config["responder_http"] = http
    source = {
        "organization": {"slug": organization.slug, "name": organization.name},
        "purpose": purpose,  # "selftest" or "stand-in" for the lab's own runs (Run.probe)
        "org_context_sha256": org_context_hash(context),
        "kb_documents": {d.slug: sha256_text(d.text) for d in context.kb},
        # An openai-chat: responder's prompt file too, so the delta names a changed prompt.
        "prompts": {**prompt_hashes(*PROMPT_DIRS), **getattr(responder, "prompt_hashes", {})},
        "code_version": code_version(),
    }
    if "semantic" in config:
        try:
            source["semantic"] = semantic_files()
        except SemanticModelError as exc:
            raise ValueError(str(exc)) from None
    return Run.objects.create(
        organization=organization,
        preset=chosen.name,
        responder_spec=spec,
        engine=engine,
        models_used=models_used,
        seed=run_seed,
        config=config,
        settings_hash=settings_hash(config),
        source=source,
        token_budget=chosen.token_budget,
        responder_token_budget=bot_budget,
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )


def semantic_config(organization: Organization | None = None) -> dict[str, Any]:
    """The judge's semantic layer as a run (made with it on) snapshots it: every rule's
    head-alone threshold, the defaults with the QALAB_SEMANTIC_THRESHOLDS overrides; and when
    the organization has re-fitted confirm thresholds (`qalab_train_heads --from-triage`),
    those (`confirm_thresholds`, the rules it names; the others keep the defaults) with their
    provenance (`org_thresholds`). An organization without any snapshots no such keys, so its
    runs' settings are as before the re-fit existed; another organization's never change."""
    from judge.semantic.thresholds import DEFAULT_THRESHOLDS
    from runs.models import OrgJudgeThreshold

    config: dict[str, Any] = {
        "on": True,
        "thresholds": {**DEFAULT_THRESHOLDS, **settings.QALAB_SEMANTIC_THRESHOLDS},
    }
    rows = (
        list(OrgJudgeThreshold.objects.filter(organization=organization).order_by("rule_id"))
        if organization is not None
        else []
    )
    if rows:
        config["confirm_thresholds"] = {row.rule_id: row.threshold for row in rows}
        config["org_thresholds"] = {row.rule_id: row.provenance for row in rows}
    return config


def semantic_files() -> dict[str, str]:
    """sha256 of the semantic layer's model and heads, so a run says which judge it had (and
    the delta names a changed head). Checks the model files now (once per process and folder):
    a missing or mismatched model is refused before the run exists (SemanticModelError names
    the settings)."""
    from judge.semantic.heads import HEAD_NAMES, head_sha256
    from judge.semantic.model_files import MODEL_ONNX, TOKENIZER_JSON

    _verify_model_files(settings.QALAB_SEMANTIC_MODEL_DIR)
    return {
        "model": MODEL_ONNX.sha256,
        "tokenizer": TOKENIZER_JSON.sha256,
        **{f"head {name}": head_sha256(name) for name in HEAD_NAMES},
    }


@functools.cache
def _verify_model_files(model_dir: str) -> None:
    """Read and check the pinned model files (hashing 23 MB costs ~0.1 s: done once; a failed
    check raises, so it is not remembered)."""
    from judge.semantic.model_files import MODEL_ONNX, TOKENIZER_JSON, read_pinned

    for spec in (MODEL_ONNX, TOKENIZER_JSON):
        read_pinned(spec, Path(model_dir) if model_dir else None)


def settings_hash(config: dict[str, Any]) -> str:
    """The hash of a run's settings: its config without the reference date, so a nightly run
    with the same settings keeps its hash from day to day (the date is shown on its own)."""
    return canonical_hash({k: v for k, v in config.items() if k != "as_of"})


def run_start(*, run: Run, dispatcher: Dispatcher) -> None:
    """Hand the queued run to the generate stage (after the surrounding transaction commits)."""
    dispatcher.generate(run.id)


class AlreadyStarted(Exception):
    """This Start run form already made a run (`run`): a second POST of the same form."""

    def __init__(self, run: Run) -> None:
        super().__init__(f"this form already started run {run.pk}")
        self.run = run


def run_get_by_start_token(token: str) -> Run | None:
    """The run a Start run form's one-time token made, if any."""
    found = RunStartToken.objects.select_related("run").filter(token=token).first()
    return found.run if found else None


def run_claim_start_token(*, token: str, run: Run) -> None:
    """Tie a Start run form's one-time token to the run it just made, inside the transaction
    that made it. AlreadyStarted(earlier run) when another POST of the same form got there
    first: the caller's transaction then rolls back, so the form makes one run however many
    times it is sent. A simultaneous POST waits on the unique token until the first commits."""
    try:
        with transaction.atomic():
            RunStartToken.objects.create(token=token, run=run)
    except IntegrityError:
        earlier = run_get_by_start_token(token)
        if earlier is None:  # the other POST rolled back: this one is the first after all
            raise
        raise AlreadyStarted(earlier) from None
