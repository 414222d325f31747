"""The judge accuracy page (issue 36, points 3 and 6, acceptance 1): per rule precision on the
reviewers' labels made by hand, with its Wilson interval and count, misses added by hand, flagged
rules with their worst false positives, per engine and judge version, the lab's own runs apart,
and reviewer agreement. The expected figures are worked out by hand below, not by the code."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.urls import reverse

from qalab.models import Organization
from runs.accuracy import judge_version
from runs.models import FindingTriage, MissedFinding, Run, RunCase, RunFinding
from tests.factories import bare_run, make_staff_user

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
XSS = '<img src=x onerror="alert(1)">'


def accuracy_url(org: Organization | str, query: str = "") -> str:
    slug = org if isinstance(org, str) else org.slug
    return reverse("admin:runs_run_accuracy", args=[slug]) + query


class Seeder:
    """Findings, cases and hand-made (or carried) decisions on bare runs, with fixed times."""

    def __init__(self) -> None:
        self.tick = 0
        self.positions: dict[int, int] = {}

    def case(self, run: Run, scenario: str = "sc-01", trial: int = 1) -> RunCase:
        case, _ = RunCase.objects.get_or_create(
            run=run, scenario_key=scenario, trial=trial, defaults={"scenario_type": "booking"}
        )
        return case

    def finding(
        self,
        run: Run,
        rule: str,
        *,
        fingerprint: str = "",
        severity: str = "major",
        confidence: float = 0.5,
        subject: str = "",
        case: RunCase | None = None,
    ) -> RunFinding:
        position = self.positions.get(run.pk, 0)
        self.positions[run.pk] = position + 1
        return RunFinding.objects.create(
            run=run,
            case=case or self.case(run),
            position=position,
            rule_id=rule,
            severity=severity,
            subject=subject,
            evidence=[{"source": "reply", "quote": f"quote of {rule} {position}", "turn": 1}],
            rationale="r",
            fix_target="kb",
            fix_text="f",
            effort="S",
            confidence=confidence,
            detector="test",
            fingerprint=fingerprint or f"{rule}-{run.pk}-{position}",
        )

    def decide(
        self, finding: RunFinding, state: str, reviewer: Any = None, *, carried: Run | None = None
    ) -> FindingTriage:
        self.tick += 1
        row = FindingTriage.objects.create(
            run=finding.run,
            finding=finding,
            state=state,
            reviewer=reviewer,
            carried_from_run=carried.pk if carried else None,
        )
        FindingTriage.objects.filter(pk=row.pk).update(created_at=T0 + timedelta(minutes=self.tick))
        return row


def seed_three_runs(org: Organization, reviewer: Any) -> dict[str, Any]:
    """Triage over three runs of a real bot (the second on the LLM judge, the third with a
    changed prompt), plus a canary run of the lab's own and carried copies that must not count.

    By hand, the real bots' labels per rule:
    - unsupported_facts: f1 confirmed, f2 false positive (was confirmed first: the newest
      counts), f3 fixed, f4 won't fix -> 3 right of 4; f5 a carried copy: no label.
    - contradicts_manifest: f6 confirmed, f7 false positive -> 1 of 2; f8 only `open`, f9
      confirmed then re-opened: no label.
    - ignored_question: f10, f11, f12 false positive -> 0 of 3.
    """
    s = Seeder()
    r1 = bare_run(org, source={"prompts": {"judge": "aaa"}})
    r2 = bare_run(org, engine="openai", source={"prompts": {"judge": "aaa"}})
    r3 = bare_run(org, source={"prompts": {"judge": "bbb"}})
    lab = bare_run(org, responder_spec="canary:invent_price", source={"prompts": {"judge": "aaa"}})
    trial = s.case(r3, "sc-03", trial=2)

    f1 = s.finding(r1, "unsupported_facts")
    s.decide(f1, "confirmed", reviewer)
    f2 = s.finding(r1, "unsupported_facts")
    s.decide(f2, "confirmed", reviewer)
    s.decide(f2, "false_positive", reviewer)
    s.decide(s.finding(r2, "unsupported_facts"), "fixed", reviewer)
    s.decide(s.finding(r3, "unsupported_facts"), "wont_fix", reviewer)
    s.decide(s.finding(r3, "unsupported_facts"), "false_positive", reviewer, carried=r1)

    s.decide(s.finding(r2, "contradicts_manifest"), "confirmed", reviewer)
    s.decide(s.finding(r3, "contradicts_manifest"), "false_positive", reviewer)
    s.decide(s.finding(r3, "contradicts_manifest"), "open", reviewer)
    f9 = s.finding(r3, "contradicts_manifest")
    s.decide(f9, "confirmed", reviewer)
    s.decide(f9, "open", reviewer)

    # The worst false positive: critical first, then the judge's most confident.
    worst = [
        s.finding(r1, "ignored_question", severity="minor", confidence=0.99),
        s.finding(r1, "ignored_question", severity="major", confidence=0.4, subject=XSS),
        s.finding(r3, "ignored_question", severity="critical", confidence=0.3, case=trial),
    ]
    for f in worst:
        s.decide(f, "false_positive", reviewer)

    # The lab's own run: ignored_question would read 1 of 1, and a new rule only there.
    s.decide(s.finding(lab, "ignored_question"), "confirmed", reviewer)
    s.decide(s.finding(lab, "lab_only_rule"), "false_positive", reviewer)

    def miss(run: Run, rule: str, quote: str, carried: Run | None = None) -> MissedFinding:
        return MissedFinding.objects.create(
            run=run,
            case=s.case(run),
            turn_index=1,
            rule_id=rule,
            severity="major",
            quote=quote,
            reviewer=reviewer,
            fingerprint=f"miss-{quote}",
            carried_from_run=carried.pk if carried else None,
        )

    miss(r2, "ignored_question", "a")
    miss(r2, "ignored_question", "b")
    miss(r3, "ignored_question", "b", carried=r2)  # carried: not a new miss
    miss(r1, "other", "c")
    miss(lab, "ignored_question", "d")
    return {"runs": (r1, r2, r3), "lab": lab, "worst": worst, "trial": trial}


_ROW = re.compile(r"<tr (data-rule=[^>]*)>")
_ATTR = re.compile(r'data-([a-z]+)="([^"]*)"')


def rule_table(html: str, table_id: str) -> dict[str, dict[str, str]]:
    """A rule table's rows by rule: their data attributes."""
    body = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    rows = {}
    for attrs in _ROW.findall(body):
        data = dict(_ATTR.findall(attrs))
        rows[data.pop("rule")] = data
    return rows


# Wilson 95% intervals worked out by hand (z = 1.96; e.g. 3 of 4: centre (0.75 + 0.4802) /
# 1.9604 = 0.6275, half-width 1.96 * sqrt(0.0469 + 0.0600) / 1.9604 = 0.3269), as statistics
# tables give them.
ROWS_BY_HAND = {
    "contradicts_manifest": {"right": "1", "labels": "2", "low": "0.0945", "high": "0.9055"},
    "ignored_question": {"right": "0", "labels": "3", "low": "0.0000", "high": "0.5615"},
    "other": {"right": "0", "labels": "0"},
    "unsupported_facts": {"right": "3", "labels": "4", "low": "0.3006", "high": "0.9544"},
}


def test_it_shows_each_rules_precision_interval_and_count_from_hand_made_labels(
    admin_client: Any, settings: Any
) -> None:
    settings.QALAB_JUDGE_PRECISION_FLOOR = 0.7
    settings.QALAB_JUDGE_PRECISION_MIN_LABELS = 3
    org = Organization.objects.create(slug="acme", name="Acme", locale="en")
    seeded = seed_three_runs(org, None)
    r1, r2, r3 = seeded["runs"]

    response = admin_client.get(accuracy_url(org))
    assert response.status_code == 200
    html = response.content.decode()
    rows = rule_table(html, "qa-accuracy-rules")
    missed = {"contradicts_manifest": "0", "ignored_question": "2", "other": "1"}
    expected = {
        rule: {**by_hand, "missed": missed.get(rule, "0")} for rule, by_hand in ROWS_BY_HAND.items()
    }
    expected["ignored_question"]["flagged"] = "1"  # 0% on 3 labels; 1 of 2 has too few
    assert rows == expected
    assert "lab_only_rule" not in html
    # The figures as the reader sees them: whole percentages, never 100% unless exact.
    unsupported = html.split('data-rule="unsupported_facts"', 1)[1].split("</tr>", 1)[0]
    assert ">75%</td>" in unsupported and "30% – 95%" in unsupported and "3 / 4" in unsupported
    # None right of 3: the interval starts at exactly 0%, not a rounding error's 1%.
    assert "<td>0% – 56%</td>" in html.split('data-rule="ignored_question"', 1)[1]
    assert "9 labels, 5 false positives" in html and "3 misses added by hand" in html

    # The flagged rule's worst false positives, linked to their case (a trial's key too).
    flagged = html.split('<section class="qa-flagged" data-rule="ignored_question">', 1)[1]
    links = re.findall(r'<a class="qa-example" href="([^"]+)"', flagged.split("</section>")[0])
    minor, major, critical = seeded["worst"]
    assert links == [
        reverse("admin:runs_run_case", args=[r3.pk, "sc-03.t2"]) + f"#finding-{critical.pk}",
        reverse("admin:runs_run_case", args=[r1.pk, "sc-01"]) + f"#finding-{major.pk}",
        reverse("admin:runs_run_case", args=[r1.pk, "sc-01"]) + f"#finding-{minor.pk}",
    ]
    assert XSS not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html

    # Per engine: the offline judge's runs 1 and 3, the LLM judge's run 2.
    offline = rule_table(html, "qa-accuracy-engine-offline")
    llm = rule_table(html, "qa-accuracy-engine-openai")
    assert {r: (v["right"], v["labels"]) for r, v in offline.items()} == {
        "contradicts_manifest": ("0", "1"),
        "ignored_question": ("0", "3"),
        "other": ("0", "0"),
        "unsupported_facts": ("2", "3"),
    }
    assert {r: (v["right"], v["labels"], v["missed"]) for r, v in llm.items()} == {
        "contradicts_manifest": ("1", "1", "0"),
        "ignored_question": ("0", "0", "2"),
        "unsupported_facts": ("1", "1", "0"),
    }
    # Per judge version: runs 1 and 2 share one, run 3's changed prompt is another.
    assert judge_version(r1) == judge_version(r2) != judge_version(r3)
    first = rule_table(html, f"qa-accuracy-version-{judge_version(r1)}")
    third = rule_table(html, f"qa-accuracy-version-{judge_version(r3)}")
    assert (first["unsupported_facts"]["right"], first["unsupported_facts"]["labels"]) == ("2", "3")
    assert (third["unsupported_facts"]["right"], third["unsupported_facts"]["labels"]) == ("1", "1")
    assert third["ignored_question"]["labels"] == "1"


def test_the_labs_own_runs_are_shown_apart(admin_client: Any, settings: Any) -> None:
    settings.QALAB_JUDGE_PRECISION_MIN_LABELS = 20
    org = Organization.objects.create(slug="acme", name="Acme", locale="en")
    seeded = seed_three_runs(org, None)
    html = admin_client.get(accuracy_url(org, "?runs=lab")).content.decode()
    rows = rule_table(html, "qa-accuracy-rules")
    assert {r: (v["right"], v["labels"], v["missed"]) for r, v in rows.items()} == {
        "ignored_question": ("1", "1", "1"),
        "lab_only_rule": ("0", "1", "0"),
    }
    assert f"#{seeded['runs'][0].pk}<" not in html
    # The default floor needs 20 labels: nothing is flagged on 3.
    real = admin_client.get(accuracy_url(org)).content.decode()
    assert 'data-flagged="1"' not in real and "3 of 20 labels" in real


def test_reviewer_agreement_shows_disagreements_and_kappa_per_pair(
    admin_client: Any, django_user_model: Any
) -> None:
    org = Organization.objects.create(slug="acme", name="Acme", locale="en")
    alice, bob, carol = (
        django_user_model.objects.create_user(username=name, password="pw-123456")
        for name in ("alice", "bob", "carol")
    )
    s = Seeder()
    r1, r2 = bare_run(org), bare_run(org)
    # Alice and Bob on 12 fingerprints: 7 both right, 3 both wrong, 2 split. By hand:
    # p_o = 10/12; each says right on 8 of 12, so p_e = (8/12)^2 + (4/12)^2 = 80/144;
    # kappa = (120/144 - 80/144) / (64/144) = 0.625.
    plan = [(True, True)] * 7 + [(False, False)] * 3 + [(True, False), (False, True)]
    state = {True: "confirmed", False: "false_positive"}
    split = []
    for i, (a, b) in enumerate(plan):
        f = s.finding(r1, "unsupported_facts", fingerprint=f"fp-{i:02d}")
        s.decide(f, state[a], alice)
        # Bob decides the same defect on the next run: the same fingerprint, another finding.
        g = s.finding(r2, "unsupported_facts", fingerprint=f"fp-{i:02d}")
        s.decide(g, state[a], alice, carried=r1)  # a carried copy: not Alice's, nor Bob's
        s.decide(g, state[b], bob)
        if a != b:
            split.append((f, g))
    # Carol shares two fingerprints with each: too few for kappa. Her older decision on fp-00
    # (false positive) gave way to a newer one.
    for i in (0, 1):
        f = RunFinding.objects.get(run=r1, fingerprint=f"fp-{i:02d}")
        s.decide(f, "false_positive", carol)
        s.decide(f, "fixed", carol)

    html = admin_client.get(accuracy_url(org)).content.decode()
    kappa = html.split('id="qa-accuracy-kappa"', 1)[1].split("</table>", 1)[0]
    pairs = re.findall(r"<tr ([^>]*)><th scope=\"row\">([^<]*)</th>.*?<td>([^<]*)</td></tr>", kappa)
    assert pairs == [
        ('data-pairs="12" data-kappa="0.6250"', "alice · bob", "0.63"),
        ('data-pairs="2"', "alice · carol", "2 pairs, kappa needs 10"),
        ('data-pairs="2"', "bob · carol", "2 pairs, kappa needs 10"),
    ]
    table = html.split('id="qa-accuracy-disagreements"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'data-fingerprint="([^"]+)"', table) == ["fp-10", "fp-11"]
    (f10, g10), _ = split
    row = table.split('data-fingerprint="fp-10"', 1)[1].split("</tr>", 1)[0]
    assert "alice: <strong>Confirmed</strong> (right)" in row
    assert "bob: <strong>False positive</strong> (wrong)" in row
    for f in (f10, g10):
        url = reverse("admin:runs_run_case", args=[f.run_id, "sc-01"]) + f"#finding-{f.pk}"
        assert f'href="{url}"' in row


def test_below_ten_shared_fingerprints_it_says_how_many_kappa_needs(admin_client: Any) -> None:
    org = Organization.objects.create(slug="acme", name="Acme", locale="en")
    html = admin_client.get(accuracy_url(org)).content.decode()
    assert "No fingerprint has been decided by hand by two reviewers yet." in html
    assert "has been triaged by hand yet" in html


def test_another_organizations_page_is_a_404_and_the_pages_link_to_it(
    client: Any, django_user_model: Any
) -> None:
    a = Organization.objects.create(slug="acme", name="Acme", locale="en")
    b = Organization.objects.create(slug="zebra", name="Zebra", locale="en")
    run_a, run_b = bare_run(a), bare_run(b)
    user = make_staff_user(django_user_model, perms=("runs.view_run",))
    a.members.add(user)
    client.force_login(user)
    assert client.get(accuracy_url(a)).status_code == 200
    for key in ("zebra", str(b.pk), "no-such-org"):
        assert client.get(accuracy_url(key)).status_code == 404, key
        assert client.get(accuracy_url(key, "?runs=lab")).status_code == 404, key
    assert client.get(reverse("admin:runs_run_report", args=[run_b.pk])).status_code == 404

    link = f'id="qa-accuracy-link" href="{accuracy_url(a)}"'
    report = client.get(reverse("admin:runs_run_report", args=[run_a.pk])).content.decode()
    trend = client.get(reverse("admin:runs_run_trend", args=[a.slug])).content.decode()
    assert link in report and link in trend


def test_a_refitted_threshold_is_another_judge_version(demo_org: Organization) -> None:
    # The same prompts and model files, judged with another confirm threshold: another judge.
    source = {"prompts": {"judge": "abc"}, "semantic": {"model.onnx": "123"}}
    semantic = {"on": True, "thresholds": {"self_contradiction": 0.9}}
    default = bare_run(demo_org, source=source, config={"semantic": semantic})
    same = bare_run(demo_org, source=source, config={"semantic": semantic})
    refitted = bare_run(
        demo_org,
        source=source,
        config={"semantic": {**semantic, "confirm_thresholds": {"ignored_question": 0.3}}},
    )
    assert judge_version(default) == judge_version(same) != judge_version(refitted)
