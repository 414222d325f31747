"""Independent tasks of one stage, side by side: the generator's fixture items, the judge's
per-case reviews and confirmations. Each is mostly waiting on an LLM endpoint, so a small
thread pool turns a chain of N calls into one round of at most `workers` at a time.

`FanOut` is the one shape every stage takes (a list of no-argument callables in, their results
in the same order out); `serial` is the default (one after another, in this thread), and
`threaded` the bounded pool. The pool keeps serial semantics where they matter: results come in
task order, and when tasks fail, the exception of the first failed task in task order is
raised once every started task has ended, and tasks not yet started are never started. Django-
and Celery-free: the caller passes `after_task` (e.g. closing the thread's DB connections).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class FanOut(Protocol):
    def __call__(self, tasks: Sequence[Callable[[], T]]) -> list[T]: ...


def serial(tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Run the tasks one after another in this thread; the first failure propagates."""
    return [task() for task in tasks]


def threaded(
    workers: int, *, after_task: Callable[[], None] | None = None, name: str = "qalab-fanout"
) -> FanOut:
    """A fan-out running up to `workers` tasks at once in a fresh pool per call.

    `after_task` runs in the worker thread after each task (success or not). With one worker or
    one task, the tasks run serially in the calling thread and `after_task` is not called.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")

    def run(tasks: Sequence[Callable[[], T]]) -> list[T]:
        if workers == 1 or len(tasks) <= 1:
            return serial(tasks)

        def wrapped(task: Callable[[], T]) -> T:
            try:
                return task()
            finally:
                if after_task is not None:
                    after_task()

        with ThreadPoolExecutor(
            max_workers=min(workers, len(tasks)), thread_name_prefix=name
        ) as ex:
            futures: list[Future[T]] = [ex.submit(wrapped, task) for task in tasks]
            _, pending = wait(futures, return_when=FIRST_EXCEPTION)
            if pending and any(f.done() and f.exception() is not None for f in futures):
                for f in pending:
                    f.cancel()  # not started yet: never started; running ones end normally
            wait(futures)
        failed = [f for f in futures if not f.cancelled() and f.exception() is not None]
        if failed:
            raise _exception(failed[0])
        return [f.result() for f in futures]

    return run


def _exception(future: Future[Any]) -> BaseException:
    exc = future.exception()
    assert exc is not None
    return exc
