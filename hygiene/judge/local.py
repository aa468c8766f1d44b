"""The embedded judge: CPU only, no download. Embedding similarity plus explicit signals.

It is a heuristic, and says so through its confidence: it reaches the auto-resolve bar only for near-verbatim
duplicates and for updates that say they are updates (a cue like "now", "moved", "no longer", "switched") about the
same topic with changed values. Everything uncertain lands below the bar, where it becomes a conflict for a human
rather than a retirement: a wrong retirement silently loses a true fact, a needless conflict costs a glance.
Its measured accuracy: `make bench ARGS=judge` (docs/API.md).
"""
import re

import numpy as np

from hygiene.judge import Pair, Verdict
from hygiene.judge.prompt import PROMPT_VERSION
from memory.embeddings import embed
from memory.normalize import same_signals, signal_tokens

UPDATE_CUES = re.compile(
    r"\b(now|no longer|moved|switched|replaced|replaces|instead|as of|from now on|going forward|changed|updated"
    r"|migrated|migration (?:is )?done|deprecated|retired|renamed|upgraded|bumped|rolled back|reverted|new|newly"
    r"|since|anymore|any more|was|were|previously|used to|turned out|root cause|actually|correction|update:)\b",
    re.IGNORECASE,
)
SCOPE_WORDS = {
    "staging", "production", "prod", "dev", "development", "test", "qa", "eu", "us", "apac", "web", "mobile", "ios",
    "android", "read", "write", "internal", "external", "weekday", "weekend", "weekdays", "weekends", "frontend",
    "backend", "p50", "p95", "p99", "free", "pro", "enterprise", "primary", "replica", "sandbox", "live",
}
LOOP_KINDS = {"task", "open-question"}
# Words whose swap flips a fact while barely moving the embedding ("enabled" vs "disabled" scores 0.9+).
OPPOSITES = [("enabled", "disabled"), ("on", "off"), ("allowed", "blocked"), ("allowed", "forbidden"),
             ("required", "optional"), ("public", "private"), ("open", "closed"), ("true", "false"),
             ("up", "down"), ("increase", "decrease"), ("include", "exclude"), ("sync", "async"), ("before", "after")]


def _opposed(a: str, b: str) -> bool:
    words_a, words_b = set(re.findall(r"[a-z]+", a.lower())), set(re.findall(r"[a-z]+", b.lower()))
    return any((x in words_a and y in words_b) or (y in words_a and x in words_b) for x, y in OPPOSITES)


def _scope_words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word in SCOPE_WORDS}


def classify(pair: Pair, similarity: float) -> Verdict:
    cue = bool(UPDATE_CUES.search(pair.newer))
    same_values = same_signals(pair.older, pair.newer) and not _opposed(pair.older, pair.newer)
    values_changed = signal_tokens(pair.older) != signal_tokens(pair.newer) or _opposed(pair.older, pair.newer)
    scopes_a, scopes_b = _scope_words(pair.older), _scope_words(pair.newer)
    other_scope = bool(scopes_a and scopes_b and scopes_a != scopes_b)

    if similarity < 0.35:
        return Verdict("unrelated", round(0.6 + 0.3 * (0.35 - similarity) / 0.35, 2),
                       f"different topics (similarity {similarity:.2f})")
    if similarity >= 0.9 and same_values and not other_scope:
        return Verdict("duplicate", round(min(0.97, 0.75 + (similarity - 0.9) * 2.5), 2),
                       f"near-verbatim restatement (similarity {similarity:.2f}), same values")
    if other_scope and not cue:
        return Verdict("complementary", 0.7,
                       f"same topic for another scope ({', '.join(sorted(scopes_a ^ scopes_b))})")
    if pair.older_kind in LOOP_KINDS and pair.newer_kind not in LOOP_KINDS and similarity >= 0.5:
        return Verdict("supersedes", round(min(0.85, 0.5 + similarity * 0.4), 2),
                       f"a {pair.newer_kind} that may close the earlier {pair.older_kind}")
    if cue and similarity >= 0.55:
        confidence = 0.55 + 0.5 * (similarity - 0.55)
        if values_changed:
            confidence += 0.15
        if other_scope:
            confidence -= 0.2
        return Verdict("supersedes", round(min(0.95, confidence), 2),
                       f"update cue in the newer memory, similarity {similarity:.2f}"
                       + (", values changed" if values_changed else ""))
    if similarity >= 0.7 and (values_changed or not same_values):
        return Verdict("contradicts", round(0.5 + 0.3 * (similarity - 0.7) / 0.3, 2),
                       "same topic, different values, nothing says which is current")
    if similarity >= 0.8 and same_values:
        return Verdict("duplicate", round(0.5 + (similarity - 0.8), 2), f"very similar (similarity {similarity:.2f})")
    return Verdict("complementary", round(0.55 + 0.3 * (0.7 - min(similarity, 0.7)), 2),
                   f"related but no sign of replacement (similarity {similarity:.2f})")


class LocalJudge:
    name = "local:minilm-signals-v1"
    prompt_version = PROMPT_VERSION  # the same contract, answered without a language model

    def judge(self, pairs: list[Pair]) -> list[Verdict]:
        vectors = embed([text for pair in pairs for text in (pair.older, pair.newer)])
        similarities = (vectors[0::2] * vectors[1::2]).sum(axis=1)
        return [classify(pair, float(np.clip(s, -1, 1))) for pair, s in zip(pairs, similarities)]
