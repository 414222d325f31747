"""What the LLM judge is shown besides the conversation: the ground-truth entries and the KB
passages relevant to what the assistant said, not the whole manifest and KB (issue 19).

Relevance is word overlap with the assistant's replies (and the customer's messages, which say
what was asked): an entry or passage sharing no content word with the conversation cannot
support or contradict a claim in it. Both are capped in characters, best first, and kept in
their original order so the prompt stays deterministic for replay.
"""

from __future__ import annotations

import json
import re

from generator.schemas import Manifest
from judge.schemas import CaseTranscript

# Characters of ground truth and KB shown with each review and confirmation (issue 34: 1,000 and
# 900 before, cut so a Quick's lab roles fit 75% of the design's 50,000 tokens).
TRUTH_CHARS = 600
KB_CHARS = 600
PASSAGE_CHARS = 400
_WORD = re.compile(r"[a-z0-9]+")
_STOP_TEXT = (
    "a an and are as at be but by can could do does for from have how i if in is it its me my "
    "no not of on or our so that the their them there this to was we what when where which "
    "will with would you your yes hi hello thanks please just"
)
_STOP = frozenset(_STOP_TEXT.split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP and len(w) > 1}


def _pick(items: list[str], asked: set[str], limit: int) -> list[str]:
    """The items sharing most words with `asked`, within `limit` characters, in input order."""
    scored = [(len(_words(item) & asked), n) for n, item in enumerate(items)]
    chosen: list[int] = []
    used = 0
    for score, n in sorted(scored, key=lambda s: (-s[0], s[1])):
        if score == 0 or used + len(items[n]) > limit:
            continue
        chosen.append(n)
        used += len(items[n]) + 1
    return [items[n] for n in sorted(chosen)]


def conversation_words(case: CaseTranscript) -> set[str]:
    return _words(" ".join(f"{t.customer} {t.reply}" for t in case.turns))


def relevant_truth(case: CaseTranscript, manifest: Manifest) -> str:
    """Ground-truth entries (services, hours, policies, contacts) the conversation touches, one
    compact JSON object per line."""
    entries = []
    for field in ("services", "hours", "policies", "contacts"):
        for item in getattr(manifest, field):
            body = item.model_dump(mode="json", exclude={"source", "sources"}, exclude_none=True)
            entries.append(
                f"{field}: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}"
            )
    picked = _pick(entries, conversation_words(case), TRUTH_CHARS)
    return "\n".join(picked) or "(no entry matches this conversation)"


def relevant_kb(case: CaseTranscript) -> str:
    """KB passages (blank-line separated blocks, cut to PASSAGE_CHARS) the conversation touches."""
    blocks = [b.strip()[:PASSAGE_CHARS] for b in re.split(r"\n\s*\n", case.fixture.text)]
    picked = _pick([b for b in blocks if b], conversation_words(case), KB_CHARS)
    return "\n\n".join(picked) or "(no passage matches this conversation)"
