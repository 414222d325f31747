"""Hostile org folders (issue 33, item 6): alias bombs, deep nesting, oversized files and
case-insensitive duplicate names get one line naming the file and the limit or field, never a
traceback, and nothing is imported."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from qalab.models import KbDocument, Organization
from qalab.org_folder import DEMO_ORG_DIR, OrgFolderError, OrgFolderLimits, load_org_folder

ROOT = Path(__file__).resolve().parents[2]
URL = "http://127.0.0.1:5005/webhook"


def _demo(tmp_path: Path, slug: str = "hostile") -> Path:
    folder = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, folder)
    data = yaml.safe_load((folder / "org.yaml").read_text())
    data["slug"] = slug
    (folder / "org.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _with_mapping(folder: Path, request_yaml: str) -> None:
    """Append a responder mapping whose `request` template is the given YAML text."""
    text = (folder / "org.yaml").read_text()
    text += f"responder: {URL}\nresponder_http:\n  method: POST\n{request_yaml}"
    text += "  response:\n    reply: $.text\n"
    (folder / "org.yaml").write_text(text)


def _laughs(levels: int, width: int = 10) -> str:
    """The billion laughs: each level an anchor holding `width` aliases of the one before."""
    lines = ["  request:", "    l0: &l0 lol"]
    for i in range(1, levels + 1):
        lines.append(f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def _one_line_error(folder: Path, limits: OrgFolderLimits | None = None) -> str:
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder, limits=limits)
    message = str(raised.value)
    assert "\n" not in message, message
    return message


def test_an_alias_bomb_in_the_request_template_is_refused_at_once(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    _with_mapping(folder, _laughs(9))  # 10^9 strings once expanded
    started = time.monotonic()
    message = _one_line_error(folder)
    assert time.monotonic() - started < 5
    assert "org.yaml" in message and "alias" in message


def test_a_small_alias_bomb_is_refused_too(tmp_path: Path) -> None:
    """10^6 nodes: imported whole before, blowing up every copy the lab makes of the mapping."""
    folder = _demo(tmp_path)
    _with_mapping(folder, _laughs(6))
    message = _one_line_error(folder)
    assert "org.yaml" in message and "alias" in message and "responder_http" in message


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    _with_mapping(folder, "  request: &loop\n    again: *loop\n")
    message = _one_line_error(folder)
    assert "org.yaml" in message and "alias" in message


def test_a_few_anchors_still_work(tmp_path: Path) -> None:
    """Anchors are YAML: a template reused a few times is no attack."""
    folder = _demo(tmp_path)
    _with_mapping(folder, "  request:\n    a: &m '{{message}}'\n    b: *m\n    c: *m\n")
    context = load_org_folder(folder)
    assert context.responder_http is not None
    assert context.responder_http.request == {
        "a": "{{message}}",
        "b": "{{message}}",
        "c": "{{message}}",
    }


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_deep_nesting_is_refused_without_a_traceback(tmp_path: Path, opener: str) -> None:
    folder = _demo(tmp_path)
    closer = "]" if opener == "[" else "}"
    _with_mapping(folder, f"  request: {opener * 5000}1{closer * 5000}\n")
    message = _one_line_error(folder)
    assert "org.yaml" in message and "nest" in message and "responder_http" in message


def test_nesting_through_aliases_is_bounded_too(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    lines = ["  request:", "    l0: &l0 [x]"]
    lines += [f"    l{i}: &l{i} [[[[[[[[[[*l{i - 1}]]]]]]]]]]" for i in range(1, 40)]
    _with_mapping(folder, "\n".join(lines) + "\n")
    message = _one_line_error(folder)
    assert "org.yaml" in message and "nest" in message


def test_duplicate_keys_in_a_mapping_are_refused(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    (folder / "org.yaml").write_text((folder / "org.yaml").read_text() + "slug: other\n")
    message = _one_line_error(folder)
    assert "org.yaml" in message and "'slug'" in message and "twice" in message


def test_an_oversized_kb_document_names_the_file_and_the_limit(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    big = folder / "kb" / "huge.md"
    big.write_text("# Huge\n" + "All treatments are listed at the desk.\n" * 60_000)  # 2.3 MB
    message = _one_line_error(folder)
    assert "huge.md" in message and "QALAB_ORG_MAX_FILE_BYTES" in message
    assert "2,097,152" in message


def test_an_oversized_org_yaml_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    with (folder / "org.yaml").open("a") as f:
        f.write("# padding\n" * 2000)
    message = _one_line_error(folder, OrgFolderLimits(max_file_bytes=10_000))
    assert "org.yaml" in message and "10,000" in message


def test_the_kb_as_a_whole_is_capped(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    for i in range(4):
        (folder / "kb" / f"part-{i}.md").write_text(f"# Part {i}\n" + "Open daily.\n" * 1000)
    message = _one_line_error(folder, OrgFolderLimits(max_kb_bytes=30_000))
    assert "kb/" in message and "QALAB_ORG_MAX_KB_BYTES" in message and "30,000" in message


def test_kb_names_differing_in_case_only_are_refused(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    (folder / "kb" / "Prices.md").write_text("# Prices\nA check-up is 60 EUR.\n")
    (folder / "kb" / "prices.md").write_text("# Prices\nA check-up is 65 EUR.\n")
    message = _one_line_error(folder)
    assert "Prices.md" in message and "prices.md" in message and "same name" in message


def test_a_duplicate_intake_key_or_policy_id_is_refused(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    data = yaml.safe_load((folder / "org.yaml").read_text())
    data["intake_fields"].append(dict(data["intake_fields"][0]))
    data["policies"].append(dict(data["policies"][1]))
    (folder / "org.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder)
    message = str(raised.value)
    assert "intake_fields" in message and "full_name" in message
    assert "policies" in message and "no-diagnosis" in message


@pytest.mark.django_db
def test_the_command_refuses_with_one_line_and_imports_nothing(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    (folder / "kb" / "Prices.md").write_text("# Prices\nA check-up is 60 EUR.\n")
    (folder / "kb" / "prices.md").write_text("# Prices\nA check-up is 65 EUR.\n")
    with pytest.raises(CommandError) as raised:
        call_command("qalab_import_org", str(folder))
    assert raised.value.returncode == 2
    assert "nothing imported" in str(raised.value)
    assert not Organization.objects.filter(slug="hostile").exists()
    assert KbDocument.objects.count() == 0


@pytest.mark.django_db
def test_the_size_settings_reach_the_command(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    with override_settings(QALAB_ORG_MAX_FILE_BYTES=1_000), pytest.raises(CommandError) as raised:
        call_command("qalab_import_org", str(folder))
    assert "QALAB_ORG_MAX_FILE_BYTES" in str(raised.value) and "1,000" in str(raised.value)
    assert not Organization.objects.filter(slug="hostile").exists()
    with override_settings(QALAB_ORG_MAX_KB_BYTES=1_000), pytest.raises(CommandError) as raised:
        call_command("qalab_import_org", str(folder))
    assert "QALAB_ORG_MAX_KB_BYTES" in str(raised.value)
    call_command("qalab_import_org", str(folder))
    assert Organization.objects.filter(slug="hostile").exists()


def test_the_command_line_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    folder = _demo(tmp_path)
    _with_mapping(folder, f"  request: {'[' * 3000}1{']' * 3000}\n")
    proc = subprocess.run(
        [sys.executable, "manage.py", "qalab_import_org", str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "QALAB_VAR_DIR": str(tmp_path / "var")},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "nothing imported" in lines[0] and "org.yaml" in lines[0] and "nest" in lines[0]
