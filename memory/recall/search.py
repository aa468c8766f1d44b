"""recall: hybrid retrieval that prefers current facts and keeps history inspectable (the selector of API.md's recall).

Two channels find candidates under row-level security, with the same filters:
- meaning: pgvector cosine nearest neighbours over the HNSW index (iterative scan, so filters lose no rows), or an
  exact sort where the planner expects few candidates; a memory of several statements is also found by each of them
  (memory/passages.py);
- words: Postgres full text (the generated ``search`` tsvector, GIN), all of the query's terms, ranked by ts_rank_cd.
Reciprocal rank fusion merges them: score = sum over channels of weight / (RRF_K + rank). Ranks, not raw scores, are
fused because cosine distances and text ranks live on unrelated scales. No age penalty: a months-old right answer is
not pushed down. Only live memories unless ``include_history``; ``as_of`` reads the store as it stood then.
Returned memories that give different values for the same thing are flagged (memory/disagreement.py), and a newer
one that says in words it is an update comes before what it updates.
"""
import numpy as np

from memory import disagreement, passages
from memory.models import Memory
from memory.recall import channels, ordering
from memory.recall.channels import RRF_K, TEXT_WEIGHT, VECTOR_WEIGHT
from memory.recall.ordering import DIRECTIONAL
from memory.recall.query import Hit, RecallQuery, RecallResult
from plumbing.timing import StepTimer
from tenants import rls
from tenants.auth import Principal


def memory_recall(
    *, principal: Principal, q: RecallQuery, vector: np.ndarray, steps: StepTimer | None = None
) -> RecallResult:
    """``vector`` is ``embed_one(q.query)``, computed by the entry point before its transaction. ``steps`` carries
    the entry point's own laps (embedding, identity) into the trace."""
    rls.require_scope()  # raw SQL below passes no tenant manager: fail closed here
    steps = steps or StepTimer()
    project = channels.project_of(principal, q.project)
    searched = None if channels.searches_history(q) or q.include_history else ["live"]
    where, params = channels.filters(q, project, statuses=searched)
    vector_rows, by_passage = channels.vector_channel(vector, where, params, q.kinds)
    steps.lap("vector_channel")
    text_ids, terms = channels.text_channel(q.query, where, params)
    steps.lap("text_channel")
    live = channels.filters(q, project, statuses=["live"])
    via: dict[str, str] = {}
    if channels.searches_history(q):
        heads = channels.current_versions({i for i, _ in vector_rows} | set(text_ids), *live)
        vector_rows = channels.to_heads(vector_rows, heads, via)
        text_ids = [i for i, _ in channels.to_heads([(i, None) for i in text_ids], heads, via)]
    fused = channels.fuse(vector_rows, text_ids)
    for memory_id, older in via.items():
        if memory_id in fused:
            fused[memory_id]["found_via"] = older
    ranked = sorted(fused.items(), key=lambda item: item[1]["score"], reverse=True)[: q.k]
    steps.lap("fusion")
    hits = _hydrate(ranked, q)
    steps.lap("hydration")
    warnings, kept_both = ordering.annotate(hits, q, live)
    disagreements = ordering.disagreements(hits, q.query, kept_both, _meaning(hits, vector),
                                           reorder=not q.include_history)
    steps.lap("annotation")
    found = {"vector": len(vector_rows), "passages": by_passage, "text": len(text_ids), "tsquery": terms}
    return RecallResult(hits=hits, warnings=warnings, trace=_trace(q, found, hits, disagreements, steps))


def _meaning(hits: list[Hit], vector: np.ndarray) -> disagreement.Meaning:
    """The query's and the statements' vectors, read only for what could disagree: live memories stating a value."""
    valued = [hit.memory for hit in hits if hit.memory.status == Memory.Status.LIVE
              and any(sentence.values for sentence in disagreement.sentences(hit.memory.content))]
    vectors = passages.statement_vectors(rls.require_scope().org_id, valued) if len(valued) > 1 else {}
    return disagreement.Meaning(vector, vectors)


def _trace(q: RecallQuery, found: dict, hits: list[Hit], disagreements: list[dict], steps: StepTimer) -> dict:
    """What recall did, in words a reader can check: filters, channels, fusion, the order rules and their pairs."""
    return {
        "query": q.query,
        "filters": {
            "lifecycle": "live+superseded" if q.include_history else "live",
            "earlier_versions": "searched as evidence for their current version"
            if channels.searches_history(q) else None,
            "as_of": q.as_of.isoformat() if q.as_of else None,
            "scope": q.scope,
            "project": q.project,
            "kinds": q.kinds,
            "namespace_prefix": q.namespace_prefix,
            "visibility": "row-level security: your personal memories and your projects' memories",
        },
        "channels": {
            "vector": {
                "candidates": found["vector"],
                "passages": found["passages"],
                "method": "pgvector cosine: HNSW index with iterative scan, or an exact sort when the planner expects"
                          " few candidates; a memory of several statements at the mean of its whole text's distance"
                          " and its nearest statement's",
            },
            "text": {"candidates": found["text"], "tsquery": found["tsquery"]},
        },
        "fusion": f"reciprocal rank fusion: {VECTOR_WEIGHT}/({RRF_K}+vector_rank) + {TEXT_WEIGHT}/({RRF_K}+text_rank)",
        "age_penalty": None,
        "conflict_order": {
            "rule": f"of two memories in an open conflict judged '{DIRECTIONAL}', the newer (or the current version"
                    " that has replaced it since) comes right before the older when the query found it too or it is"
                    " typed (not a note); other conflicts keep relevance order",
            "pairs": [[hit.memory.id, older] for hit in hits for older in hit.probably_replaces],
        },
        "disagreements": {
            "rule": "two returned live memories whose sentences answering the query are about the same thing and"
                    " give different values of the kind the query asks for (date, time, price, count, version, name)"
                    " are both flagged 'disagrees'; the newer comes right before the older only where it says in"
                    " words that it is an update; nothing is retired or queued",
            "pairs": disagreements,
        },
        "timings_ms": {**steps.rounded(), "total": round(sum(steps.ms.values()), 2)},
    }


def _hydrate(ranked: list[tuple[str, dict]], q: RecallQuery) -> list[Hit]:
    memories = ordering.load([memory_id for memory_id, _ in ranked])
    hits = [Hit(memory=memories[memory_id], **entry) for memory_id, entry in ranked if memory_id in memories]
    return ordering.current_versions_first(hits, q) if q.include_history else hits
