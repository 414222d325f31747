"""The generate stage: org context -> fixtures, manifest and scenario blueprints for one run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial
from typing import cast

from generator.facts import critical_facts
from generator.fixtures import build_fixture
from generator.manifest import generate_manifest
from generator.rng import rng_for
from generator.scenarios import generate_blueprints
from generator.schemas import Artifacts, Blueprint, Fixture, Manifest, NoiseLevel
from qalab.domain import OrgContext
from qalab.fanout import FanOut, serial
from qalab.llm import Engine

LEVELS: tuple[NoiseLevel, ...] = ("clean", "semi_noisy", "messy")


def noise_level_counts(mix: tuple[int, int, int], scenarios: int) -> dict[NoiseLevel, int]:
    """Fixtures per level by largest-remainder rounding of the percent mix over `scenarios`.

    Each level gets floor(share); the seats left go to the largest remainders, ties to the
    noisier level (the stricter test). Quick (20/50/30) over 12 -> clean 2, semi 6, messy 4.
    """
    if len(mix) != 3 or any(p < 0 for p in mix) or sum(mix) <= 0:
        raise ValueError(f"mix must be three non-negative percentages, got {mix!r}")
    total = sum(mix)
    quotas = [scenarios * p / total for p in mix]
    counts = [int(q) for q in quotas]
    order = sorted(range(3), key=lambda i: (-(quotas[i] - counts[i]), -i))
    for i in order[: scenarios - sum(counts)]:
        counts[i] += 1
    return dict(zip(LEVELS, counts, strict=True))


def assign_levels(mix: tuple[int, int, int], scenarios: int, seed: int) -> list[NoiseLevel]:
    """The level of each fixture in order: the counts of `noise_level_counts`, seeded order."""
    levels = [lvl for lvl, n in noise_level_counts(mix, scenarios).items() for _ in range(n)]
    rng_for(seed, "levels").shuffle(levels)
    return levels


def generate_artifacts(
    org: OrgContext,
    *,
    scenarios: int,
    max_turns: int,
    mix: tuple[int, int, int],
    seed: int,
    engine: Engine,
    today: date | None = None,
    fan_out: FanOut = serial,
) -> Artifacts:
    """Fixtures `fx-01`.., one manifest and blueprints `sc-01`.. (one per fixture) for a run.

    Engine calls: one for the manifest, one for the blueprints, one per fixture; none depends on
    another, so `fan_out` may run them side by side (results keep their order; the first failed
    task's exception, e.g. BudgetExceeded, propagates). Persona dates are relative to `today`
    (default: the current date), so pass the run's creation date for artifacts that are
    byte-identical on a later day too.
    """
    if scenarios < 1:
        raise ValueError("scenarios must be at least 1")
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    start = today or date.today()
    facts = critical_facts(org)
    tasks: list[Callable[[], object]] = [
        partial(generate_manifest, org, engine),
        partial(
            generate_blueprints,
            org,
            scenarios=scenarios,
            max_turns=max_turns,
            seed=seed,
            start=start,
            engine=engine,
        ),
    ]
    tasks += [
        partial(
            build_fixture,
            org,
            key=f"fx-{i + 1:02d}",
            index=i,
            level=level,
            seed=seed,
            engine=engine,
            facts=facts,
        )
        for i, level in enumerate(assign_levels(mix, scenarios, seed))
    ]
    manifest, blueprints, *fixtures = fan_out(tasks)
    return Artifacts(
        fixtures=cast(list[Fixture], fixtures),
        manifest=cast(Manifest, manifest),
        blueprints=cast(list[Blueprint], blueprints),
    )
