"""The semantic layer's settings (issue 32): snapshotted into a run, a missing model refused
before the run exists, QALAB_SEMANTIC=off leaving the snapshot as the deterministic judge's."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from qalab.env import envthresholds
from runs import services
from runs.services.case_judging import judge_config

pytestmark = pytest.mark.django_db


def test_a_run_snapshots_the_layer_its_thresholds_and_the_heads_it_used(demo_org, settings):
    settings.QALAB_SEMANTIC_THRESHOLDS = {"ignored_question": 0.85}
    run = services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=1)
    semantic = run.config["semantic"]
    assert semantic["on"] is True
    assert semantic["thresholds"]["ignored_question"] == 0.85
    assert set(run.source["semantic"]) >= {"model", "tokenizer", "head contradiction"}
    config = judge_config(run)
    assert config.semantic and config.semantic_thresholds["ignored_question"] == 0.85


def test_off_the_snapshot_is_the_deterministic_judges_alone(demo_org, settings):
    settings.QALAB_SEMANTIC = "off"
    run = services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=1)
    assert "semantic" not in run.config and "semantic" not in run.source
    assert judge_config(run).semantic is False


def test_a_missing_model_is_refused_with_the_setting_named(demo_org, settings, tmp_path):
    settings.QALAB_SEMANTIC_MODEL_DIR = str(tmp_path)  # holds no model files
    with pytest.raises(ValueError, match="QALAB_SEMANTIC=off") as raised:
        services.run_create(organization=demo_org, preset="quick", scenarios=2, seed=1)
    assert "model.onnx" in str(raised.value)
    from runs.models import Run

    assert not Run.objects.exists()


def test_threshold_overrides_read_strictly(monkeypatch):
    monkeypatch.setenv("QALAB_SEMANTIC_THRESHOLDS", "self_contradiction=0.8, ignored_question=1")
    assert envthresholds("QALAB_SEMANTIC_THRESHOLDS") == {
        "self_contradiction": 0.8,
        "ignored_question": 1.0,
    }
    for bad in ("self_contradiction", "self_contradiction=high", "ignored_question=1.5"):
        monkeypatch.setenv("QALAB_SEMANTIC_THRESHOLDS", bad)
        with pytest.raises(ImproperlyConfigured, match="QALAB_SEMANTIC_THRESHOLDS"):
            envthresholds("QALAB_SEMANTIC_THRESHOLDS")


DECODE_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "decode_dev.json"


@pytest.mark.skipif(not DECODE_DEV.exists(), reason="needs ../shared/data/decode_dev.json")
def test_the_contradiction_head_reaches_075_on_the_decode_dev_part_it_was_not_picked_on(tmp_path):
    """Issue 32, acceptance 3: part B (odd positions) was never used to fit or pick."""
    out = tmp_path / "b.json"
    call_command(
        "qalab_calibrate", "--task", "self_contradiction", "--data", str(DECODE_DEV),
        "--part", "B", "--json", str(out), stdout=StringIO(),
    )  # fmt: skip
    figures = json.loads(out.read_text())
    assert figures["scorer"] == "semantic: contradiction head" and figures["n"] == 750
    assert figures["balanced_accuracy"] >= 0.75
