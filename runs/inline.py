"""Run a run's stages in this process, in order, without a broker (`qalab_run --inline`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from runs import services


class InlineDispatcher:
    """Run the same services in this process, in order, without a broker."""

    def __init__(self, *, progress: Callable[[str], None] | None = None) -> None:
        self._queue: deque[tuple[str, Callable[[], None]]] = deque()
        self._progress = progress

    def generate(self, run_id: int) -> None:
        self._queue.append(
            ("generating", lambda: services.run_generate(run_id=run_id, dispatcher=self))
        )

    def simulate(self, case_id: int, *, delay: float | None = None) -> None:
        # In-process cases run one after another: they never wait for a slot.
        self._queue.append(
            ("simulating", lambda: services.case_simulate(case_id=case_id, dispatcher=self))
        )

    def judge(self, run_id: int) -> None:
        self._queue.append(("judging", lambda: services.run_judge(run_id=run_id, dispatcher=self)))

    def report(self, run_id: int) -> None:
        self._queue.append(("reporting", lambda: services.run_report(run_id=run_id)))

    def run_next(self) -> str | None:
        """Run only the next queued step (tests use it to stop between stages); its stage."""
        if not self._queue:
            return None
        stage, step = self._queue.popleft()
        step()
        return stage

    def drain(self) -> None:
        simulated = 0
        while self._queue:
            stage, step = self._queue.popleft()
            if stage == "simulating":
                simulated += 1
                pending = sum(1 for s, _ in self._queue if s == "simulating")
                label = f"simulating case {simulated}/{simulated + pending}"
            else:
                label = stage
            if self._progress:
                self._progress(label)
            step()
