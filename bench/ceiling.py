"""What the embedding model alone can do on the evaluation set: the ceiling that the recall floors live under.

Supersession is made perfect (every stale version known from the dataset's labels, none of them a candidate) and each
query is ranked by cosine over the memories its user may see with its filters; an earlier version's match counts for
its current version, as in recall. No database, no fusion: if the right answer is not first here, no fusion of this
model's ranks can put it first without another signal. A previous_value query (one with `current`) reads history, as
the bench does: every visible version is its own candidate, less the query's current ones.
"""
import numpy as np

from memory.embeddings import embed


def visible(dataset: dict, query: dict) -> list[dict]:
    projects = dataset["users"][query["user"]]["projects"]
    kinds = query.get("kinds")
    return [
        m for m in dataset["memories"]
        if (m["user"] == query["user"] if m["project"] is None else m["project"] in projects)
        and (query.get("project") is None or m["project"] in (query["project"], None))
        and (not kinds or m["kind"] in kinds)
    ]


def ceiling(dataset: dict) -> dict[str, float]:
    """recall@1 per query type and overall, with perfect supersession and meaning alone."""
    successor = {old: m["key"] for m in dataset["memories"] for old in m["supersedes"] + m["replaces_undeclared"]}

    def head(key: str) -> str:
        while key in successor:
            key = successor[key]
        return key

    vectors = dict(zip((m["key"] for m in dataset["memories"]), embed([m["content"] for m in dataset["memories"]])))
    queries = embed([q["query"] for q in dataset["queries"]])
    hits: dict[str, list[bool]] = {}
    for query, q_vector in zip(dataset["queries"], queries):
        candidates = visible(dataset, query)
        keys = {m["key"] for m in candidates}
        scores: dict[str, float] = {}
        for memory in candidates:
            if "current" in query:
                if memory["key"] not in query["current"]:
                    scores[memory["key"]] = float(vectors[memory["key"]] @ q_vector)
                continue
            current = head(memory["key"])
            if current not in keys:
                continue
            score = float(vectors[memory["key"]] @ q_vector)
            scores[current] = max(scores.get(current, -1.0), score)
        best = max(scores, key=scores.get) if scores else None
        for bucket in (query["type"], "overall"):
            hits.setdefault(bucket, []).append(best in query["answers"])
    return {bucket: round(float(np.mean(values)), 3) for bucket, values in sorted(hits.items())}
