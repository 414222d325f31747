"""The fan-out every stage runs its independent LLM tasks through (qalab.fanout)."""

from __future__ import annotations

import threading
import time

import pytest

from qalab.fanout import serial, threaded


def test_results_keep_task_order_whatever_finishes_first() -> None:
    def task(n: int, pause: float):
        def run() -> int:
            time.sleep(pause)
            return n

        return run

    tasks = [task(0, 0.05), task(1, 0.0), task(2, 0.02)]
    assert threaded(3)(tasks) == [0, 1, 2] == serial(tasks)


def test_tasks_run_side_by_side_up_to_the_bound() -> None:
    lock, running, most = threading.Lock(), [0], [0]
    barrier = threading.Barrier(3, timeout=5)

    def task() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        if most[0] <= 3:
            barrier.wait()  # three at once, or this times out
        time.sleep(0.01)
        with lock:
            running[0] -= 1

    threaded(3)([task] * 9)
    assert most[0] == 3  # never more than the bound


def test_the_first_failed_task_in_order_is_raised_and_later_ones_never_start() -> None:
    started: list[int] = []
    gate = threading.Event()

    def slow_fail() -> int:
        started.append(0)
        gate.wait(5)
        raise KeyError("first in order")

    def fast_fail() -> int:
        started.append(1)
        gate.set()
        raise ValueError("first to fail")

    def later(n: int):
        def run() -> int:
            started.append(n)
            time.sleep(0.05)
            return n

        return run

    with pytest.raises(KeyError, match="first in order"):
        threaded(2)([slow_fail, fast_fail, *(later(n) for n in range(2, 20))])
    # Both failing tasks ran; the pool stopped taking new tasks after the first failure (a
    # task or two may have been picked up by a free thread in between, never all of them).
    assert {0, 1} <= set(started)
    assert len(started) <= 8


def test_after_task_runs_in_the_worker_thread_after_each_task() -> None:
    calls: list[str] = []
    lock = threading.Lock()

    def after() -> None:
        with lock:
            calls.append(threading.current_thread().name)

    def boom() -> None:
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        threaded(2, after_task=after, name="fan")([lambda: None, boom])
    assert len(calls) == 2 and all(name.startswith("fan") for name in calls)


def test_one_worker_or_one_task_runs_in_the_calling_thread() -> None:
    here = threading.current_thread()
    assert threaded(1)([lambda: threading.current_thread()] * 2) == [here, here]
    assert threaded(4)([lambda: threading.current_thread()]) == [here]
    with pytest.raises(ValueError, match="at least 1"):
        threaded(0)
