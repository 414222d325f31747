"""docs/ci/: the GitHub Actions and GitLab CI examples parse as YAML and call only commands and
options that exist (the parsers behind `manage.py <command> --help`). They cannot run here."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / "docs" / "ci" / "github-actions.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return [node] if isinstance(node, str) else []


def manage_calls(doc: dict[str, Any]) -> list[list[str]]:
    """Every `python manage.py ...` command line in the document's strings (comments aside)."""
    calls = []
    for text in _strings(doc):
        for line in text.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:2] == ["python", "manage.py"]:
                calls.append(words[2:])
    return calls


def check_call(argv: list[str]) -> dict[str, Any]:
    """The command exists, each option is in its --help, and the arguments parse."""
    name, *args = argv
    commands = get_commands()
    assert name in commands, f"no command {name}"
    command = load_command_class(commands[name], name)
    parser = command.create_parser("manage.py", name)
    helptext = parser.format_help()
    for arg in args:
        if arg.startswith("--"):
            assert arg in helptext, f"{name} has no option {arg}"
    return vars(parser.parse_args(args))


@pytest.fixture(params=[GITHUB, GITLAB], ids=["github", "gitlab"])
def example(request: pytest.FixtureRequest) -> tuple[Path, dict[str, Any]]:
    return request.param, yaml.safe_load(request.param.read_text(encoding="utf-8"))


def test_the_examples_gate_on_a_quick_run_with_every_report(example):
    path, doc = example
    calls = manage_calls(doc)
    assert [c[0] for c in calls] == ["migrate", "qalab_import_org", "qalab_run"], path.name
    imported = check_call(calls[1])
    org_yaml = yaml.safe_load((ROOT / imported["dir"] / "org.yaml").read_text(encoding="utf-8"))
    run = check_call(calls[2])
    assert run["org"] == org_yaml["slug"]
    assert run["preset"] == "quick" and run["inline"]
    assert run["json_path"] and run["md_path"] and run["junit_path"]
    text = path.read_text(encoding="utf-8")
    for code in "01234":
        assert f"#   {code}  " in text, f"exit code {code} is not explained in {path.name}"
    # The worker variant in the comments uses real commands too.
    assert "celery -A qalab.celery worker" in text
    check_call(["qalab_run", "--org", "demo", "--wait", "--timeout", "1800"])


def test_github_starts_the_services_uploads_and_publishes_the_reports():
    doc = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    job = doc["jobs"]["qalab"]
    assert {"postgres", "redis"} <= set(job["services"])
    assert job["env"]["DATABASE_URL"].startswith("postgres://")
    assert job["env"]["CELERY_BROKER_URL"].startswith("redis://")
    run = check_call(manage_calls(doc)[-1])
    steps = {step.get("uses", "").split("@")[0]: step for step in job["steps"]}
    upload = steps["actions/upload-artifact"]
    assert upload["if"] == "always()"
    folder = upload["with"]["path"].rstrip("/")
    for report in (run["json_path"], run["md_path"], run["junit_path"]):
        assert report.startswith(folder + "/")
    publish = steps["dorny/test-reporter"]
    assert publish["if"] == "always()"
    assert publish["with"]["path"] == run["junit_path"]
    assert publish["with"]["reporter"] == "java-junit"
    assert "GITHUB_STEP_SUMMARY" in GITHUB.read_text(encoding="utf-8")


def test_gitlab_starts_the_services_keeps_the_reports_and_reads_the_junit():
    doc = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    job = doc["qalab"]
    images = {service["name"].split(":")[0]: service["alias"] for service in job["services"]}
    assert set(images) == {"postgres", "redis"}
    assert f"@{images['postgres']}:5432/" in job["variables"]["DATABASE_URL"]
    assert job["variables"]["CELERY_BROKER_URL"].startswith(f"redis://{images['redis']}:")
    run = check_call(manage_calls(doc)[-1])
    artifacts = job["artifacts"]
    assert artifacts["when"] == "always"
    assert artifacts["reports"]["junit"] == run["junit_path"]
    folder = artifacts["paths"][0].rstrip("/")
    for report in (run["json_path"], run["md_path"], run["junit_path"]):
        assert report.startswith(folder + "/")
