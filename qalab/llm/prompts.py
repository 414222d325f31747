"""Versioned prompt files and fencing of untrusted text.

Prompts live next to the code that uses them as `<dir>/<name>.v<N>.md` (the highest version
wins) and are filled with `string.Template` placeholders (`$name`), so JSON braces need no
escaping. Their sha256 goes into each run's snapshot, so a prompt change shows in the delta.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

_VERSIONED = re.compile(r"^(?P<name>[a-z0-9_]+)\.v(?P<version>\d+)\.md$")


@dataclass(frozen=True)
class PromptFile:
    name: str
    version: int
    text: str
    path: Path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def label(self) -> str:
        return f"{self.path.parent.parent.name}/{self.name}.v{self.version}"

    def render(self, **values: object) -> str:
        """The prompt with `$placeholders` filled; a missing value is a KeyError, not a gap."""
        return Template(self.text).substitute({k: str(v) for k, v in values.items()}).strip()


def _versions(directory: Path) -> dict[str, PromptFile]:
    latest: dict[str, PromptFile] = {}
    for path in sorted(directory.glob("*.md")):
        match = _VERSIONED.match(path.name)
        if match is None:
            continue
        prompt = PromptFile(
            match["name"], int(match["version"]), path.read_text(encoding="utf-8"), path
        )
        if prompt.name not in latest or prompt.version > latest[prompt.name].version:
            latest[prompt.name] = prompt
    return latest


@cache
def load_prompt(directory: Path, name: str) -> PromptFile:
    """The highest version of prompt `name` in `directory`."""
    prompt = _versions(directory).get(name)
    if prompt is None:
        raise FileNotFoundError(f"no prompt file {name}.v<N>.md in {directory}")
    return prompt


def prompt_hashes(*directories: Path) -> dict[str, str]:
    """`<package>/<name>.v<N>` -> sha256 of every current prompt in `directories`."""
    out: dict[str, str] = {}
    for directory in directories:
        for prompt in _versions(directory).values():
            out[prompt.label] = prompt.sha256
    return dict(sorted(out.items()))


# A fence line: `<<<label TAG>>>` or `<<<end label TAG>>>`, TAG 16 hex digits.
FENCE_LINE = re.compile(r"<<<(end )?([\w-]+) [0-9a-f]{16}>>>")


def fence(text: str, label: str) -> str:
    """Untrusted text between delimiters it cannot forge: the tag is random per call (DESIGN
    §9), so no reply, KB or org text can hold its own closing line or a fake one that matches.
    Record & replay keys a request on its text with the tags left out (`untagged`)."""
    tag = secrets.token_hex(8)
    return f"<<<{label} {tag}>>>\n{text}\n<<<end {label} {tag}>>>"


def untagged(text: str) -> str:
    """`text` with every fence line's random tag left out: what identifies a prompt."""
    return FENCE_LINE.sub(lambda m: f"<<<{m.group(1) or ''}{m.group(2)}>>>", text)
