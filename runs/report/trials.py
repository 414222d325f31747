"""Trials (`--trials K`): a run that plays every scenario K times, one case per trial, read per
scenario (pass rate, pass^k, pass@k) and per issue (in how many trials it was found; flaky
when some of a scenario's trials show it and others do not).

With n = k judged trials of which c passed, tau-bench's unbiased estimators C(c, k) / C(n, k)
(pass^k) and 1 - C(n - c, k) / C(n, k) (pass@k) are exactly "all passed" and "one passed", which
is what the report gives. A trial that errored is judged and failed (the bot answered no one); a
trial skipped for the budget, cancelled or still pending is not played: a scenario missing one
has pass^k only if another trial already failed, and pass@k only if one already passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from runs.report.schema import Case, FindingGroup, FindingTrials, ScenarioTrials, Trials
from runs.report.words import share_pct


def trial_outcome(case: Case) -> bool | None:
    """Whether a trial passed; None when it was not played and judged."""
    if case.status == "error":
        return False
    if case.status == "done" and case.passed is not None:
        return case.passed
    return None


def _share(values: Sequence[bool | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 4) if known else None


def scenario_trials(cases: Sequence[Case], k: int) -> list[ScenarioTrials]:
    """Each scenario over its trials, in scenario order."""
    by_scenario: dict[str, list[Case]] = {}
    for case in sorted(cases, key=lambda c: (c.scenario_key, c.trial)):
        by_scenario.setdefault(case.scenario_key, []).append(case)
    out = []
    for key, trials in by_scenario.items():
        outcomes = [trial_outcome(c) for c in trials]
        judged = [o for o in outcomes if o is not None]
        passed = sum(judged)
        failed = len(judged) - passed
        complete = len(judged) == k
        out.append(
            ScenarioTrials(
                scenario_key=key,
                scenario=trials[0].scenario,
                cases=[c.id for c in trials],
                played=len(judged),
                passed=passed,
                pass_rate=round(passed / len(judged), 4) if judged else None,
                pass_all=False if failed else (True if complete else None),
                pass_any=True if passed else (False if complete else None),
                flaky=bool(passed and failed),
            )
        )
    return out


def trials_summary(cases: Sequence[Case], groups: Sequence[FindingGroup], k: int) -> Trials | None:
    """The run's trials figures; None for a run of one trial."""
    if k <= 1:
        return None
    scenarios = scenario_trials(cases, k)
    played = sum(s.played for s in scenarios)
    passed = sum(s.passed for s in scenarios)
    return Trials(
        k=k,
        played=played,
        passed=passed,
        pass_rate=round(passed / played, 4) if played else None,
        pass_hat_k=_share([s.pass_all for s in scenarios]),
        pass_at_k=_share([s.pass_any for s in scenarios]),
        flaky_scenarios=sum(s.flaky for s in scenarios),
        flaky_issues=sum(1 for g in groups if g.trials and g.trials.flaky),
        scenarios=scenarios,
    )


def with_trials(
    groups: Sequence[FindingGroup], cases: Sequence[Case], k: int
) -> list[FindingGroup]:
    """`groups` with where each was found over its scenarios' trials (unchanged for one trial).

    An issue is flaky when, in a scenario it was found in, some judged trials show it and others
    do not."""
    if k <= 1:
        return list(groups)
    by_id = {c.id: c for c in cases}
    judged: dict[str, set[str]] = {}
    for case in cases:
        if trial_outcome(case) is not None:
            judged.setdefault(case.scenario_key, set()).add(case.id)
    out = []
    for group in groups:
        found = [by_id[key] for key in group.cases if key in by_id]
        if not found:  # run-wide
            out.append(group)
            continue
        found_in: dict[str, set[str]] = {}
        for case in found:
            found_in.setdefault(case.scenario_key, set()).add(case.id)
        played = sum(len(judged.get(key, ())) for key in found_in)
        flaky = any(
            0 < len(ids & judged.get(key, set())) < len(judged.get(key, ()))
            for key, ids in found_in.items()
        )
        trials = FindingTrials(seen=len(found), played=played, flaky=flaky)
        out.append(group.model_copy(update={"trials": trials}))
    return out


# --------------------------------------------------------------------------- words
# What every format (page, Markdown, JUnit, CLI) says of trials, in one place.


def yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "n/a"}[value]


def trials_line(trials: Trials) -> str:
    """'pass rate 10 of 12 trials (83%) · pass^3 75% · pass@3 100% · 1 flaky scenario, 1 flaky
    issue': the run's trial figures in one line."""
    k = trials.k
    flaky = (
        f" · {trials.flaky_scenarios} flaky scenario{'s' if trials.flaky_scenarios != 1 else ''}"
        f", {trials.flaky_issues} flaky issue{'s' if trials.flaky_issues != 1 else ''}"
    )
    return (
        f"pass rate {trials.passed} of {trials.played} trials ({share_pct(trials.pass_rate)}) · "
        f"pass^{k} {share_pct(trials.pass_hat_k)} · pass@{k} {share_pct(trials.pass_at_k)}" + flaky
    )


def flaky_text(group: FindingGroup) -> str:
    """'flaky: found in 1 of 3 trials' for an issue some trials show and others do not; '' for
    one found in every trial (or a run of one trial)."""
    t = group.trials
    if t is None or not t.flaky:
        return ""
    return f"flaky: found in {t.seen} of {t.played} trials"


def trial_label(case: Case, k: int) -> str:
    """'trial 2 of 3' ('' in a run of one trial)."""
    return f"trial {case.trial} of {k}" if k > 1 else ""
