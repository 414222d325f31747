"""Self-contradiction in open dialogue: does an utterance contradict an earlier statement of the
same speaker? A score in [0, 1] from lexical features, pure Python (no model, nothing
downloaded).

`contradiction_score(earlier, utterance)` compares the utterance with the speaker's earlier
turns. Both are cut into clauses (sentences, split again at "but", "though", "because", ";",
", " ...). An utterance clause is *aligned* with an earlier clause when they share a content
stem (function words, negations and a few filler words left out; `judge.support.tokens`
and `stem` normalise the words). Each clause has a negation (not, never, n't, "I wish", "no
longer" ...) and a stance: the sign of its positive minus negative opinion words (love, great /
hate, boring ...), a negation in the three words before one flipping it. Optionally each
earlier turn comes with its *context*, the other speaker's turn it answered, so that "those are
super nice" answering "I'm buying a Tesla" is about a Tesla; and the utterance with its
*prompt*, the other speaker's turn just before it.

Features (all in [0, 1] except `novel`):

- `aligned`, `topic`: the utterance shares content with an earlier clause (1 / 0), and the most
  stems one utterance clause shares with one earlier clause (capped at 3, /3).
- `negation_flip`, `stance_flip`, `antonym`: over aligned clause pairs where exactly one side is
  negated / the stances have opposite signs / one side has a word whose antonym (ANTONYMS, or
  a negative prefix: "known" / "unknown") is in the other, the largest share of the utterance
  clause's content found in the earlier one.
- `restatement`: the largest such share over aligned pairs that differ in none of these ways
  (the utterance restates an earlier statement: "I don't eat meat" / "I don't eat meat
  either").
- `context_topic`, `context_flip`: an utterance clause shares content only with an earlier
  turn's context (not the turn itself), and that pair differs in negation or stance sign.
- `negated`, `negative_stance`, `rejection`: the utterance has a negation / a clause of negative
  stance / a word of outright rejection (hate, dislike, overrated, never, nothing, nobody).
- `aligned_negated`, `aligned_negative_stance`, `aligned_rejection`: the same, when it is also
  aligned (interaction terms: a negation that restates an earlier negation is no reversal).
- `question`: share of the utterance's clauses that ask (a question states nothing).
- `first_person`: the utterance speaks of the speaker (I, my, we ...).
- `novel`: log(1 + content words found in none of the speaker's earlier turns): an utterance
  that mostly brings new content continues the dialogue rather than revisiting a statement.
- `answers_question`: the prompt asks something (a reply to a question is usually new
  information about what was asked).

Model: P(contradiction) = sigmoid(INTERCEPT + sum of COEFFICIENTS[f] * f). The coefficients
come from one L2-regularised logistic regression (lambda 1, Newton steps) on the tune part of
the DECODE dev sample in /work/shared/data/decode_dev.json (Nie et al., ACL 2021: human-written
dialogues, the last utterance labelled contradiction / no_contradiction against the same
speaker's earlier turns): records whose index % 3 != 0 (1,000 records), rounded to 2 decimals.
The lexicons and features were also chosen on that part (reading its errors). The records
whose index % 3 == 0 (500) were held out and scored twice: once at the end (balanced accuracy
0.764), and once more after adding `restatement` (motivated by a constructed hard negative,
chosen on the tune part); nothing changed after that. Contradiction = positive class, at
DECISION_THRESHOLD (`manage.py qalab_calibrate --task self_contradiction --data FILE`
recomputes them on any DECODE-format file):

| part | N | balanced accuracy | precision | recall | AUROC |
|---|---|---|---|---|---|
| tune (fitted on it) | 1,000 | 0.821 | 0.841 | 0.787 | 0.897 |
| tune, 5-fold cross-validated | 1,000 | 0.823 | 0.837 | 0.795 | 0.891 |
| held out | 500 | 0.774 | 0.787 | 0.771 | 0.853 |
| whole file | 1,500 | 0.806 | 0.822 | 0.781 | 0.883 |

The held-out figure is the honest one for new dialogues: the cross-validated figure is
optimistic because the lexicons were written while reading tune errors. Balanced accuracy is
best at 0.5 (cross-validated: 0.815 at 0.45, 0.809 at 0.55). Lexical features cannot see
world knowledge or paraphrase ("I'm a computer science student" / "I am an Economics student",
"no food before surgery" / "needs to fast"); most misses are of that kind. Scoring the 1,500
records takes about 1.5 s.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judge.metrics import auroc, confusion
from judge.support import stem, tokens

DECISION_THRESHOLD = 0.5

# Fitted on the DECODE dev tune part (see the module docstring); P(contradiction) = sigmoid(z).
INTERCEPT = 0.78
COEFFICIENTS: dict[str, float] = {
    "aligned": 1.18,
    "topic": 1.07,
    "negation_flip": 1.26,
    "stance_flip": 0.76,
    "antonym": 1.12,
    "restatement": -1.34,
    "context_topic": 0.60,
    "context_flip": 0.55,
    "negated": 1.30,
    "negative_stance": 1.62,
    "rejection": 0.10,
    "aligned_negated": -0.87,
    "aligned_negative_stance": -1.05,
    "aligned_rejection": 1.09,
    "question": -2.57,
    "first_person": 0.93,
    "novel": -1.78,
    "answers_question": -1.14,
}

# --------------------------------------------------------------------------- lexicons

# Words that carry no topic: function words, pronouns, fillers, very common verbs and
# adjectives. Negations are handled separately and never count as shared content.
_STOP_TEXT = """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself nor now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves i'm i've i'd i'll it's that's you're you've lol haha yeah yes oh well really
    think know get got also much go going one thing things lot lots alot sure okay ok wow cool
    nice im ive thats like love want kind sort pretty quite stuff people day time good great
    make made way even still"""
STOPWORDS = frozenset(_STOP_TEXT.split())
_NEGATION_TEXT = """not no never nothing nobody none neither nor without cannot nope hardly
    barely rarely dont cant wont isnt arent wasnt werent didnt doesnt havent hasnt hadnt
    couldnt wouldnt shouldnt aint donot"""
NEGATIONS = frozenset(_NEGATION_TEXT.split())
# Counterfactual or ended states read as a negation: "I wish I had a dog" = I have none.
_NEGATING_PHRASE = re.compile(
    r"\b(?:i wish|if only|anything but|no longer|not anymore|any ?more)\b", re.IGNORECASE
)
# Set phrases with a negation word that negate nothing.
_NOT_NEGATING = re.compile(
    r"\b(?:no|not an?) (?:problem|worries|worry|doubt|wonder)\b|\bno need to worry\b",
    re.IGNORECASE,
)
_POSITIVE_TEXT = """love loved loves like liked likes enjoy enjoyed enjoys enjoying great good
    best awesome amazing fun happy glad favorite favourite fantastic wonderful nice beautiful
    interesting exciting excited cool perfect prefer adore fan agree easy safe healthy delicious
    lucky brave proud fond better excellent incredible lovely pleased satisfying comfortable
    worth hooked passionate welcome free"""
_NEGATIVE_TEXT = """hate hated hates dislike disliked awful terrible bad worst boring bored sad
    scared afraid fear terrified horrible annoying ugly hard difficult dangerous unhealthy
    disgusting gross overrated waste lonely angry upset unlucky sick tired disagree worse poor
    stupid useless pointless scary creepy lack lacks tough headache nightmare miserable painful
    pain regret unfortunately depressed depressing ridiculous silly weird expensive costly"""
POSITIVE = frozenset(stem(w) for w in _POSITIVE_TEXT.split())
NEGATIVE = frozenset(stem(w) for w in _NEGATIVE_TEXT.split())
_REJECTION_TEXT = "hate hated hates dislike overrated never nobody nothing"
REJECTION = frozenset(stem(w) for w in _REJECTION_TEXT.split())
_FIRST_PERSON_TEXT = "i i'm i've i'd i'll im ive me my mine we our us"
FIRST_PERSON = frozenset(_FIRST_PERSON_TEXT.split())
_ANTONYM_TEXT = """love-hate like-hate like-dislike love-dislike enjoy-hate always-never
    good-bad great-terrible great-awful best-worst happy-sad agree-disagree true-false easy-hard
    easy-difficult big-small big-little old-young old-new hot-cold fast-slow rich-poor
    early-late many-few more-less cheap-expensive cheap-costly fun-boring interesting-boring
    exciting-boring safe-dangerous win-lose won-lost remember-forget open-closed married-single
    love-afraid love-scared love-terrified tall-short long-short high-low healthy-unhealthy
    alive-dead same-different all-none beautiful-ugly clean-dirty light-dark most-least
    gain-lose start-stop begin-end buy-sell bought-sold accept-refuse allowed-forbidden
    alone-together shy-outgoing lazy-active sober-drunk hungry-full everything-nothing
    often-rarely often-never lucky-unlucky glad-sorry pass-fail passed-failed hired-fired
    quiet-loud common-rare real-fake natural-artificial strong-weak full-empty wet-dry
    include-exclude included-excluded free-paid required-optional"""
ANTONYMS: dict[str, frozenset[str]] = {}
for _pair in _ANTONYM_TEXT.split():
    _a, _b = (stem(w) for w in _pair.split("-"))
    ANTONYMS[_a] = ANTONYMS.get(_a, frozenset()) | {_b}
    ANTONYMS[_b] = ANTONYMS.get(_b, frozenset()) | {_a}
_NEGATIVE_PREFIXES = ("un", "dis", "in", "im", "ir", "il", "non")

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(
    r",?\s+\b(?:but|though|although|however|whereas|except|and then|because|so)\b"
    r"|\s*[;:,]\s+",
    re.IGNORECASE,
)
_NEGATED_WORD = re.compile(r"n't$")


def _is_negation(word: str) -> bool:
    return word in NEGATIONS or bool(_NEGATED_WORD.search(word))


def _words(text: str) -> list[str]:
    return tokens(text.replace("´", "'").replace("`", "'"))


def negation_near(text: str, shared: frozenset[str], window: int = 3) -> bool:
    """A negation of `text` stands within `window` words of one of the `shared` stems: it
    negates what the two clauses share ("there is no parking"), not something else ("... at no
    additional charge" beside "the Plus plan")."""
    words = _words(text)
    negations = [i for i, w in enumerate(words) if _is_negation(w)]
    subjects = [i for i, w in enumerate(words) if stem(w) in shared]
    return any(abs(i - j) <= window for i in negations for j in subjects)


# --------------------------------------------------------------------------- clauses


@dataclass(frozen=True)
class Clause:
    """One clause of a text, with the sentence that contains it (a literal slice of the text)."""

    text: str
    sentence: str
    content: frozenset[str]  # content stems
    stems: frozenset[str]  # every stem
    words: frozenset[str]  # raw words of 3+ letters
    negated: bool
    stance: int  # -1, 0, 1
    question: bool

    @classmethod
    def of(cls, text: str, sentence: str) -> Clause:
        """The clause `text` of `sentence`."""
        words = _words(text)
        stems = [stem(w) for w in words]
        polar = _words(_NOT_NEGATING.sub(" ", text))  # the words that may negate
        score = 0
        for i, s in enumerate(stem(w) for w in polar):
            value = (s in POSITIVE) - (s in NEGATIVE)
            if value and any(_is_negation(w) for w in polar[max(0, i - 3) : i]):
                value = -value
            score += value
        return cls(
            text=text,
            sentence=sentence,
            content=frozenset(
                stem(w) for w in words if len(w) > 2 and w not in STOPWORDS and not _is_negation(w)
            ),
            stems=frozenset(stems),
            words=frozenset(w for w in words if len(w) > 2),
            negated=any(_is_negation(w) for w in polar) or bool(_NEGATING_PHRASE.search(text)),
            stance=(score > 0) - (score < 0),
            question="?" in sentence,
        )


def sentences(text: str) -> list[str]:
    """Sentences of `text`, stripped, each a literal slice of it."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def clauses(text: str) -> list[Clause]:
    """The clauses of `text` (at least one when it has a word)."""
    return list(_clauses(text))


@functools.lru_cache(maxsize=4096)
def _clauses(text: str) -> tuple[Clause, ...]:
    """`clauses`, read once per text: a transcript compares each reply with every earlier one."""
    out: list[Clause] = []
    for sentence in sentences(text):
        for part in _CLAUSE.split(sentence):
            if part and re.search(r"\w", part):
                out.append(Clause.of(part.strip(), sentence))
    return tuple(out)


def _antonyms(a: Clause, b: Clause) -> bool:
    """`a` has a word whose antonym is in `b` (listed, or one is the other with a negative
    prefix: "known" / "unknown")."""
    if any(ANTONYMS.get(s, frozenset()) & b.stems for s in a.stems):
        return True
    for x in a.words:
        for y in b.words:
            short, long_ = (x, y) if len(x) < len(y) else (y, x)
            if len(short) >= 4 and any(long_ == p + short for p in _NEGATIVE_PREFIXES):
                return True
    return False


# --------------------------------------------------------------------------- features


@dataclass(frozen=True)
class Pair:
    """An utterance clause aligned with an earlier clause, and how they differ."""

    earlier_index: int  # index into `earlier`
    earlier: Clause
    later: Clause
    shared: frozenset[str]
    negation_flip: bool
    stance_flip: bool
    antonym: bool

    @property
    def overlap(self) -> float:
        """Share of the utterance clause's content found in the earlier clause."""
        return len(self.shared) / len(self.later.content)

    @property
    def flipped(self) -> bool:
        return self.negation_flip or self.stance_flip or self.antonym

    @property
    def weight(self) -> float:
        """This pair's part of the score (its flip terms), for picking the best pair."""
        return self.overlap * (
            COEFFICIENTS["negation_flip"] * self.negation_flip
            + COEFFICIENTS["stance_flip"] * self.stance_flip
            + COEFFICIENTS["antonym"] * self.antonym
        ) + 0.01 * len(self.shared)


@dataclass(frozen=True)
class Assessment:
    """The score of one utterance, its features, and the aligned pair that weighs most."""

    score: float
    features: dict[str, float]
    pair: Pair | None

    @property
    def contradiction(self) -> bool:
        return self.score >= DECISION_THRESHOLD


def aligned_pairs(earlier: Sequence[str], utterance: str | Sequence[Clause]) -> list[Pair]:
    """Every (utterance clause, earlier clause) pair that shares content; questions left out."""
    later = clauses(utterance) if isinstance(utterance, str) else list(utterance)
    pairs: list[Pair] = []
    for index, text in enumerate(earlier):
        for e in clauses(text):
            if e.question:
                continue
            for u in later:
                shared = u.content & e.content
                if u.question or not shared:
                    continue
                pairs.append(
                    Pair(
                        earlier_index=index,
                        earlier=e,
                        later=u,
                        shared=shared,
                        # "not painful" / "comfortable": the stances agree, no reversal
                        negation_flip=u.negated != e.negated and u.stance * e.stance <= 0,
                        stance_flip=u.stance * e.stance < 0,
                        antonym=_antonyms(u, e),
                    )
                )
    return pairs


def features(
    earlier: Sequence[str],
    utterance: str,
    *,
    contexts: Sequence[str] | None = None,
    prompt: str = "",
) -> tuple[dict[str, float], list[Pair]]:
    """The features of `utterance` against the same speaker's `earlier` turns (see the module
    docstring), and the aligned pairs they came from. `contexts[i]` is the other speaker's turn
    that `earlier[i]` answered ("" if none); `prompt` the other speaker's turn just before the
    utterance."""
    later = clauses(utterance)
    words = _words(utterance)
    pairs = aligned_pairs(earlier, later)
    topic = max((min(len(p.shared), 3) / 3 for p in pairs), default=0.0)

    def best(kind: str) -> float:
        return max((p.overlap for p in pairs if getattr(p, kind)), default=0.0)

    context_topic = context_flip = 0.0
    for index, text in enumerate(earlier):
        context = contexts[index] if contexts and index < len(contexts) else ""
        own = [c for c in clauses(text) if not c.question]
        if not context or not own:
            continue
        own_content = frozenset().union(*(c.content for c in own))
        context_content = frozenset().union(*(c.content for c in clauses(context))) - own_content
        negated = any(c.negated for c in own)
        stance = sum(c.stance for c in own)
        for u in later:
            if u.question or u.content & own_content or not u.content & context_content:
                continue
            context_topic = 1.0
            if u.negated != negated or u.stance * stance < 0:
                context_flip = 1.0

    history = {stem(w) for text in earlier for w in _words(text)}
    content = [w for w in words if len(w) > 2 and w not in STOPWORDS and not _is_negation(w)]
    aligned = float(bool(pairs))
    negated = float(any(c.negated for c in later))
    negative_stance = float(any(c.stance < 0 for c in later))
    rejection = float(any(stem(w) in REJECTION for w in words))
    values = {
        "aligned": aligned,
        "topic": topic,
        "negation_flip": best("negation_flip"),
        "stance_flip": best("stance_flip"),
        "antonym": best("antonym"),
        "restatement": max((p.overlap for p in pairs if not p.flipped), default=0.0),
        "context_topic": context_topic,
        "context_flip": context_flip,
        "negated": negated,
        "negative_stance": negative_stance,
        "rejection": rejection,
        "aligned_negated": aligned * negated,
        "aligned_negative_stance": aligned * negative_stance,
        "aligned_rejection": aligned * rejection,
        "question": sum(c.question for c in later) / len(later) if later else 0.0,
        "first_person": float(any(w in FIRST_PERSON for w in words)),
        "novel": math.log1p(sum(stem(w) not in history for w in content)),
        "answers_question": float("?" in prompt),
    }
    return values, pairs


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def assess(
    earlier: Sequence[str],
    utterance: str,
    *,
    contexts: Sequence[str] | None = None,
    prompt: str = "",
) -> Assessment:
    """Score `utterance` against the same speaker's `earlier` turns (arguments as `features`)."""
    values, pairs = features(earlier, utterance, contexts=contexts, prompt=prompt)
    z = INTERCEPT + sum(COEFFICIENTS[name] * value for name, value in values.items())
    pair = max(pairs, key=lambda p: p.weight, default=None)
    return Assessment(score=_sigmoid(z), features=values, pair=pair)


def contradiction_score(
    earlier: list[str],
    utterance: str,
    *,
    contexts: Sequence[str] | None = None,
    prompt: str = "",
) -> tuple[float, str | None]:
    """P(`utterance` contradicts one of the same speaker's `earlier` turns), in [0, 1], and the
    earlier sentence it most likely contradicts (None when it shares no content with any).
    Contradiction when the score is >= DECISION_THRESHOLD."""
    result = assess(earlier, utterance, contexts=contexts, prompt=prompt)
    return result.score, result.pair.earlier.sentence if result.pair else None


# --------------------------------------------------------------------------- DECODE evaluation

LABELS = {"contradiction": True, "no_contradiction": False}


@dataclass(frozen=True)
class DecodeRecord:
    """One DECODE-format record as the scorer sees it."""

    earlier: list[str]  # the speaker's earlier turns
    contexts: list[str]  # the other speaker's turn before each ("" if none)
    utterance: str
    prompt: str  # the other speaker's turn just before the utterance ("" if none)
    contradiction: bool


def decode_record(item: object) -> DecodeRecord:
    """A DECODE record (`turns` [{agent_id, text}], `last_utterance` {agent_id, text}, `label`
    contradiction / no_contradiction or boolean `is_contradiction`); ValueError saying what is
    wrong."""
    if not isinstance(item, Mapping):
        raise ValueError("expected a JSON object")
    missing = [k for k in ("turns", "last_utterance") if k not in item]
    if "label" not in item and "is_contradiction" not in item:
        missing.append("label")
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    turns, last = item["turns"], item["last_utterance"]
    if not isinstance(turns, list) or not all(_is_turn(t) for t in turns):
        raise ValueError("turns must be a list of {agent_id, text} objects")
    if not _is_turn(last):
        raise ValueError("last_utterance must be an {agent_id, text} object")
    if "label" in item:
        if item["label"] not in LABELS:
            raise ValueError(
                f"unknown label {item['label']!r} (expected contradiction or no_contradiction)"
            )
        label = LABELS[item["label"]]
    elif isinstance(item["is_contradiction"], bool):
        label = item["is_contradiction"]
    else:
        raise ValueError("is_contradiction must be true or false")
    speaker = last["agent_id"]
    earlier: list[str] = []
    contexts: list[str] = []
    for index, turn in enumerate(turns):
        if turn["agent_id"] == speaker:
            earlier.append(turn["text"])
            before = turns[index - 1] if index else None
            contexts.append(before["text"] if before and before["agent_id"] != speaker else "")
    prompt = turns[-1]["text"] if turns and turns[-1]["agent_id"] != speaker else ""
    return DecodeRecord(earlier, contexts, last["text"], prompt, label)


def _is_turn(turn: object) -> bool:
    return isinstance(turn, Mapping) and "agent_id" in turn and isinstance(turn.get("text"), str)


def score_record(record: DecodeRecord) -> float:
    """The contradiction score of one record's last utterance."""
    return assess(
        record.earlier, record.utterance, contexts=record.contexts, prompt=record.prompt
    ).score


def evaluate(
    records: Iterable[DecodeRecord | Mapping[str, Any]],
    threshold: float = DECISION_THRESHOLD,
) -> dict[str, Any]:
    """Figures of the scorer on DECODE-format records, contradiction = positive class: n,
    contradictions, threshold, balanced_accuracy, precision, recall, f1 (at `threshold`), auroc
    (None unless both labels occur) and the confusion counts."""
    parsed = [r if isinstance(r, DecodeRecord) else decode_record(r) for r in records]
    scores = [score_record(r) for r in parsed]
    labels = [r.contradiction for r in parsed]
    counts = confusion([s >= threshold for s in scores], labels)
    positives = sum(labels)
    both = 0 < positives < len(labels)
    return {
        "n": len(parsed),
        "contradictions": positives,
        "threshold": threshold,
        "balanced_accuracy": round(counts.balanced_accuracy, 4),
        "precision": round(counts.precision, 4),
        "recall": round(counts.recall, 4),
        "f1": round(counts.f1, 4),
        "auroc": round(auroc(scores, labels), 4) if both else None,
        "confusion": {"tp": counts.tp, "fp": counts.fp, "tn": counts.tn, "fn": counts.fn},
    }
