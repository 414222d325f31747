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

The package: `lexicons` (the word lists), `clauses` (a text cut into clauses, each with its
negation and stance), `scorer` (the features and the model) and `decode` (reading and scoring
DECODE-format records).
"""

from __future__ import annotations

from judge.contradiction.clauses import Clause, clauses, negation_near, sentences
from judge.contradiction.decode import DecodeRecord, decode_record, evaluate, score_record
from judge.contradiction.scorer import (
    COEFFICIENTS,
    DECISION_THRESHOLD,
    INTERCEPT,
    Assessment,
    Pair,
    aligned_pairs,
    assess,
    contradiction_score,
    features,
)

__all__ = [
    "COEFFICIENTS",
    "DECISION_THRESHOLD",
    "INTERCEPT",
    "Assessment",
    "Clause",
    "DecodeRecord",
    "Pair",
    "aligned_pairs",
    "assess",
    "clauses",
    "contradiction_score",
    "decode_record",
    "evaluate",
    "features",
    "negation_near",
    "score_record",
    "sentences",
]
