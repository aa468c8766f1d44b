"""The embedded judge: CPU only, no download. MiniLM similarity plus the signals of hygiene/judge/signals.py, weighed
by a small model fitted on the tuning half of the labelled pairs (hygiene/judge/model.py, local_model.json).

Its confidence is calibrated (Platt scaling on the tuning pairs): on the held-out pairs a verdict at 0.9 or
more is right about 9 times in 10 or better, so the auto-resolve bar keeps meaning "90% sure" (the bar is
not lowered). One rule stands above the model: a pair whose texts name different scopes (staging/production, EU/US,
p50/p95) is never retired on this judge's word, whatever the weights say — sibling facts for two scopes are the
commonest complementary pair a judge mistakes for an update. Measured: `make bench ARGS="judge --ablate"`.
"""
from functools import cached_property

import numpy as np

from hygiene.judge import Judgement, Pair
from hygiene.judge.model import Model
from hygiene.judge.prompt import PROMPT_VERSION
from hygiene.judge.signals import signals
from memory.embeddings import embed
from memory.vocabulary import RETIRING

BELOW_THE_BAR = 0.89  # a capped confidence: queued for a person, never retired
# The calibration holds where the labelled pairs are: 9 in 10 tuning replacements score 0.48 or more, and the
# confident retirements it was measured on start at 0.47. Under this similarity the judge has not been shown to be
# right 9 times in 10 (a store's neighbours at 0.3 are mostly other topics that share a word), so it never retires
# there; it may still queue.
CALIBRATED_FROM = 0.45
REASONS = {
    "change_cue": "a change cue", "changed_value": "a changed value", "names_old_state": "names the old state",
    "negation_flip": "negates the old", "other_scope": "another scope", "loop_settled": "settles an open loop",
}


class LocalJudge:
    name = "local:minilm-signals-v2"
    prompt_version = PROMPT_VERSION  # the same contract, answered without a language model

    def __init__(self, model: Model | None = None) -> None:
        self._given = model

    @cached_property
    def model(self) -> Model:
        return self._given or Model.load()

    def judge(self, pairs: list[Pair]) -> list[Judgement]:
        if not pairs:
            return []
        vectors = embed([text for pair in pairs for text in (pair.older, pair.newer)])
        similarities = np.clip((vectors[0::2] * vectors[1::2]).sum(axis=1), -1, 1)
        rows = [signals(p.older, p.newer, p.older_kind, p.newer_kind, float(s)) for p, s in zip(pairs, similarities)]
        return [self._verdict(row, *prediction) for row, prediction in zip(rows, self.model.predict(rows))]

    @staticmethod
    def _verdict(row: dict[str, float], relation: str, confidence: float, _probabilities) -> Judgement:
        seen = [text for key, text in REASONS.items() if row[key]]
        rationale = f"similarity {row['similarity']:.2f}" + (", " + ", ".join(seen) if seen else "")
        if relation in RETIRING and confidence > BELOW_THE_BAR:
            if row["other_scope"]:
                confidence = BELOW_THE_BAR
                rationale += "; capped below the bar: another scope may be a sibling fact"
            elif row["similarity"] < CALIBRATED_FROM:
                confidence = BELOW_THE_BAR
                rationale += "; capped below the bar: too far apart for a calibrated verdict"
        return Judgement(relation, round(confidence, 3), rationale)
