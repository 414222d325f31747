"""How a stage hands work to the next one: Celery tasks after commit, or in-process (--inline)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol


class Dispatcher(Protocol):
    def generate(self, run_id: int) -> None: ...
    def simulate(self, case_id: int, *, delay: float | None = None) -> None: ...
    def judge(self, run_id: int) -> None: ...
    def report(self, run_id: int) -> None: ...


class CeleryDispatcher:
    """Enqueue the stage's task once the current transaction commits (ids only)."""

    def generate(self, run_id: int) -> None:
        from runs.tasks import run_generate_task

        run_generate_task.delay_on_commit(run_id)

    def simulate(self, case_id: int, *, delay: float | None = None) -> None:
        from runs.tasks import case_simulate_task

        if delay:
            # A retry for a free slot: nothing to wait for, no transaction is open.
            case_simulate_task.apply_async((case_id,), countdown=delay)
        else:
            case_simulate_task.delay_on_commit(case_id)

    def judge(self, run_id: int) -> None:
        from runs.tasks import run_judge_task

        run_judge_task.delay_on_commit(run_id)

    def report(self, run_id: int) -> None:
        from runs.tasks import run_report_task

        run_report_task.delay_on_commit(run_id)


class InlineDispatcher:
    """Run the same services in this process, in order, without a broker."""

    def __init__(self, *, progress: Callable[[str], None] | None = None) -> None:
        self._queue: deque[tuple[str, Callable[[], None]]] = deque()
        self._progress = progress

    def generate(self, run_id: int) -> None:
        from runs import services

        self._queue.append(
            ("generating", lambda: services.run_generate(run_id=run_id, dispatcher=self))
        )

    def simulate(self, case_id: int, *, delay: float | None = None) -> None:
        # In-process cases run one after another: they never wait for a slot.
        from runs import services

        self._queue.append(
            ("simulating", lambda: services.case_simulate(case_id=case_id, dispatcher=self))
        )

    def judge(self, run_id: int) -> None:
        from runs import services

        self._queue.append(("judging", lambda: services.run_judge(run_id=run_id, dispatcher=self)))

    def report(self, run_id: int) -> None:
        from runs import services

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
