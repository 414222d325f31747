"""Run presets (seed 003 §2, seed 000 strictness): what Quick and Regression mean."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

# At most this many trials (`--trials K`: every scenario played K times).
MAX_TRIALS = 20


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    scenarios: int
    max_turns: int
    # The lab's roles (generator, simulator, judge). The bot's own calls, when the lab runs the
    # bot, have their own budget: by default this same figure (runs.services.create).
    token_budget: int
    mix: tuple[int, int, int]  # percent clean / semi-noisy / messy fixtures
    strictness: float
    min_score_to_pass: float
    max_questions_per_turn: int = 2

    @property
    def threshold(self) -> float:
        """effective_threshold = min_score_to_pass + strictness * 0.2 (seed 000)."""
        return round(self.min_score_to_pass + self.strictness * 0.2, 4)

    def with_overrides(self, **overrides: Any) -> Preset:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def as_config(self) -> dict[str, Any]:
        data = asdict(self)
        data["mix"] = list(self.mix)
        data["threshold"] = self.threshold
        return data


PRESETS: dict[str, Preset] = {
    "quick": Preset(
        name="quick",
        label="Quick",
        scenarios=12,
        max_turns=4,
        token_budget=50_000,
        mix=(20, 50, 30),
        strictness=0.5,
        min_score_to_pass=0.6,
    ),
    "regression": Preset(
        name="regression",
        label="Regression",
        scenarios=24,
        max_turns=5,
        token_budget=100_000,
        mix=(10, 40, 50),
        strictness=0.7,
        min_score_to_pass=0.6,
    ),
}


def preset_get(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}") from None
