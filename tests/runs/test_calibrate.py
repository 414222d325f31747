"""qalab_calibrate: figures on a labelled JSONL file, bad input, and the examples hook."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
SCRIPT = SCRIPTS / "begin_to_jsonl.py"
KNOWLEDGE = (
    "Harbour Lane Dental is open Monday to Thursday from 08:30 to 18:00. A hygiene clean costs "
    "80 EUR and takes 45 minutes. There is no parking at the practice."
)
RECORDS = [
    ("A hygiene clean costs 80 EUR and takes 45 minutes.", "grounded"),
    ("The practice is open Monday to Thursday from 08:30 to 18:00.", "grounded"),
    ("There is no parking at the practice.", "grounded"),
    ("We have free underground parking and a cafe for patients.", "ungrounded"),
    ("I love going to the dentist, my kids do too!", "ungrounded"),
    ("Whitening is half price every Sunday for new patients.", "ungrounded"),
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), "utf-8")
    return path


def _data(tmp_path: Path) -> Path:
    lines = [
        json.dumps({"knowledge": KNOWLEDGE, "history": "hi", "response": r, "label": label})
        for r, label in RECORDS
    ]
    return _write(tmp_path / "data.jsonl", lines)


def test_it_prints_and_writes_the_figures(tmp_path):
    out = StringIO()
    target = tmp_path / "figures.json"
    call_command(
        "qalab_calibrate", "--data", str(_data(tmp_path)), "--json", str(target), stdout=out
    )
    text = out.getvalue()
    for label in ("N", "AUROC", "baseline AUROC", "balanced accuracy", "precision", "recall"):
        assert label in text
    figures = json.loads(target.read_text("utf-8"))
    assert figures["n"] == 6
    assert figures["ungrounded"] == 3
    assert figures["auroc"] == 1.0
    assert figures["balanced_accuracy"] == 1.0
    assert figures["precision"] == figures["recall"] == figures["f1"] == 1.0
    assert 0.0 <= figures["baseline_auroc"] <= 1.0
    assert figures["confusion"] == {"tp": 3, "fp": 0, "tn": 3, "fn": 0}


def test_a_file_of_one_label_has_no_auroc(tmp_path):
    line = json.dumps({"knowledge": "k", "history": "", "response": "r", "label": "grounded"})
    target = tmp_path / "figures.json"
    call_command(
        "qalab_calibrate",
        "--data",
        str(_write(tmp_path / "one.jsonl", [line])),
        "--json",
        str(target),
        stdout=StringIO(),
    )
    assert json.loads(target.read_text("utf-8"))["auroc"] is None


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"knowledge": "k", "history": "", "response": "r", "label": "maybe"}', "unknown label"),
        ('{"knowledge": "k", "history": ""}', "missing response, label"),
        ('["a list"]', "expected a JSON object"),
    ],
)
def test_a_bad_line_is_a_command_error_naming_its_line(tmp_path, bad_line, message):
    good = json.dumps({"knowledge": "k", "history": "", "response": "r", "label": "grounded"})
    path = _write(tmp_path / "bad.jsonl", [good, "", bad_line])
    with pytest.raises(CommandError) as exc:
        call_command("qalab_calibrate", "--data", str(path), stdout=StringIO())
    assert "bad.jsonl:3:" in str(exc.value)
    assert message in str(exc.value)


def test_a_missing_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("qalab_calibrate", "--data", str(tmp_path / "nope.jsonl"), stdout=StringIO())


def test_nothing_to_do_is_bad_usage():
    with pytest.raises(CommandError) as exc:
        call_command("qalab_calibrate", stdout=StringIO())
    assert exc.value.returncode == 2


def _fake_examples(monkeypatch, ok: bool, seen: list[object]) -> None:
    class Report:
        def __init__(self) -> None:
            self.ok = ok

        def table(self) -> str:
            return "check | positives | negatives\nungrounded_sentence | 6/6 | 7/7"

    def run_examples(root=None):
        seen.append(root)
        return Report()

    module = types.ModuleType("judge.examples")
    module.run_examples = run_examples
    monkeypatch.setitem(sys.modules, "judge.examples", module)


def test_examples_print_the_table_and_pass(monkeypatch, tmp_path):
    seen: list[object] = []
    _fake_examples(monkeypatch, True, seen)
    out = StringIO()
    call_command("qalab_calibrate", "--examples", stdout=out)
    assert "ungrounded_sentence" in out.getvalue()
    assert seen == [None]
    call_command("qalab_calibrate", "--examples", str(tmp_path), stdout=StringIO())
    assert seen[-1] == tmp_path


def test_failing_examples_are_a_command_error(monkeypatch, tmp_path):
    _fake_examples(monkeypatch, False, [])
    target = tmp_path / "figures.json"
    with pytest.raises(CommandError, match="examples failed"):
        call_command(
            "qalab_calibrate",
            "--data",
            str(_data(tmp_path)),
            "--examples",
            "--json",
            str(target),
            stdout=StringIO(),
        )
    assert json.loads(target.read_text("utf-8"))["examples_ok"] is False


def test_the_begin_converter_drops_generic_and_maps_labels(tmp_path):
    spec = importlib.util.spec_from_file_location("begin_to_jsonl", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    main = module.main
    source = tmp_path / "begin.json"
    source.write_text(
        json.dumps(
            [
                {"knowledge": "k", "message": "m", "response": "r1", "begin_label": "Generic"},
                {
                    "knowledge": "k",
                    "message": "m",
                    "response": "r2",
                    "begin_label": "Fully attributable",
                },
                {
                    "knowledge": "k",
                    "message": "m",
                    "response": "r3",
                    "begin_label": "Not fully attributable",
                },
            ]
        ),
        "utf-8",
    )
    target = tmp_path / "out.jsonl"
    assert main([str(source), str(target)]) == 0
    lines = [json.loads(line) for line in target.read_text("utf-8").splitlines()]
    assert lines == [
        {"knowledge": "k", "history": "m", "response": "r2", "label": "grounded"},
        {"knowledge": "k", "history": "m", "response": "r3", "label": "ungrounded"},
    ]
    call_command("qalab_calibrate", "--data", str(target), stdout=StringIO())


def _script(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_faithdial_audit_converter_maps_labels_and_splits(tmp_path):
    convert = _script("faithdial_audit_to_jsonl")
    gold = tmp_path / "wow.csv"
    gold.write_text(
        "evidence,history,response,BEGIN,VRM\n"
        "K one,H,Grounded reply,Entailment,Edification\n"
        "K two,H,Invented reply,Partial Hallucination,Disclosure\n"
        "K three,H,Generic reply,Generic,Ack.\n"
        ",H,No knowledge,Hallucination,Disclosure\n",
        "utf-8",
    )
    model = tmp_path / "gpt2_processed_topical.csv"
    rows = [
        f"K,H,reply {i},{'entailmentt,uncooperative' if i % 2 else 'hallucination'},x"
        for i in range(12)
    ]
    model.write_text("knowledge,history,gpt2,begin_label,vrm_label\n" + "\n".join(rows), "utf-8")
    target = tmp_path / "out.jsonl"
    assert convert.main([str(gold), str(model), "-o", str(target)]) == 0
    lines = [json.loads(line) for line in target.read_text("utf-8").splitlines()]
    assert [(r["response"], r["label"], r["source"]) for r in lines[:2]] == [
        ("Grounded reply", "grounded", "wow"),
        ("Invented reply", "ungrounded", "wow"),
    ]
    assert [r["label"] for r in lines[2:]] == ["ungrounded", "grounded"] * 6
    assert {r["source"] for r in lines[2:]} == {"topicalchat"}
    parts = {}
    for split in ("dev", "held-out"):
        out = tmp_path / f"{split}.jsonl"
        assert convert.main([str(model), "--split", split, "-o", str(out)]) == 0
        parts[split] = {
            json.loads(line)["response"] for line in out.read_text("utf-8").splitlines()
        }
    assert parts["dev"] and parts["held-out"] and not parts["dev"] & parts["held-out"]
    assert parts["dev"] | parts["held-out"] == {f"reply {i}" for i in range(12)}
    call_command("qalab_calibrate", "--data", str(target), stdout=StringIO())


def test_the_faithdial_audit_converter_names_a_file_that_is_not_an_audit(tmp_path, capsys):
    convert = _script("faithdial_audit_to_jsonl")
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n", "utf-8")
    assert convert.main([str(other)]) == 1
    assert "other.csv" in capsys.readouterr().err


# --------------------------------------------------------------------------- --task self_contradiction


def _decode(turns: list[tuple[int, str]], last: tuple[int, str], label: str) -> dict:
    return {
        "turns": [{"turn_id": i, "agent_id": a, "text": t} for i, (a, t) in enumerate(turns)],
        "last_utterance": {"turn_id": len(turns), "agent_id": last[0], "text": last[1]},
        "label": label,
    }


DECODE_RECORDS = [
    _decode([(0, "I love the beach."), (1, "Me too.")], (0, "I hate the beach."), "contradiction"),
    _decode(
        [(0, "I have two dogs."), (1, "Nice!")], (0, "I don't have any dogs."), "contradiction"
    ),
    _decode([(0, "I love the beach."), (1, "Why?")], (0, "Where do you live?"), "no_contradiction"),
    _decode([(0, "I work at a bank."), (1, "Cool.")], (0, "What do you do?"), "no_contradiction"),
]


def _contradictions(path: Path, *extra: str) -> str:
    out = StringIO()
    call_command(
        "qalab_calibrate", "--task", "self_contradiction", "--data", str(path), *extra, stdout=out
    )
    return out.getvalue()


@pytest.mark.parametrize("layout", ["array", "jsonl"])
def test_the_self_contradiction_task_prints_and_writes_the_figures(tmp_path, layout):
    if layout == "array":
        path = tmp_path / "decode.json"
        path.write_text(json.dumps(DECODE_RECORDS, indent=1), "utf-8")
    else:
        path = _write(tmp_path / "decode.jsonl", [json.dumps(r) for r in DECODE_RECORDS])
    target = tmp_path / "figures.json"
    text = _contradictions(path, "--json", str(target))
    for label in ("N", "AUROC", "balanced accuracy", "precision", "recall", "F1", "confusion"):
        assert label in text
    assert "4 (2 contradiction, 2 no_contradiction)" in text
    figures = json.loads(target.read_text("utf-8"))
    assert figures["task"] == "self_contradiction"
    assert figures["n"] == 4
    assert figures["contradictions"] == 2
    assert figures["balanced_accuracy"] == figures["auroc"] == 1.0
    assert figures["precision"] == figures["recall"] == figures["f1"] == 1.0
    assert figures["confusion"] == {"tp": 2, "fp": 0, "tn": 2, "fn": 0}


def test_the_default_task_is_still_groundedness(tmp_path):
    out = StringIO()
    call_command("qalab_calibrate", "--data", str(_data(tmp_path)), stdout=out)
    assert "ungrounded" in out.getvalue()
    assert "contradiction" not in out.getvalue()


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ('[{"turns": []}, ', "decode.json:1: not valid JSON"),
        (json.dumps([DECODE_RECORDS[0], {"turns": []}]), "record 2: missing last_utterance"),
        (json.dumps([{**DECODE_RECORDS[0], "label": "maybe"}]), "record 1: unknown label"),
        (json.dumps([DECODE_RECORDS[0], "text"]), "record 2: expected a JSON object"),
        ("[]", "no records"),
    ],
)
def test_a_bad_decode_array_is_a_command_error_naming_the_record(tmp_path, records, message):
    path = tmp_path / "decode.json"
    path.write_text(records, "utf-8")
    with pytest.raises(CommandError) as exc:
        _contradictions(path)
    assert message in str(exc.value)


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({**DECODE_RECORDS[1], "last_utterance": "x"}), "last_utterance must be"),
        (json.dumps({"turns": [], "last_utterance": {}}), "missing label"),
    ],
)
def test_a_bad_decode_line_is_a_command_error_naming_its_line(tmp_path, bad_line, message):
    path = _write(tmp_path / "decode.jsonl", [json.dumps(DECODE_RECORDS[0]), "", bad_line])
    with pytest.raises(CommandError) as exc:
        _contradictions(path)
    assert "decode.jsonl:3:" in str(exc.value)
    assert message in str(exc.value)


def test_a_missing_decode_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        _contradictions(tmp_path / "nope.json")
