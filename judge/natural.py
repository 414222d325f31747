"""Agreement with human labels on natural transcripts (`qalab_calibrate --natural DIR`).

A labelled file is a `--dialogues` file whose lines also carry `"labels": [{"rule", "turn"}]`:
the defects a reviewer found by reading, `turn` being the index into `turns` of the bot
message at fault. Per rule:

- a label is **found** when a finding of that rule (as its rule or as a corroborating one)
  covers its turn: the finding's own turn or a turn its reply evidence quotes (a defect
  repeated over turns is one finding);
- a finding is **correct** when it covers at least one labelled turn of its rule;
- precision = correct findings / findings, recall = found labels / labels, F1 their harmonic
  mean.

Every file is scored on each `EVALUATED` rule (every natural dev set labels them all).
`SCORED` adds rules only some sets label (`refused_request`), and any other rule a file labels
(or rejects, below) is scored too: a file is scored on one of those only when it names it at
least once, so an older set is not charged with false alarms of a rule nobody labelled there.

A line with `"label_unit": "finding"` (written by `qalab_calibrate --from-triage`: the
reviewers' triage decisions) labels findings, not turns: each label and each entry of
`rejected` (findings a reviewer marked false positive) and `unlabelled` (findings nobody
decided) names a finding by rule, turn and `subject`, and a finding counts under its own rule
only (a decision is on the finding, not on the rules corroborating it). A finding is correct
when a label names it; a false alarm when `rejected` names it; not scored when `unlabelled`
names it; otherwise correct when a label without a subject (a miss added by hand) of its rule
is on its turn, else a false alarm. A label is found when a finding it names (or, without a
subject, any finding of its rule on its turn) is reported. Such a line may carry the org's
`manifest` (the ground truth its run was judged against): the org checks then run on it; and,
as any dialogue may (`judge.dialogues`), its `blueprint` and the bot messages' `extracted` and
`status`: the scenario checks then run on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from generator.schemas import Manifest
from judge.dialogues import DEFAULT_CONFIG, Dialogue, DialogueFinding, judge_dialogue
from judge.schemas import JudgeConfig

EVALUATED: tuple[str, ...] = (
    "ignored_question",
    "instruction_leak",
    "irrelevant_reply",
    "partner_contradiction",
    "kb_noise_echo",
    "self_contradiction",
    "repeated_question",
    "unsupported_facts",
)
SCORED: tuple[str, ...] = (*EVALUATED, "refused_request")


class Label(BaseModel):
    model_config = ConfigDict(extra="ignore")

    rule: str
    turn: int = Field(ge=0)
    # With `label_unit: finding`: the finding's subject (with rule and turn, its identity);
    # None on a miss added by hand.
    subject: str | None = None


class LabelledDialogue(Dialogue):
    labels: list[Label] = Field(default_factory=list)
    label_unit: Literal["turn", "finding"] = "turn"
    rejected: list[Label] = Field(default_factory=list)
    unlabelled: list[Label] = Field(default_factory=list)
    manifest: Manifest | None = None


class LabelError(ValueError):
    """A labelled file that cannot be read; the message names the file and line."""


_D = TypeVar("_D", bound=Dialogue)


def _read_lines(path: Path, model: type[_D]) -> Iterator[tuple[int, _D]]:
    """(line number, dialogue) of each non-blank line of a JSONL file, or a LabelError naming
    the file, line and field that does not read."""
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, model.model_validate_json(line)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"]) or "line"
            raise LabelError(f"{path}:{number}: {where}: {error['msg']}") from None


def _bot_turn(path: Path, number: int, dialogue: Dialogue, turn: int, what: str) -> None:
    if turn >= len(dialogue.turns) or dialogue.turns[turn].role != "bot":
        raise LabelError(f"{path}:{number}: {what} turn {turn} is not a bot message")


def read_labelled(path: Path) -> list[LabelledDialogue]:
    """The labelled dialogues of one JSONL file."""
    dialogues: list[LabelledDialogue] = []
    for number, dialogue in _read_lines(path, LabelledDialogue):
        for label in [*dialogue.labels, *dialogue.rejected, *dialogue.unlabelled]:
            _bot_turn(path, number, dialogue, label.turn, "label")
        dialogues.append(dialogue)
    return dialogues


@dataclass
class RuleScore:
    labels: int = 0
    found: int = 0
    findings: int = 0
    correct: int = 0
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.correct / self.findings if self.findings else None

    @property
    def recall(self) -> float | None:
        return self.found / self.labels if self.labels else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)

    def add(self, other: RuleScore) -> None:
        self.labels += other.labels
        self.found += other.found
        self.findings += other.findings
        self.correct += other.correct
        self.misses += other.misses
        self.false_alarms += other.false_alarms


def _covers(finding: DialogueFinding) -> set[int]:
    turns = {finding.turn} if finding.turn is not None else set()
    turns |= {
        e["turn"]
        for e in finding.evidence
        if e.get("source") == "reply" and e.get("turn") is not None
    }  # type: ignore[misc]
    return {t for t in turns if isinstance(t, int)}


def score_dialogue(
    dialogue: LabelledDialogue,
    config: JudgeConfig = DEFAULT_CONFIG,
    rules: tuple[str, ...] = EVALUATED,
) -> dict[str, RuleScore]:
    """Per rule of `rules` (default `EVALUATED`), how the judge's findings on `dialogue` meet
    its labels."""
    findings = judge_dialogue(dialogue, dialogue.manifest, config=config).findings
    if dialogue.label_unit == "finding":
        return {rule: _score_findings(dialogue, findings, rule) for rule in rules}
    scores: dict[str, RuleScore] = {}
    for rule in rules:
        score = RuleScore()
        labelled = {label.turn for label in dialogue.labels if label.rule == rule}
        mine = [f for f in findings if rule == f.rule or rule in f.corroborating]
        covered: set[int] = set()
        for finding in mine:
            turns = _covers(finding)
            covered |= turns
            score.findings += 1
            if turns & labelled:
                score.correct += 1
            else:
                score.false_alarms.append(f"{dialogue.id}@{finding.turn}")
        score.labels = len(labelled)
        score.found = len(labelled & covered)
        score.misses = [f"{dialogue.id}@{t}" for t in sorted(labelled - covered)]
        scores[rule] = score
    return scores


def _score_findings(
    dialogue: LabelledDialogue, findings: list[DialogueFinding], rule: str
) -> RuleScore:
    """One rule's score on a line whose labels name findings (`label_unit: finding`)."""

    def named(entries: list[Label]) -> set[tuple[int, str]]:
        return {(e.turn, e.subject) for e in entries if e.rule == rule and e.subject is not None}

    labelled, rejected, unlabelled = (
        named(dialogue.labels),
        named(dialogue.rejected),
        named(dialogue.unlabelled),
    )
    misses = {e.turn for e in dialogue.labels if e.rule == rule and e.subject is None}
    score = RuleScore(labels=len(labelled) + len(misses))
    found: set[tuple[int, str]] = set()
    missed_found: set[int] = set()
    for finding in findings:
        if finding.rule != rule or finding.turn is None:
            continue
        key = (finding.turn, finding.subject[:300])
        if key in unlabelled and key not in labelled and key not in rejected:
            continue
        score.findings += 1
        if key in labelled:
            score.correct += 1
            found.add(key)
        elif key not in rejected and finding.turn in misses:
            score.correct += 1
            missed_found.add(finding.turn)
        else:
            score.false_alarms.append(f"{dialogue.id}@{finding.turn}")
    score.found = len(found) + len(missed_found)
    score.misses = [f"{dialogue.id}@{t}" for t, _ in sorted(labelled - found)] + [
        f"{dialogue.id}@{t}" for t in sorted(misses - missed_found)
    ]
    return score


def _summed(
    paths: list[Path],
    rules: tuple[str, ...],
    read: Callable[[Path], list[_D]],
    score: Callable[[_D, tuple[str, ...]], dict[str, RuleScore]],
    scored: Callable[[list[_D]], tuple[str, ...]] = lambda _dialogues: (),
) -> dict[str, dict[str, RuleScore]]:
    """Per file name (and "all"), per rule, the scores of its dialogues summed; `scored` names
    a file's rules from its dialogues (all of `rules` when it names none)."""
    result: dict[str, dict[str, RuleScore]] = {"all": {}}
    for path in paths:
        dialogues = read(path)
        mine = scored(dialogues) or rules
        per_file = {r: RuleScore() for r in mine}
        for dialogue in dialogues:
            for rule, found in score(dialogue, mine).items():
                per_file[rule].add(found)
        for rule, found in per_file.items():
            result["all"].setdefault(rule, RuleScore()).add(found)
        result[path.name] = per_file
    named = [*rules, *sorted(r for r in result["all"] if r not in rules)]
    result["all"] = {r: result["all"][r] for r in named if r in result["all"]}
    return result


def scored_rules(dialogues: list[LabelledDialogue]) -> tuple[str, ...]:
    """The rules a file is scored on: every `EVALUATED` one, and the other `SCORED` ones it
    labels (or rejects a finding of) at least once, in `SCORED` order, then any other rule it
    so names, alphabetically."""
    named = {label.rule for d in dialogues for label in [*d.labels, *d.rejected]}
    known = tuple(rule for rule in SCORED if rule in EVALUATED or rule in named)
    return (*known, *sorted(named - set(SCORED)))


def score_files(
    paths: list[Path], config: JudgeConfig = DEFAULT_CONFIG
) -> dict[str, dict[str, RuleScore]]:
    """Per file name (and "all"), per rule the file is scored on, the summed scores."""
    return _summed(
        paths,
        SCORED,
        read_labelled,
        lambda d, rules: score_dialogue(d, config, rules),
        scored_rules,
    )


# --------------------------------------------------------------------------- unsupported claims

# The rules that report a reply sentence the KB does not support; "either" is what a reviewer
# sees (a merged finding of one corroborating the other counts once).
CLAIM_RULES: tuple[str, ...] = ("ungrounded_sentence", "unsupported_facts")
EITHER = "either"


class Claim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn: int = Field(ge=0)
    quote: str = Field(min_length=1)


class ClaimedDialogue(Dialogue):
    """A `--dialogues` line whose `claims` mark, by reading, the bot sentences (or clauses)
    that assert what the KB does not support."""

    claims: list[Claim] = Field(default_factory=list)


def read_claimed(path: Path) -> list[ClaimedDialogue]:
    """The claim-labelled dialogues of one JSONL file; each quote must be verbatim in the bot
    message its turn points at."""
    dialogues: list[ClaimedDialogue] = []
    for number, dialogue in _read_lines(path, ClaimedDialogue):
        for claim in dialogue.claims:
            _bot_turn(path, number, dialogue, claim.turn, "claim")
            if claim.quote not in dialogue.turns[claim.turn].text:
                raise LabelError(f"{path}:{number}: claim quote not in bot message {claim.turn}")
        dialogues.append(dialogue)
    return dialogues


Span = tuple[int, int, int]  # turn, start, end in that message


def _span(text: str, turn: int, quote: str) -> Span:
    start = text.find(quote)
    return (turn, 0, len(text)) if start < 0 else (turn, start, start + len(quote))


def _meets(a: Span, b: Span) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def score_claims_dialogue(
    dialogue: ClaimedDialogue, config: JudgeConfig = DEFAULT_CONFIG
) -> dict[str, RuleScore]:
    """Per claim rule (and `EITHER`): a finding is correct when a reply quote of it overlaps a
    marked claim of the same message; a claim is found when a finding overlaps it."""
    claims = [_span(dialogue.turns[c.turn].text, c.turn, c.quote) for c in dialogue.claims]
    findings = judge_dialogue(dialogue, config=config).findings
    scores: dict[str, RuleScore] = {}
    for rule in (*CLAIM_RULES, EITHER):
        wanted = set(CLAIM_RULES) if rule == EITHER else {rule}
        score = RuleScore(labels=len(claims))
        found: set[int] = set()
        for finding in findings:
            if finding.rule != rule and not (
                rule == EITHER and wanted & {finding.rule, *finding.corroborating}
            ):
                continue
            spans = [
                _span(dialogue.turns[e["turn"]].text, e["turn"], str(e["quote"]))
                for e in finding.evidence
                if e.get("source") == "reply"
                and isinstance(e.get("turn"), int)
                and e["turn"] < len(dialogue.turns)  # type: ignore[operator]
            ]
            hits = {i for i, claim in enumerate(claims) for s in spans if _meets(s, claim)}
            score.findings += 1
            if hits:
                score.correct += 1
            else:
                score.false_alarms.append(f"{dialogue.id}@{finding.turn}")
            found |= hits
        score.found = len(found)
        score.misses = [
            f"{dialogue.id}@{claims[i][0]}" for i in range(len(claims)) if i not in found
        ]
        scores[rule] = score
    return scores


def score_claim_files(
    paths: list[Path], config: JudgeConfig = DEFAULT_CONFIG
) -> dict[str, dict[str, RuleScore]]:
    """Per file name (and "all"), per claim rule and `EITHER`, the summed scores."""
    return _summed(
        paths,
        (*CLAIM_RULES, EITHER),
        read_claimed,
        lambda d, _rules: score_claims_dialogue(d, config),
    )
