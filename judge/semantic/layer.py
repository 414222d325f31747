"""The semantic layer's part in judging a case: confirm, score and add findings of the rules
the heads read (`judge.semantic.thresholds.SEMANTIC_RULES`).

- A finding of `self_contradiction`, `ignored_question` or `irrelevant_reply` from its
  deterministic check is kept only when its head confirms it (score at or above the rule's
  CONFIRM threshold, or the organization's re-fitted one the run snapshotted); its confidence
  becomes the head's score. The head reads the reply against the bot's earlier replies
  (contradiction) or against the customer's message (take-up).
- In a case with no knowledge base (open-domain chat, a transcript judged without a KB) the
  rules have nothing to anchor on, so the head alone reports, at or above the rule's threshold
  (`threshold`, a run may override it): a later reply contradicting an earlier one, a customer
  question the reply does not take up (ignored), and at the irrelevant threshold a reply
  unrelated to the customer's question (irrelevant; one finding with the ignored one). Their evidence quotes the sentences scored, verbatim.

Off (`JudgeConfig.semantic` false) the findings pass unchanged: the deterministic judge alone.
"""

from __future__ import annotations

from judge.checks import load_check
from judge.dialogue_acts import questions
from judge.schemas import CaseTranscript, Evidence, Finding, JudgeConfig
from judge.semantic.scores import ScoredPair, strongest_contradiction, takeup_miss
from judge.semantic.thresholds import CONFIRM_THRESHOLDS, confirm_threshold, threshold


def apply_semantic(
    case: CaseTranscript, findings: list[Finding], config: JudgeConfig
) -> list[Finding]:
    """`findings` confirmed and scored by the heads, plus the heads' own findings in a case
    with no knowledge base."""
    if not config.semantic:
        return findings
    scorer = _Scorer(case, config)
    kept: list[Finding] = []
    for finding in findings:
        score = scorer.score(finding)
        if score is None:
            kept.append(finding)
        elif score >= confirm_threshold(finding.rule_id, config.semantic_confirm_thresholds):
            kept.append(finding.model_copy(update={"confidence": round(score, 3)}))
    if not case.fixture.documents:
        kept.extend(scorer.head_findings(kept))
    return kept


class _Scorer:
    def __init__(self, case: CaseTranscript, config: JudgeConfig) -> None:
        self.case = case
        self.config = config
        self.model_dir = config.semantic_model_dir
        self._contradictions: dict[int, ScoredPair | None] = {}
        self._takeup: dict[int, float] = {}

    def contradiction(self, turn: int) -> ScoredPair | None:
        """The strongest contradiction of reply `turn` against the bot's earlier replies."""
        if turn not in self._contradictions:
            earlier = [t.reply for t in self.case.turns if t.index < turn and t.reply.strip()]
            reply = next((t.reply for t in self.case.turns if t.index == turn), "")
            self._contradictions[turn] = (
                strongest_contradiction(earlier, reply, model_dir=self.model_dir)
                if earlier and reply.strip()
                else None
            )
        return self._contradictions[turn]

    def takeup(self, turn: int) -> float:
        """P(reply `turn` does not take up the customer's message before it)."""
        if turn not in self._takeup:
            current = next((t for t in self.case.turns if t.index == turn), None)
            if current is None or not current.customer.strip() or not current.reply.strip():
                self._takeup[turn] = 0.0
            else:
                self._takeup[turn] = takeup_miss(
                    current.customer, current.reply, model_dir=self.model_dir
                )
        return self._takeup[turn]

    def score(self, finding: Finding) -> float | None:
        """The head's score of a rule's finding; None for a rule the heads do not read."""
        if finding.rule_id not in CONFIRM_THRESHOLDS or finding.turn_index is None:
            return None
        if finding.rule_id == "self_contradiction":
            pair = self.contradiction(finding.turn_index)
            return pair.score if pair else 0.0
        return self.takeup(finding.turn_index)

    def head_findings(self, existing: list[Finding]) -> list[Finding]:
        """The heads' own findings on turns where the rule reported nothing."""
        overrides = self.config.semantic_thresholds
        reported = {(f.rule_id, f.turn_index) for f in existing}
        out: list[Finding] = []
        for turn in self.case.turns:
            if not turn.reply.strip():
                continue
            if ("self_contradiction", turn.index) not in reported:
                pair = self.contradiction(turn.index)
                if pair and pair.score >= threshold("self_contradiction", overrides):
                    out.append(self._contradiction_finding(turn.index, pair))
            asked = [q for q in questions(turn.customer) if q.topic]
            if not asked:
                continue
            miss = self.takeup(turn.index)
            # An unrelated reply leaves the question unanswered too: both rules, which the
            # merge makes one finding (judge.merge, same reply span).
            for rule in ("ignored_question", "irrelevant_reply"):
                if miss >= threshold(rule, overrides) and (rule, turn.index) not in reported:
                    out.append(self._takeup_finding(rule, turn.index, asked[0].sentence.text, miss))
        return out

    def _contradiction_finding(self, turn: int, pair: ScoredPair) -> Finding:
        earlier_turn = [t.index for t in self.case.turns if t.index < turn and t.reply.strip()][
            pair.earlier_index
        ]
        finding = load_check("self_contradiction").finding(
            self.case,
            turn_index=turn,
            subject=pair.later[:200],
            evidence=[
                Evidence(source="reply", quote=pair.earlier, turn=earlier_turn),
                Evidence(source="reply", quote=pair.later, turn=turn),
            ],
            rationale=(
                f"The reply says '{pair.later[:200]}', which contradicts what the bot said "
                f"earlier: '{pair.earlier[:200]}' (semantic layer, contradiction score "
                f"{pair.score:.2f})."
            ),
            fix_text=(
                "Make the assistant check what it said earlier in the conversation before "
                "stating something, and correct itself explicitly when it changes an answer."
            ),
            effort="M",
            confidence=round(pair.score, 3),
        )
        return finding.model_copy(update={"detector": "semantic:self_contradiction"})

    def _takeup_finding(self, rule: str, turn: int, asked: str, miss: float) -> Finding:
        reply = next(t.reply for t in self.case.turns if t.index == turn)
        stated = reply.strip().splitlines()[0].strip()[:240] or reply.strip()[:240]
        what = (
            "talks about something unrelated to it"
            if rule == "irrelevant_reply"
            else "does not take it up"
        )
        finding = load_check(rule).finding(
            self.case,
            turn_index=turn,
            subject=asked[:200],
            evidence=[
                Evidence(source="customer", quote=asked, turn=turn),
                Evidence(source="reply", quote=stated, turn=turn),
            ],
            rationale=(
                f"The customer asked '{asked[:200]}' and the reply {what} (semantic layer, "
                f"take-up score {miss:.2f})."
            ),
            fix_text=(
                "Tell the assistant to answer the customer's question first, and to say "
                "plainly when it does not know."
            ),
            effort="S",
            confidence=round(miss, 3),
        )
        return finding.model_copy(update={"detector": f"semantic:{rule}"})
