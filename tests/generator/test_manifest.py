"""Manifest: canonical entries from the org context, each with a source that resolves."""

from __future__ import annotations

from generator.domain import hours_by_weekday, org_text, parse_days
from generator.manifest import build_manifest, generate_manifest, resolve_source
from qalab.domain import HoursSpec, ServiceSpec


def _entries(manifest):
    return [
        *manifest.services,
        *manifest.intake_fields,
        *manifest.policies,
        *manifest.hours,
        *manifest.contacts,
        *manifest.disallowed_claims,
    ]


def test_it_points_every_source_at_a_real_entry(org):
    manifest = build_manifest(org)
    for entry in _entries(manifest):
        assert resolve_source(org, entry.source) is not None, entry.source


def test_it_restates_the_entry_its_source_names(org):
    manifest = build_manifest(org)
    for service in manifest.services:
        spec = resolve_source(org, service.source)
        assert isinstance(spec, ServiceSpec)
        assert (spec.name, spec.price, spec.duration) == (
            service.name,
            service.price,
            service.duration_minutes,
        )
    for field in manifest.intake_fields:
        assert resolve_source(org, field.source).key == field.key
    for policy in manifest.policies:
        assert resolve_source(org, policy.source).text == policy.text
    for contact in manifest.contacts:
        assert resolve_source(org, contact.source) == contact.value
    for hours in manifest.hours:
        assert isinstance(resolve_source(org, hours.source), HoursSpec)


def test_it_resolves_nothing_for_a_bogus_source(demo):
    assert resolve_source(demo, "org.yaml:services[99]") is None
    assert resolve_source(demo, "org.yaml:nonsense") is None
    assert resolve_source(demo, "kb/missing.md") is None
    assert resolve_source(demo, "kb/booking-and-policies.md") is not None


def test_it_lists_disallowed_claims_of_every_kind(org):
    claims = build_manifest(org).disallowed_claims
    kinds = {c.kind for c in claims}
    assert {"invented_discount", "unoffered_service", "wrong_hours", "guarantee"} <= kinds
    assert len({c.id for c in claims}) == len(claims)


def test_it_only_calls_services_unoffered_that_the_org_never_mentions(org):
    text = org_text(org)
    for claim in build_manifest(org).disallowed_claims:
        if claim.kind == "unoffered_service":
            name = claim.text.removeprefix("offers ")
            assert name.casefold() not in text
            assert all(name.casefold() not in s.name.casefold() for s in org.services)


def test_it_claims_wrong_hours_only_for_a_closed_day(org):
    open_days = hours_by_weekday(org.hours)
    for claim in build_manifest(org).disallowed_claims:
        if claim.id == "open-on-closed-day":
            day = claim.text.removeprefix("open on ")
            assert not parse_days(day) & set(open_days)


def test_it_reads_day_ranges():
    assert parse_days("Mon-Thu") == {0, 1, 2, 3}
    assert parse_days("Monday to Friday") == {0, 1, 2, 3, 4}
    assert parse_days("Sat, Sun") == {5, 6}
    assert parse_days("Fri-Mon") == {4, 5, 6, 0}
    assert parse_days("daily") == set(range(7))


def test_it_meters_the_manifest_as_one_call(demo, engine):
    manifest = generate_manifest(demo, engine)
    assert manifest == build_manifest(demo)
    assert [c["purpose"] for c in engine.ledger.calls] == ["manifest"]
