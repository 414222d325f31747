"""Run a run's stages in this process, in order, without a broker (`qalab_run --inline`)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from types import TracebackType

from django.db import connections

from runs import services
from runs.budget import settle_open_reservations
from runs.services.common import logger, run_lock_if_idle, run_mark_error


class InlineDispatcher:
    """Run the same services in this process, in order, without a broker."""

    def __init__(
        self,
        *,
        progress: Callable[[str], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self._queue: deque[tuple[str, Callable[[], None]]] = deque()
        self._progress = progress
        # Asked before each step: once it says so, `drain` drops the steps left.
        self._stop = stop

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
            if self._stop is not None and self._stop():
                self._queue.clear()
                return
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


class InlineDeadline:
    """`qalab_run --inline --timeout S`: the run ends as a timeout once S seconds have passed.

    A timer thread ends the run `error` at the deadline (its reason says so), so the step in
    progress stops where a cancelled run's would: a talking case at its next LLM call (the
    ledger refuses it), a queued case or stage does nothing. The dispatcher asks `expired`
    before each step and drops the rest. Back in the calling thread, `settle` ends the run
    again if the timer could not (idempotent), settles the reservations left open, and locks
    the run, so a timed-out run never keeps reserved tokens."""

    def __init__(self, run_id: int, seconds: float | None) -> None:
        self.run_id, self.seconds = run_id, seconds
        self.reason = (
            f"timed out: the run did not finish within --timeout {seconds:g} s (qalab_run --inline)"
            if seconds is not None
            else ""
        )
        self._expired = threading.Event()
        self._timer: threading.Timer | None = None

    def expired(self) -> bool:
        return self._expired.is_set()

    def _expire(self) -> None:
        self._expired.set()
        try:
            run_mark_error(run_id=self.run_id, reason=self.reason)
        except Exception:  # `settle` ends it from the calling thread
            logger.exception("run %s: could not end the run at its --timeout", self.run_id)
        finally:
            connections.close_all()  # this thread's connection only

    def __enter__(self) -> InlineDeadline:
        if self.seconds is not None:
            self._timer = threading.Timer(self.seconds, self._expire)
            self._timer.name, self._timer.daemon = "qalab-inline-timeout", True
            self._timer.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()

    def settle(self) -> bool:
        """After the run's steps: if the deadline passed, the run is ended (when it was not
        already final), its open reservations settled and the run locked. True if it passed."""
        if not self.expired():
            return False
        run_mark_error(run_id=self.run_id, reason=self.reason)
        settled = settle_open_reservations(run_id=self.run_id)
        if settled:
            logger.warning("run %s: %s reservation(s) settled at --timeout", self.run_id, settled)
        run_lock_if_idle(self.run_id)
        return True
