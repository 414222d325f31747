"""Plain factory functions for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qalab.models import Organization
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder
from qalab.orgs import organization_import

DATA = Path(__file__).resolve().parent / "data"


def import_demo_org() -> Organization:
    org, _ = organization_import(context=load_org_folder(DEMO_ORG_DIR))
    return org


def make_staff_user(
    django_user_model: Any, *, username: str = "reviewer", perms: tuple[str, ...] = ()
) -> Any:
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(
        username=username, password="pw-123456", is_staff=True
    )
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


def bare_run(organization: Organization, **fields: Any) -> Any:
    """A run row with nothing generated or played (a reference Quick of seed 1, budget 1), for
    tests of pages, lists and the delta; `fields` override any column."""
    from runs.models import Run

    values: dict[str, Any] = {
        "organization": organization,
        "preset": "quick",
        "responder_spec": "reference",
        "engine": "offline",
        "seed": 1,
        "settings_hash": "x",
        "token_budget": 1,
        **fields,
    }
    return Run.objects.create(**values)
