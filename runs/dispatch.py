"""How a stage hands work to the next one: the protocol every dispatcher keeps.

Services depend on this protocol only. Its two implementations sit with what they drive:
`runs.tasks.CeleryDispatcher` enqueues Celery tasks after commit; `runs.inline.InlineDispatcher`
runs the same services in this process (`--inline`). Neither is imported by the services, so
services, tasks and the inline runner never import each other in a circle.
"""

from __future__ import annotations

from typing import Protocol


class Dispatcher(Protocol):
    def generate(self, run_id: int) -> None: ...
    def simulate(self, case_id: int, *, delay: float | None = None) -> None: ...
    def judge(self, run_id: int) -> None: ...
    def report(self, run_id: int) -> None: ...
