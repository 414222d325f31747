"""A case's lease, kept alive while its worker waits on a slow call.

A turn renews the lease when it is written, but one turn can take longer than the lease: a
model that answers slowly, a bot that trickles its reply out up to the responder's total
deadline. Without renewal the reaper would hand the case to another worker while the first is
still talking, and the bot would get the same turn twice. `lease_kept` renews the lease from a
background thread every third of its length for as long as the case is in hand; a worker that
dies stops renewing with it, so its case is reclaimed one lease later.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

from runs.models import CaseStatus, Run, RunCase
from runs.services.common import logger


def lease_renew(*, case_id: int, run_id: int, owner: str) -> bool:
    """Push the case's lease one lease length ahead; False when it is no longer ours."""
    now = timezone.now()
    n = RunCase.objects.filter(id=case_id, status=CaseStatus.RUNNING, lease_owner=owner).update(
        lease_expires_at=now + timedelta(seconds=settings.QALAB_CASE_LEASE_SECONDS)
    )
    if n:
        Run.objects.filter(id=run_id).update(heartbeat_at=now)
    return n == 1


def _keep(case_id: int, run_id: int, owner: str, stop: threading.Event) -> None:
    interval = settings.QALAB_CASE_LEASE_SECONDS / 3
    try:
        while not stop.wait(interval):
            try:
                if not lease_renew(case_id=case_id, run_id=run_id, owner=owner):
                    return  # finished, or taken over: nothing more to keep
            except DatabaseError as exc:  # a blip: the next tick tries again
                logger.warning("case %s: lease not renewed: %s", case_id, exc)
    finally:
        connections.close_all()  # this thread's own connections


@contextmanager
def lease_kept(*, case_id: int, run_id: int, owner: str) -> Iterator[None]:
    """Renew the case's lease in the background while the body runs."""
    stop = threading.Event()
    thread = threading.Thread(
        target=_keep, args=(case_id, run_id, owner, stop), name=f"lease-{case_id}", daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # Never wait long: a renewal blocked on a row lock ends on its own (daemon thread).
        thread.join(timeout=2)
