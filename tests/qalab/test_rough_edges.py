"""Small things a user notices: no stray folders from the demo broker, a favicon on every page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

ROOT = Path(__file__).resolve().parents[2]


def test_the_file_broker_keeps_all_its_folders_under_var(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env["DJANGO_SETTINGS_MODULE"] = "qalab.settings"
    code = (
        "import json, django; from django.conf import settings; "
        "print(json.dumps({'url': settings.CELERY_BROKER_URL, "
        "'options': settings.CELERY_BROKER_TRANSPORT_OPTIONS, 'var': str(settings.VAR_DIR)}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    settings = json.loads(out.stdout)
    assert settings["url"] == "filesystem://"
    folders = {k: v for k, v in settings["options"].items() if k.endswith("_folder")}
    assert set(folders) >= {"control_folder", "processed_folder"}
    assert all(Path(v).is_relative_to(settings["var"]) for v in folders.values())
    assert not (tmp_path / "control").exists()


@pytest.mark.django_db
def test_every_page_has_a_favicon(admin_client):
    response = admin_client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("qalab/favicon.svg")
    assert finders.find("qalab/favicon.svg")
    page = admin_client.get("/admin/runs/run/").content.decode()
    assert 'rel="icon"' in page and "qalab/favicon.svg" in page
