"""The judge's prompt and output schema, versioned together: the version is recorded on every verdict."""
import json

from hygiene.judge import RELATIONS, Pair

PROMPT_VERSION = "judge-v1"

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "relation": {"type": "string", "enum": list(RELATIONS)},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string", "maxLength": 400},
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
Answer with JSON only: {"verdicts": [{"relation", "confidence", "rationale"}, ...]}, one per pair, in order."""


def messages_for(pairs: list[Pair]) -> list[dict]:
    listing = [
        {"pair": i, "A": {"kind": p.older_kind, "text": p.older}, "B": {"kind": p.newer_kind, "text": p.newer}}
        for i, p in enumerate(pairs, start=1)
    ]
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": json.dumps(listing, ensure_ascii=False)},
    ]
