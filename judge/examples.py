"""Labeled examples of the deterministic checks, and the runner that scores the checks on them.

Seed 001's validation layout, one folder per check:

    judge/examples/<check_id>/positive/NNN-name.json   the check must produce a finding
    judge/examples/<check_id>/negative/NNN-name.json   the check must produce none

Each file: {"id", "type": "positive"|"negative", "check", "conversation": [{"role":
"customer"|"assistant", "content"}, ...] (alternating, customer first), "kb" (optional, default
`DEFAULT_KB`), "persona_facts" (optional), "expected_status" / "actual_status" (optional,
default "COMPLETE"; actual_status null = never reported), "extracted" (optional, one dict per
assistant turn), "expectedResult": true|false, "rationale"}.

`run_examples()` runs only the example's check on it (against the demo org's manifest) and
reports a confusion table per check. Pure: no Django, no network.
"""

from __future__ import annotations

import json
import pkgutil
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

import judge.checks
from generator.manifest import build_manifest
from generator.schemas import (
    Blueprint,
    FinalStatus,
    Fixture,
    FixtureDocument,
    Manifest,
    Persona,
)
from judge.checks import REGISTRY, load_check
from judge.checks.base import Check
from judge.evidence import Sources, unverified
from judge.schemas import CaseTranscript, Finding, JudgeConfig, Turn
from qalab.org_folder import DEMO_ORG_DIR, load_org_folder

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"
KINDS = ("positive", "negative")
_FILE_NAME = re.compile(r"^\d{3}-[a-z0-9][a-z0-9-]*\.json$")
CONFIG = JudgeConfig(strictness=0.5, min_score_to_pass=0.6)

# What the assistant saw unless an example brings its own KB: the demo org's KB as a messy
# fixture spells it (mixed money, time and phone formats, typos, a duplicated price line).
DEFAULT_KB = """\
# Harbour Lane Dental - price list (all prices in euro, incl. VAT)
| Treatment | Price | Time |
|---|---|---|
| Check-up and exam | 65,00 € | 30 min |
Hygiene clean - 80 EUR - 45 min
| Tooth-coloured filling (one surface) | 120 EUR | 45 min |
| Teeth whitening | 350€ | 90 min | Emergency appointment  €95  30 min
Child check-up (under 12)  40 EUR  20 min
Mouthguard fitting | 150 EUR | 30 min
Larger fillings, crowns, root canal treatment and extractions are quoted by the dentist after
an exam. Whitening is only offerd to patients who had a check-up with us in the last six months.
Emergency appointments are kept free every weekday morning. The emergency fee covers the
examination and any X-rays; treatment on the day is quoted before it starts.

# Opening hours
-Monday to Thursday: 8.30 to 18:00
-Friday: 8.30 to 16:00
- Saturday: 09:00 to 13.00
- Sunday and bank holidays: closed

# Contact
Call reception on +353 1 555 0142 or email hello@harbourlanedental.ie. Messages sent after
hours are answered the next working morning.
T +35315550142 | https://harbourlanedental.ie
14 Harbour Lane, Dublin 2, D02 X285 (first floor, lift access). Nearest Luas: Trinity, a five
minute walk. No parking at the practice; closest car park is on Tara Street.

# Booking and policies
To reqquest an appointment we need your full name, a phone number, the treatment you would
like and a preferred date. An email adddress and a preferred time help but are optional.
Reception confirms every request by phone within one working day.
Appointments cancelled with less than 24 hours notice, or missed, are charged a fee of 30 EUR.
We accept card, cash and contactless. Payment is due on the day of treatment. We do not bill
insurers directly, but we give you a detailed receipt you can claim back from your insurer.
Children under 16 must be accompanied by a parent or guardian at every visit.
We cannot diagnose over chat or email. If you are in pain, ask for an emergency appointment or
call +353 1 555 0142. Outisde opening hours, if you have severe swelling, bleeding that will
not stop or difficulty breathing, go to the nearest emergency department.

# Shift handover (Saturday)
- Two customers asked for Tooth-coloured filling; quoted 120.00 EUR.
- custmers keep asking about Check-up and exam. It is 65,00 € and takes 30 min.
- Hygiene clean costs 80 EUR and takes about 45 minutes.
"""


class ExampleError(ValueError):
    """An example file is malformed; the message names the file."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ExampleMessage(_Model):
    role: Literal["customer", "assistant"]
    content: str


class Example(_Model):
    id: str = Field(min_length=1)
    type: Literal["positive", "negative"]
    check: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    conversation: list[ExampleMessage] = Field(min_length=2)
    kb: str | None = None
    persona_facts: dict[str, str] = Field(default_factory=dict)
    expected_status: FinalStatus = "COMPLETE"
    actual_status: str | None = "COMPLETE"
    extracted: list[dict[str, str]] | None = None
    expected_result: bool = Field(alias="expectedResult")
    rationale: str = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Example:
        for i, message in enumerate(self.conversation):
            role = "customer" if i % 2 == 0 else "assistant"
            if message.role != role:
                raise ValueError(
                    f"conversation[{i}] must be a {role} message (alternating, customer first)"
                )
        if len(self.conversation) % 2:
            raise ValueError("conversation must end with an assistant message")
        if self.expected_result != (self.type == "positive"):
            raise ValueError(
                f"a {self.type} example must have expectedResult {not self.expected_result}"
            )
        turns = len(self.conversation) // 2
        if self.extracted is not None and len(self.extracted) != turns:
            raise ValueError(
                f"extracted has {len(self.extracted)} entries; one per assistant turn "
                f"({turns}) is required"
            )
        return self

    def turns(self) -> list[Turn]:
        extracted = self.extracted or [{} for _ in range(len(self.conversation) // 2)]
        return [
            Turn(
                index=i,
                customer=self.conversation[2 * i].content,
                reply=self.conversation[2 * i + 1].content,
                extracted=extracted[i],
            )
            for i in range(len(self.conversation) // 2)
        ]

    def case(self) -> CaseTranscript:
        """The example as the judge sees a case: a blueprint with the example's persona facts
        and expected status, a one-document fixture holding its KB, and its turns."""
        turns = self.turns()
        blueprint = Blueprint(
            key=f"example-{self.check}-{self.type}-{self.id}",
            scenario_type="example",
            title=self.id,
            goal=self.rationale,
            fixture_key="fx-example",
            persona=Persona(
                name="Example customer", locale="en_IE", style="casual", facts=self.persona_facts
            ),
            planned_messages=[turns[0].customer],
            expected_status=self.expected_status,
            max_turns=len(turns),
        )
        fixture = Fixture(
            key="fx-example",
            noise_level="messy",
            documents=[
                FixtureDocument(id="kb", title="Knowledge base", text=self.kb or DEFAULT_KB)
            ],
        )
        return CaseTranscript(
            case_key=blueprint.key,
            blueprint=blueprint,
            fixture=fixture,
            turns=turns,
            actual_status=self.actual_status,
        )


@dataclass(frozen=True)
class LoadedExample:
    path: Path
    example: Example


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "(top level)"
        parts.append(f"field '{where}': {item['msg']}")
    return "; ".join(parts)


def load_example(path: Path) -> Example:
    """Parse and validate one example file; ExampleError naming the file when it is malformed."""
    if not _FILE_NAME.match(path.name):
        raise ExampleError(f"{path}: file name must look like 'NNN-short-name.json'")
    kind, check = path.parent.name, path.parent.parent.name
    if kind not in KINDS:
        raise ExampleError(f"{path}: examples live in <check>/positive/ or <check>/negative/")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ExampleError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ExampleError(f"{path}: must be a JSON object, got {type(data).__name__}")
    try:
        example = Example.model_validate(data)
    except ValidationError as exc:
        raise ExampleError(f"{path}: {_describe(exc)}") from exc
    if example.check != check:
        raise ExampleError(f"{path}: 'check' is {example.check!r} but the folder is {check!r}")
    if example.type != kind:
        raise ExampleError(f"{path}: 'type' is {example.type!r} but the folder is {kind!r}")
    return example


def load_examples(root: Path | None = None) -> list[LoadedExample]:
    """Every example under `root` (default: judge/examples), in path order, validated."""
    base = root or EXAMPLES_DIR
    if not base.is_dir():
        raise ExampleError(f"{base}: not a directory")
    loaded: list[LoadedExample] = []
    seen: dict[tuple[str, str, str], Path] = {}
    for path in sorted(base.rglob("*.json")):
        if path.parent.parent.parent != base:
            raise ExampleError(f"{path}: examples live in <check>/positive/ or <check>/negative/")
        example = load_example(path)
        key = (example.check, example.type, example.id)
        if key in seen:
            raise ExampleError(f"{path}: id {example.id!r} is also used by {seen[key]}")
        seen[key] = path
        loaded.append(LoadedExample(path, example))
    return loaded


# --------------------------------------------------------------------------- running


@cache
def demo_manifest() -> Manifest:
    return build_manifest(load_org_folder(DEMO_ORG_DIR))


@cache
def find_check(check_id: str) -> Check | str:
    """The check `check_id`: from the registry, else any `Check` subclass in judge.checks.*
    declaring it (a check not registered yet). A string says why it cannot be loaded."""
    if check_id in REGISTRY:
        return load_check(check_id)
    for module in pkgutil.iter_modules(judge.checks.__path__):
        try:
            loaded = import_module(f"judge.checks.{module.name}")
        except Exception:  # noqa: S112 - a module being written must not stop the others
            continue
        for value in vars(loaded).values():
            if (
                isinstance(value, type)
                and issubclass(value, Check)
                and value is not Check
                and value.check_id == check_id
            ):
                return value()
    return f"not registered: no Check in judge.checks declares check_id {check_id!r}"


@dataclass(frozen=True)
class ExampleRow:
    check: str
    id: str
    type: str
    expected: bool
    got: bool | None  # None: the check could not be run
    ok: bool
    rationale: str
    path: str
    note: str = ""

    @property
    def skipped(self) -> bool:
        return self.got is None


@dataclass(frozen=True)
class ExamplesReport:
    rows: list[ExampleRow]

    @property
    def ok(self) -> bool:
        """Every example that could be run was classified correctly (and there was one)."""
        ran = [r for r in self.rows if not r.skipped]
        return bool(ran) and all(r.ok for r in ran)

    def counts(self) -> dict[str, Counter[str]]:
        """check -> {"positive": n, "negative": n}."""
        out: dict[str, Counter[str]] = {}
        for row in self.rows:
            out.setdefault(row.check, Counter())[row.type] += 1
        return out

    def confusion(self) -> dict[str, Counter[str]]:
        """check -> TP / FP / TN / FN / skipped counts."""
        out: dict[str, Counter[str]] = {}
        for row in self.rows:
            counter = out.setdefault(row.check, Counter())
            if row.skipped:
                counter["skipped"] += 1
            elif row.expected:
                counter["TP" if row.got else "FN"] += 1
            else:
                counter["FP" if row.got else "TN"] += 1
        return out

    def table(self) -> str:
        """A confusion table per check, then the misclassified and skipped examples."""
        ran = [r for r in self.rows if not r.skipped]
        wrong = [r for r in ran if not r.ok]
        skipped = [r for r in self.rows if r.skipped]
        lines = [
            f"Examples: {len(self.rows)} ({len(ran) - len(wrong)} correct, {len(wrong)} wrong, "
            f"{len(skipped)} skipped)",
            "",
            f"{'check':<24}{'pos':>5}{'neg':>5}{'TP':>5}{'FP':>5}{'TN':>5}{'FN':>5}  result",
        ]
        counts = self.counts()
        for check, matrix in sorted(self.confusion().items()):
            if matrix["skipped"]:
                result = "skipped"
            elif matrix["FP"] or matrix["FN"] or any(not r.ok for r in ran if r.check == check):
                result = "WRONG"
            else:
                result = "ok"
            lines.append(
                f"{check:<24}{counts[check]['positive']:>5}{counts[check]['negative']:>5}"
                f"{matrix['TP']:>5}{matrix['FP']:>5}{matrix['TN']:>5}{matrix['FN']:>5}  {result}"
            )
        if wrong:
            lines += ["", "Misclassified:"]
            for row in wrong:
                if row.got == row.expected:
                    outcome = row.note
                elif row.expected:
                    outcome = "expected a finding, got none"
                else:
                    outcome = f"expected no finding, got: {row.note}"
                lines.append(f"  {row.path}: {outcome}")
                lines.append(f"      rationale: {row.rationale}")
        if skipped:
            lines += ["", "Skipped:"]
            for check in sorted({r.check for r in skipped}):
                group = [r for r in skipped if r.check == check]
                lines.append(f"  {check} ({len(group)} examples): {group[0].note}")
        return "\n".join(lines)


def run_example(loaded: LoadedExample, root: Path) -> ExampleRow:
    example = loaded.example
    path = str(loaded.path.relative_to(root))
    check = find_check(example.check)
    if isinstance(check, str):
        return ExampleRow(
            example.check,
            example.id,
            example.type,
            example.expected_result,
            None,
            False,
            example.rationale,
            path,
            check,
        )
    case = example.case()
    findings: list[Finding] = check.run(case, demo_manifest(), CONFIG)
    got = bool(findings)
    note = "; ".join(f"{f.severity} {f.subject}" for f in findings)[:300]
    ok = got == example.expected_result
    # The judge's own evidence check: every quote in what it cites, the subject verbatim.
    sources = Sources(case, demo_manifest())
    unquoted = [why for f in findings if (why := unverified(f, sources))]
    if unquoted:
        ok = False
        note = f"evidence not verbatim: {unquoted[0]}"
    return ExampleRow(
        example.check,
        example.id,
        example.type,
        example.expected_result,
        got,
        ok,
        example.rationale,
        path,
        note,
    )


def run_examples(root: Path | None = None) -> ExamplesReport:
    """Run each example's check on it; rows in path order. ExampleError on a malformed file."""
    base = root or EXAMPLES_DIR
    return ExamplesReport([run_example(loaded, base) for loaded in load_examples(base)])
