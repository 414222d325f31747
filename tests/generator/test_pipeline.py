"""generate_artifacts end to end, for the demo org and the bikes org."""

from __future__ import annotations

import pytest

from generator.pipeline import assign_levels, generate_artifacts, noise_level_counts
from generator.scenarios import plan_scenarios
from qalab.llm import BudgetExceeded, NullLedger, OfflineEngine
from tests.generator.conftest import QUICK, REGRESSION, TODAY


def _generate(org, seed=7, ledger=None, **preset):
    engine = OfflineEngine(ledger=ledger or NullLedger())
    return generate_artifacts(org, seed=seed, engine=engine, today=TODAY, **(preset or QUICK))


def test_it_produces_one_fixture_and_blueprint_per_scenario(org):
    artifacts = _generate(org)
    assert [f.key for f in artifacts.fixtures] == [f"fx-{i:02d}" for i in range(1, 13)]
    assert [b.key for b in artifacts.blueprints] == [f"sc-{i:02d}" for i in range(1, 13)]
    assert [b.fixture_key for b in artifacts.blueprints] == [f.key for f in artifacts.fixtures]
    assert {b.max_turns for b in artifacts.blueprints} == {4}
    assert artifacts.manifest.org_slug == org.slug


def test_it_makes_every_fixture_at_least_200_lines(org):
    for preset in (QUICK, REGRESSION):
        for fixture in _generate(org, **preset).fixtures:
            assert fixture.line_count >= 200, fixture.key
            assert fixture.metrics["line_count"] == fixture.line_count


def test_it_splits_the_mix_by_largest_remainder():
    assert noise_level_counts((20, 50, 30), 12) == {"clean": 2, "semi_noisy": 6, "messy": 4}
    assert noise_level_counts((10, 40, 50), 24) == {"clean": 2, "semi_noisy": 10, "messy": 12}
    assert noise_level_counts((20, 50, 30), 10) == {"clean": 2, "semi_noisy": 5, "messy": 3}
    # 1/3 each over 4: every remainder ties, the seat goes to the noisiest level.
    assert noise_level_counts((1, 1, 1), 4) == {"clean": 1, "semi_noisy": 1, "messy": 2}
    assert sum(noise_level_counts((33, 33, 34), 7).values()) == 7
    with pytest.raises(ValueError):
        noise_level_counts((0, 0, 0), 3)


def test_it_labels_fixtures_with_the_mix_counts(org):
    for preset in (QUICK, REGRESSION):
        artifacts = _generate(org, **preset)
        counts = {lvl: 0 for lvl in ("clean", "semi_noisy", "messy")}
        for fixture in artifacts.fixtures:
            counts[fixture.noise_level] += 1
        assert counts == noise_level_counts(preset["mix"], preset["scenarios"])


def test_it_orders_levels_by_seed_but_keeps_the_counts():
    a, b = assign_levels((20, 50, 30), 12, 1), assign_levels((20, 50, 30), 12, 2)
    assert sorted(a) == sorted(b)
    assert any(assign_levels((20, 50, 30), 12, s) != a for s in range(2, 6))


def test_it_covers_at_least_eight_scenario_types(org):
    assert len({b.scenario_type for b in _generate(org).blueprints}) >= 8
    for seed in range(50):
        types = {p.scenario_type for p in plan_scenarios(org, scenarios=12, seed=seed)}
        assert len(types) >= 8, (seed, types)
        regression = {p.scenario_type for p in plan_scenarios(org, scenarios=24, seed=seed)}
        assert len(regression) >= 10, (seed, regression)


def test_it_is_deterministic_for_the_same_seed(org):
    first, second = _generate(org, seed=11), _generate(org, seed=11)
    assert first.model_dump_json() == second.model_dump_json()


def test_it_gives_different_fixtures_for_a_different_seed(org):
    first, second = _generate(org, seed=11), _generate(org, seed=12)
    assert first.manifest == second.manifest
    differing = [a.key for a, b in zip(first.fixtures, second.fixtures, strict=True) if a != b]
    assert len(differing) >= 10
    assert first.blueprints != second.blueprints


def test_it_keeps_the_demo_quick_run_within_its_token_bound(demo):
    ledger = NullLedger()
    reserved = 0

    class Metering(OfflineEngine):
        def run(self, **kwargs):
            nonlocal reserved
            from qalab.llm import estimate_message_tokens

            reserved += estimate_message_tokens(kwargs["messages"]) + kwargs["max_tokens"]
            return super().run(**kwargs)

    generate_artifacts(demo, seed=7, engine=Metering(ledger=ledger), today=TODAY, **QUICK)
    assert 8_000 <= ledger.used <= 14_000
    assert reserved <= 14_500
    assert len(ledger.calls) == 14  # manifest + blueprints + one per fixture
    assert {c["role"] for c in ledger.calls} == {"generator"}


def test_it_never_hits_a_max_tokens_cap(org):
    for preset in (QUICK, REGRESSION):
        ledger = NullLedger()
        _generate(org, ledger=ledger, **preset)
        assert {c["status"] for c in ledger.calls} == {"ok"}, [
            c for c in ledger.calls if c["status"] != "ok"
        ]


def test_it_lets_a_budget_stop_propagate(demo):
    with pytest.raises(BudgetExceeded):
        _generate(demo, ledger=NullLedger(budget=5_000))


def test_it_rejects_nonsense_arguments(demo):
    with pytest.raises(ValueError):
        _generate(demo, scenarios=0, max_turns=4, mix=(20, 50, 30))
