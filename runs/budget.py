"""The database-backed token ledger: reserve with one conditional UPDATE, settle after the call."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import (
    Case,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from qalab.llm import BudgetExceeded, Role, RunEnded, Usage
from qalab.redact import redact
from runs.models import FINAL_STATUSES, LlmCall, Run

# Share of a run's budget held for the judge stage (LLM reviews, confirmations, top-action
# phrasing) when the run's engine runs the LLM judge (not `offline`): generation and simulation
# can never spend it, so judging is not starved by them (issue 19). What the judge has spent
# (it reviews each case as soon as its conversation ends) comes out of the share. The judge may
# spend the whole budget: the held share is its own.
JUDGE_SHARE = 0.3


def judge_held(*, budget: int, engine: str) -> int:
    """Tokens of `budget` held for the judge stage of a run on `engine`."""
    return 0 if engine == "offline" else int(budget * JUDGE_SHARE)


def responder_metered_apart(run: Run) -> bool:
    """Whether the run meters the bot's own tokens (role `responder`) against their own budget;
    a run made before that (budget 0) has them in the lab's counters."""
    return run.responder_token_budget > 0


def _counters(role: str, apart: bool) -> tuple[str, str]:
    """The run's (used, reserved) columns a call of `role` is charged to."""
    if role == "responder" and apart:
        return "responder_tokens_used", "responder_tokens_reserved"
    return "tokens_used", "tokens_reserved"


def _still_held(held: int) -> Value | Greatest:
    """What is left of the judge's held share once the judge's own calls so far (settled, and
    open reservations) are taken from it: the judge reviews each case as its conversation ends,
    while other cases still talk, and that spending comes out of its share, not on top of it."""
    if not held:
        return Value(0)
    spent = (
        LlmCall.objects.filter(run_id=OuterRef("id"), role="judge")
        .values("run_id")
        .annotate(total=Sum(Case(When(status="reserved", then=F("reserved")), default=F("actual"))))
        .values("total")
    )
    zero = Value(0, output_field=IntegerField())
    return Greatest(zero, Value(held) - Coalesce(Subquery(spent), zero))


class DbLedger:
    """Meters one run's LLM work; `used` never exceeds the run's budget.

    A reservation is `prompt estimate + max_tokens`; it succeeds only if
    `used + reserved + n <= budget` holds at the moment of the UPDATE, so concurrent workers
    can never overspend. A denied reservation flags the run `budget_exhausted`.

    Two budgets: the lab's roles (generator, simulator, judge) spend `token_budget`; the bot's
    own calls (role `responder`, when the lab runs the bot) spend `responder_token_budget`,
    with their own used/reserved counters and the same rule. The judge's held share is of the
    lab's budget only. Either running out flags the run `budget_exhausted`, which stops both.
    """

    def __init__(self, *, run_id: int) -> None:
        self.run_id = run_id
        self._held: int | None = None
        self._apart: bool | None = None

    def _read(self) -> None:
        # The run's budgets and engine never change.
        budget, engine, responder_budget = Run.objects.values_list(
            "token_budget", "engine", "responder_token_budget"
        ).get(id=self.run_id)
        self._held = judge_held(budget=budget, engine=engine)
        self._apart = responder_budget > 0

    def held(self) -> int:
        """Tokens of the lab's budget held for the judge stage."""
        if self._held is None:
            self._read()
        assert self._held is not None
        return self._held

    def apart(self) -> bool:
        """Whether the bot's tokens go to the run's responder budget (not the lab's)."""
        if self._apart is None:
            self._read()
        return bool(self._apart)

    def reserve(self, *, role: Role, purpose: str, tokens: int, attempt: int = 1) -> int:
        # Other roles leave the judge's share alone; the judge is not stopped by a denial that
        # came from the other stages' (smaller) allotment, only by its own.
        judge = role == "judge"
        bot = role == "responder" and self.apart()
        used, reserved = _counters(role, self.apart())
        if bot:  # the bot's own budget: no judge's share in it
            fits = Q(responder_token_budget__gte=F(used) + F(reserved) + tokens)
        else:
            held = 0 if judge else self.held()
            fits = Q(token_budget__gte=F(used) + F(reserved) + tokens + _still_held(held))
        runs = Run.objects.filter(fits, id=self.run_id, locked_at__isnull=True)
        if not judge:
            runs = runs.filter(budget_exhausted=False)
        granted = runs.exclude(status__in=FINAL_STATUSES).update(
            **{reserved: F(reserved) + tokens}, heartbeat_at=timezone.now()
        )
        if granted != 1:
            status = Run.objects.values_list("status", flat=True).get(id=self.run_id)
            if status in FINAL_STATUSES:
                # An ended run (cancelled, errored by the reaper) spends nothing more.
                raise RunEnded(
                    f"run {self.run_id} has ended ({status}): {role} call {purpose!r} refused"
                )
            Run.objects.filter(id=self.run_id).update(budget_exhausted=True)
            LlmCall.objects.create(
                run_id=self.run_id,
                role=role,
                purpose=purpose,
                attempt=attempt,
                reserved=0,
                actual=0,
                status="denied",
            )
            if bot:
                raise BudgetExceeded(
                    f"the bot's token budget exhausted before {role} call {purpose!r} "
                    f"({tokens} tokens)"
                )
            share = f", {held} held for the judge" if held else ""
            raise BudgetExceeded(
                f"token budget exhausted before {role} call {purpose!r} ({tokens} tokens{share})"
            )
        call = LlmCall.objects.create(
            run_id=self.run_id, role=role, purpose=purpose, attempt=attempt, reserved=tokens
        )
        return call.id

    def settle(
        self,
        reservation: int,
        *,
        usage: Usage | None,
        status: str,
        latency_ms: int,
        raw: str = "",
        detail: str = "",
    ) -> None:
        with transaction.atomic():
            call = LlmCall.objects.select_for_update().get(id=reservation)
            # Missing usage is charged in full; usage above the reservation cannot be charged,
            # since the budget only ever covered the reservation.
            actual = call.reserved if usage is None else min(usage.total_tokens, call.reserved)
            call.actual = actual
            call.prompt_tokens = usage.prompt_tokens if usage else None
            call.completion_tokens = usage.completion_tokens if usage else None
            call.estimated = usage.estimated if usage else True
            call.status = status[:20]
            call.latency_ms = latency_ms
            call.raw_reply = redact(raw)
            call.detail = redact(detail)[:4000]
            call.save(
                update_fields=[
                    "actual",
                    "prompt_tokens",
                    "completion_tokens",
                    "estimated",
                    "status",
                    "latency_ms",
                    "raw_reply",
                    "detail",
                ]
            )
            used, reserved = _counters(call.role, self.apart())
            Run.objects.filter(id=self.run_id).update(
                **{reserved: F(reserved) - call.reserved, used: F(used) + actual}
            )

    def record(
        self, *, role: Role, purpose: str, status: str, raw: str = "", detail: str = ""
    ) -> None:
        LlmCall.objects.create(
            run_id=self.run_id,
            role=role,
            purpose=purpose,
            reserved=0,
            actual=0,
            estimated=False,
            status=status[:20],
            raw_reply=redact(raw),
            detail=redact(detail)[:4000],
        )


ORPHANED_DETAIL = "worker lost before the call was settled; charged in full"


def _settle_orphan(call_id: int, run_id: int, detail: str) -> bool:
    """Settle one open reservation as `orphaned` (charged in full, as any call without usage
    is), releasing the run's reserved tokens into used; False if it was settled meanwhile."""
    with transaction.atomic():
        call = LlmCall.objects.select_for_update().filter(id=call_id, status="reserved").first()
        if call is None:  # settled meanwhile by its own worker
            return False
        LlmCall.objects.filter(id=call_id).update(
            status="orphaned", actual=call.reserved, estimated=True, detail=detail
        )
        apart = Run.objects.values_list("responder_token_budget", flat=True).get(id=run_id) > 0
        used, reserved = _counters(call.role, apart)
        Run.objects.filter(id=run_id).update(
            **{reserved: F(reserved) - call.reserved, used: F(used) + call.reserved}
        )
        return True


def settle_orphaned_reservations(*, older_than: datetime) -> int:
    """Settle reservations left open by a worker that died mid-call: charged in full, as any
    call without usage is, status `orphaned`; the run's reserved tokens are released into used.
    Returns how many were settled. Called by the reaper."""
    calls = LlmCall.objects.filter(
        status="reserved", created_at__lt=older_than, run__locked_at__isnull=True
    ).values_list("id", "run_id")
    return sum(_settle_orphan(call_id, run_id, ORPHANED_DETAIL) for call_id, run_id in calls)


def settle_open_reservations(*, run_id: int) -> int:
    """Settle every reservation of a run still open when the run is about to be locked (every
    stage has ended, so whatever holds one is a lost worker's call): `orphaned`, charged in
    full, so a locked run never keeps reserved tokens and its used tokens are its ledger's sum.
    Returns how many were settled."""
    calls = LlmCall.objects.filter(run_id=run_id, status="reserved").values_list("id", flat=True)
    return sum(_settle_orphan(call_id, run_id, ORPHANED_DETAIL) for call_id in calls)


# Ledger statuses of a task the model did (a reply that was used, or replayed).
_MODEL_DONE = ("ok", "length", "replayed")


def fallback_tally(run_id: int) -> tuple[dict[str, int], int]:
    """LLM tasks of a run that fell back to the offline implementation, by role, and the
    number of LLM tasks in all (a task is one purpose: a fixture, a turn, a review). A task
    counts as fallen back when any of its rows is a fallback, however many attempts it took."""
    done: dict[str, set[str]] = {}
    fell: dict[str, set[str]] = {}
    for role, purpose, status in LlmCall.objects.filter(run_id=run_id).values_list(
        "role", "purpose", "status"
    ):
        kind = status.split(":")[0]
        if kind == "fallback":
            fell.setdefault(role, set()).add(purpose)
        elif kind in _MODEL_DONE:
            done.setdefault(role, set()).add(purpose)
    by_role = {role: len(purposes) for role, purposes in sorted(fell.items())}
    tasks = sum(len(done.get(r, set()) | fell.get(r, set())) for r in set(done) | set(fell))
    return by_role, tasks
