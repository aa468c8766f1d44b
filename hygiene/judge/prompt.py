"""The judge's prompt and output schema, versioned together: the version is recorded on every verdict."""
import json

from hygiene.judge import RELATIONS, Pair

PROMPT_VERSION = "judge-v2"  # v2: texts cut at PROMPT_TEXT_CHARS, rationale at most RATIONALE_MAX_CHARS

# A memory holds up to 16,000 characters: eight pairs of those are about 64k tokens, past a judge's context
# (k8s/judge: --max-model-len 16384), and vLLM refuses the whole batch with 400. Each text goes in cut to its start.
PROMPT_TEXT_CHARS = 2000
RATIONALE_MAX_CHARS = 200
# The budget covers the longest answer the schema allows, so an answer is never cut before its JSON closes: a
# verdict's keys, relation and confidence take under 40 tokens, and no token is shorter than one character of the
# rationale (a random-weight model that fills every rationale to its bound took 80 tokens a verdict on vLLM 0.32).
ANSWER_TOKENS_PER_PAIR = 64 + RATIONALE_MAX_CHARS

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "relation": {"type": "string", "enum": list(RELATIONS)},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string", "maxLength": RATIONALE_MAX_CHARS},
    },
    "required": ["relation", "confidence", "rationale"],
    "additionalProperties": False,
}


def batch_schema(count: int) -> dict:
    """Several pairs per request: one verdict per pair, in order."""
    return {
        "type": "object",
        "properties": {"verdicts": {"type": "array", "items": VERDICT_SCHEMA, "minItems": count, "maxItems": count}},
        "required": ["verdicts"],
        "additionalProperties": False,
    }


SYSTEM = """You review a team's memory store. For each pair, A was written before B. Say how B relates to A:
- supersedes: B replaces A. Same fact, newer value or state (a moved date, a new owner, a renamed endpoint, a diagnosis
  refined into its root cause, a plan that became an implementation, a task that got done). A is no longer current.
- duplicate: B says the same as A.
- complementary: B adds a different fact; both stay true (staging vs production, EU vs US, another service).
- contradicts: A and B disagree and nothing says B is the newer truth.
- unrelated: different topics.
Be careful: retiring A on a wrong "supersedes" loses a true fact. When unsure between supersedes and complementary,
lower your confidence. Confidence is the probability that your relation is right.
Answer with JSON only: {"verdicts": [{"relation", "confidence", "rationale"}, ...]}, one per pair, in order; each
rationale is one short sentence."""


def answer_token_budget(count: int) -> int:
    return count * ANSWER_TOKENS_PER_PAIR


def _cut(text: str) -> str:
    return text if len(text) <= PROMPT_TEXT_CHARS else text[:PROMPT_TEXT_CHARS] + " [...]"


def messages_for(pairs: list[Pair]) -> list[dict]:
    listing = [
        {"pair": i, "A": {"kind": p.older_kind, "text": _cut(p.older)},
         "B": {"kind": p.newer_kind, "text": _cut(p.newer)}}
        for i, p in enumerate(pairs, start=1)
    ]
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": json.dumps(listing, ensure_ascii=False)},
    ]
