"""A case is judged as soon as its conversation ends, by the worker that ran it (issue 19).

The deterministic checks and the LLM review of one case depend on nothing but that case, its
fixture and the manifest. Done in the case's own task, they run while other cases are still
talking, spread over every worker process, instead of one after another in the judge stage
once the last case has ended. Both are stored as artifacts (`case_checks`, `llm_review`); the
judge stage (`runs.services.judging`) reuses them and does what is missing itself, so an early
judgement that fails or is refused changes nothing but where the work happens.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from generator.schemas import Blueprint, Fixture, Manifest
from judge.dialogues import DEFAULT_CONFIG
from judge.engine import check_case
from judge.llm_judge import review_case
from judge.schemas import CaseTranscript, JudgeConfig, Turn
from qalab.llm import BudgetExceeded, Engine, RunEnded
from qalab.llm.base import QuotaExhausted
from runs.artifacts import store_case_checks, store_review
from runs.models import Run, RunCase, RunStatus
from runs.services.common import logger, stage_fan_out


def judge_config(run: Run) -> JudgeConfig:
    """The run's judge settings, as its snapshot holds them."""
    semantic = run.config.get("semantic", {})
    return JudgeConfig(
        strictness=run.config["strictness"],
        min_score_to_pass=run.config["min_score_to_pass"],
        max_questions_per_turn=run.config.get("max_questions_per_turn", 2),
        # A run made before the semantic layer has no "semantic" key: judged without it.
        semantic=semantic.get("on", False),
        semantic_thresholds=semantic.get("thresholds", {}),
        # An organization's re-fitted confirm thresholds (qalab_train_heads), when it has any.
        semantic_confirm_thresholds=semantic.get("confirm_thresholds", {}),
        semantic_model_dir=settings.QALAB_SEMANTIC_MODEL_DIR or None,
        deadline_s=settings.QALAB_JUDGE_DEADLINE_S,
        max_chars=settings.QALAB_JUDGE_MAX_CHARS,
    )


def file_judge_config() -> JudgeConfig:
    """The judge settings for transcripts judged from a file (`qalab_judge`, `qalab_calibrate`):
    the defaults, with the semantic layer as the settings say (QALAB_SEMANTIC, its thresholds
    and model folder)."""
    return DEFAULT_CONFIG.model_copy(
        update={
            "semantic": settings.QALAB_SEMANTIC == "on",
            "semantic_thresholds": dict(settings.QALAB_SEMANTIC_THRESHOLDS),
            "semantic_model_dir": settings.QALAB_SEMANTIC_MODEL_DIR or None,
            "deadline_s": settings.QALAB_JUDGE_DEADLINE_S,
            "max_chars": settings.QALAB_JUDGE_MAX_CHARS,
        }
    )


def judge_ended_case(
    run: Run,
    case: RunCase,
    *,
    blueprint: Blueprint,
    fixture: Fixture,
    manifest: Manifest,
    turns: list[Turn],
    engine: Engine,
) -> None:
    """Review (LLM engines) and check one case whose conversation has just ended normally, and
    store both. Never raises: what is not stored here is done by the judge stage."""
    transcript = CaseTranscript(
        case_key=case.key,
        blueprint=blueprint,
        fixture=fixture,
        turns=turns,
        actual_status=(turns[-1].status or None) if turns else None,
    )
    if run.engine != "offline":
        try:
            result = review_case(
                transcript,
                manifest,
                engine=engine,
                purpose=f"judge:{case.key}",
                fan_out=stage_fan_out(engine),
            )
        except (BudgetExceeded, QuotaExhausted, RunEnded) as exc:
            logger.info("run %s case %s: no early review: %s", run.id, case.key, exc)
        except Exception:
            logger.exception("run %s case %s: early review failed", run.id, case.key)
        else:
            _store(run, case, lambda: store_review(run, case.key, result))
    try:
        checked = check_case(transcript, manifest, judge_config(run))
    except Exception:  # the judge stage runs the checks again and reports what breaks
        logger.exception("run %s case %s: early checks failed", run.id, case.key)
        return
    if checked.skipped:
        logger.warning(
            "run %s case %s: judging deadline (%s s CPU) passed, skipped: %s",
            run.id,
            case.key,
            settings.QALAB_JUDGE_DEADLINE_S,
            ", ".join(checked.skipped),
        )
    _store(run, case, lambda: store_case_checks(run, case.key, checked))


def _store(run: Run, case: RunCase, store: Callable[[], None]) -> None:
    """Store while the run is still simulating: an ended (and soon locked, immutable) run's
    late worker stores nothing, and a refused write is only logged."""
    if not Run.objects.filter(
        id=run.id, locked_at__isnull=True, status=RunStatus.SIMULATING
    ).exists():
        return
    try:
        store()
    except Exception:
        logger.exception("run %s case %s: early judgement not stored", run.id, case.key)
