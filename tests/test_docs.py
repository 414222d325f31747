"""The README stays a front door (at most 300 lines) and no page's relative link is dead.

Read from the files: README.md, CONTRIBUTING.md and every docs/*.md. A relative link must name
a file or folder that exists; a `#anchor` into a Markdown page must name one of its headings
(GitHub's slugs). Links in code (fenced blocks, `inline`) are not links.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 300

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """The text without code blocks, code spans and comments."""
    return _CODE.sub("", _FENCE.sub("", _COMMENT.sub("", text)))


def links(text: str) -> list[str]:
    return _LINK.findall(_prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).replace("`", "").strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page (a repeated heading gets -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def _is_dead(page: Path, target: str) -> bool:
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    if not file.exists():
        return True
    if anchor and file.suffix == ".md":
        return anchor.lower() not in anchors(file.read_text(encoding="utf-8"))
    return False


def dead_links(page: Path) -> list[str]:
    """The relative links of `page` whose file, folder or heading does not exist."""
    external = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, ...
    targets = links(page.read_text(encoding="utf-8"))
    return [t for t in targets if not external.match(t) and _is_dead(page, t)]


def test_it_keeps_the_readme_a_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move the detail to "
        "a page under docs/ and link it"
    )


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_it_has_no_dead_relative_link(page: Path):
    assert dead_links(page) == []


def test_the_link_reader_sees_links_and_not_code(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A `code` title\n\n[ok](#a-code-title) [gone](missing.md) ![img](page.md)\n"
        "[bad anchor](page.md#nowhere) [web](https://example.com/x.md)\n"
        "`[not](a-link.md)`\n\n```\n[not](either.md)\n```\n",
        encoding="utf-8",
    )
    assert dead_links(page) == ["missing.md", "page.md#nowhere"]
