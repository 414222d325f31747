"""`manage.py qalab_demo_user`: create the demo admin user and print how to log in."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from qalab.database import require_migrated
from qalab.models import Organization


class Command(BaseCommand):
    help = "Create (or keep) the superuser 'admin' for the demo; credentials go to var/."

    def handle(self, *args: Any, **options: Any) -> None:
        require_migrated()
        path = settings.VAR_DIR / "demo-credentials.txt"
        user_model = get_user_model()
        user = user_model.objects.filter(username="admin").first()
        if user is None or not path.exists():
            password = secrets.token_urlsafe(12)
            user = user or user_model(username="admin", email="admin@example.com")
            user.is_staff = user.is_superuser = True
            user.set_password(password)
            user.save()
            path.write_text(
                f"Log in at http://127.0.0.1:8000/admin/ as user 'admin' with password '{password}'\n"
            )
            path.chmod(0o600)
        for org in Organization.objects.all():
            org.members.add(user)
        self.stdout.write(path.read_text().strip())
