"""recall's candidates: the filters both channels share, the meaning and words channels, the walk from an earlier
version to its current one, and reciprocal rank fusion. Plain SQL under row-level security."""
import numpy as np
from django.db import connection

from memory import passages, selectors
from memory.models import Memory
from memory.recall.query import RecallQuery
from tenants import rls
from tenants.auth import Principal
from tenants.models import Project

CHANNEL_DEPTH = 50  # candidates taken from each channel before fusion
RRF_K = 60
VECTOR_WEIGHT = 1.0
TEXT_WEIGHT = 1.0  # words count as much as meaning when every query term matches (see text_channel)


def searches_history(q: RecallQuery) -> bool:
    """Whether older versions are searched as evidence for their current version (see current_versions)."""
    return q.as_of is None and not q.include_history


def filters(q: RecallQuery, project: Project | None, *, statuses: list[str] | None = None) -> tuple[str, list]:
    """SQL conditions shared by both channels (RLS adds visibility on top).

    The organization comes first although RLS implies it: as a parameter Postgres picks the tenant's partition when it
    plans (migration 0010); the policy's zm_current_org() is only known when the query runs, so every partition would
    be planned (and its HNSW index considered) for each query.
    """
    where, params = ["org_id = %s"], [rls.require_scope().org_id]
    if q.as_of is None:
        where.append("status = ANY(%s)")
        params.append(statuses or ["live", "superseded"])
    else:
        # What was live then: written by then and not yet retired then (a later retirement does not count).
        where.append("created_at <= %s")
        params.append(q.as_of)
        retired_then = "(status <> 'live' AND invalidated_at <= %s)"
        if q.include_history:
            where.append("NOT (status = 'forgotten' AND invalidated_at <= %s)")
        else:
            where.append(f"NOT {retired_then}")
        params.append(q.as_of)
    if q.scope != "all":
        where.append("scope = %s")
        params.append(q.scope)
    if project is not None:
        # The project's memories, plus the caller's personal ones (the portable layer) unless scope says otherwise.
        where.append("(project_id = %s OR scope = 'personal')")
        params.append(project.id)
    if q.kinds:
        where.append("kind = ANY(%s)")
        params.append(q.kinds)
    if q.namespace_prefix:
        where.append(f"namespace[1:{len(q.namespace_prefix)}] = %s::text[]")
        params.append(q.namespace_prefix)
    return " AND ".join(where), params


def project_of(principal: Principal, slug: str | None) -> Project | None:
    """The project a recall names, if the caller is a member of it (else 404)."""
    return selectors.project_for_member(user=principal.user, slug=slug) if slug else None


def nearest_query(literal: str, where: str, params: list, kinds: list[str] | None = None) -> tuple[str, list]:
    """The vector channel's query over the HNSW indexes, as recall runs it (and the benches explain it), with its
    parameters.

    Filtered by kind, it searches each kind on that kind's own partial HNSW index (memory_embedding_<kind>_hnsw) and
    merges them: on the index of every kind, a rare kind's memories sit among thousands of others that the
    iterative scan reads and drops (kinds=[fact] in a 100k tenant: 139 ms at p99). The kind goes into the text as a
    constant, checked against the kinds that exist, so that the planner matches the partial index even in a
    prepared statement's generic plan, where a parameter could be any kind."""
    def search(kind: str | None) -> str:
        only = f" AND kind = '{kind}'" if kind else ""
        return (f"SELECT id, embedding <=> %s::vector AS distance FROM memory_memory WHERE {where}{only}"
                f" ORDER BY embedding <=> %s::vector LIMIT {CHANNEL_DEPTH}")

    if not kinds:
        return search(None), [literal, *params, literal]
    chosen = sorted(set(kinds))
    if not set(chosen) <= set(Memory.Kind.values):
        raise ValueError(f"unknown kinds: {sorted(set(chosen) - set(Memory.Kind.values))}")
    if len(chosen) == 1:
        return search(chosen[0]), [literal, *params, literal]
    by_kind = " UNION ALL ".join(f"({search(kind)})" for kind in chosen)
    return (f"SELECT id, distance FROM ({by_kind}) AS by_kind ORDER BY distance LIMIT {CHANNEL_DEPTH}",
            [literal, *params, literal] * len(chosen))


def vector_channel(vector: np.ndarray, where: str, params: list,
                   kinds: list[str] | None = None) -> tuple[list[tuple[str, float]], int]:
    """The memories nearest in meaning, by their whole text and by their statements (memory/passages.py), nearest
    first; and how many of them only a statement found. ``kinds``: the kind filter that ``where`` holds too, for
    the kinds' own indexes (nearest_query).

    One statement: the two searches and the distances each leaves out were three round trips on every recall.
    """
    literal = passages.vector_literal(vector)
    org_id = rls.require_scope().org_id
    by_index, by_index_params = nearest_query(literal, where, params, kinds)
    near, near_params = passages.nearest_query(literal, org_id, 2 * CHANNEL_DEPTH)
    statement_of, statement_params = passages.nearest_statement_query(literal, org_id, "memory_memory.id")
    short = f"(SELECT count(*) FROM by_index) < {CHANNEL_DEPTH}"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH by_index AS MATERIALIZED ({by_index}),
            -- Iterative scans (settings.VECTOR_SEARCH_OPTIONS): filters and RLS do not shorten the list. When it is
            -- short anyway, either few rows pass the filters or the scan gave up (hnsw.max_scan_tuples) before
            -- finding them: at 1M memories a kinds=[fact] question worded like an outage report found none of the
            -- tenant's facts in 21k visited tuples. Either way an exact sort decides; "+ 0" keeps the planner off the
            -- index. The condition is planned as a one-time filter: the sort runs only when the list is short.
            whole AS MATERIALIZED (
                SELECT id, distance FROM by_index WHERE NOT {short}
                UNION ALL
                (SELECT id, embedding <=> %s::vector FROM memory_memory WHERE {where} AND {short}
                 ORDER BY (embedding <=> %s::vector) + 0 LIMIT {CHANNEL_DEPTH})
            ),
            near AS MATERIALIZED ({near}),
            statement AS (SELECT memory_id AS id, min(distance) AS distance FROM near GROUP BY memory_id),
            -- What one search found and the other did not: its whole text's distance (if it passes the filters),
            -- and the nearest statement of what only the whole texts found. None when no statement is near.
            other AS (
                SELECT id, embedding <=> %s::vector AS distance,
                       CASE WHEN id NOT IN (SELECT id FROM statement) THEN {statement_of} END AS statement
                FROM memory_memory
                WHERE id = ANY(ARRAY((SELECT id FROM statement EXCEPT SELECT id FROM whole)
                                     UNION ALL (SELECT id FROM whole EXCEPT SELECT id FROM statement)))
                  AND {where} AND EXISTS (SELECT FROM near)
            )
            SELECT 'whole', id, distance, NULL::float8 FROM whole
            UNION ALL SELECT 'statement', id, distance, NULL FROM statement
            UNION ALL SELECT 'other', id, distance, statement FROM other
            """,
            [*by_index_params, literal, *params, literal, *near_params, literal, *statement_params, *params],
        )
        found = cursor.fetchall()
    rows = [(memory_id, distance) for source, memory_id, distance, _ in found if source == "whole"]
    statement = {memory_id: distance for source, memory_id, distance, _ in found if source == "statement"}
    if not statement:  # no memory of several statements near the query: the whole texts' distances are the distances
        return sorted(rows, key=lambda row: row[1]), 0
    # A memory of several statements is at the mean of its whole text's distance and its nearest statement's.
    whole = dict(rows)
    for source, memory_id, distance, nearest in found:
        if source == "other":
            whole.setdefault(memory_id, distance)
            if nearest is not None:
                statement.setdefault(memory_id, nearest)
    measured = {m: (distance + statement[m]) / 2 if m in statement else distance for m, distance in whole.items()}
    by_passage = len(measured.keys() - {memory_id for memory_id, _ in rows})
    return sorted(measured.items(), key=lambda row: row[1])[:CHANNEL_DEPTH], by_passage


def text_channel(text: str, where: str, params: list) -> tuple[list[str], str]:
    """Memories that contain every term of the query (web-search syntax: "quoted phrases", or, -excluded).

    All terms, not any: on the evaluation set an any-term channel put loosely related notes first and cut recall@1
    from 0.455 (meaning alone) to 0.295; requiring every term keeps the channel for what words are good at, exact
    identifiers, numbers and names, and leaves paraphrases to the vectors.
    """
    with connection.cursor() as cursor:
        # One statement for the terms (the trace shows them) and the matches. The call is in the condition, not in
        # FROM: the planner folds it to a constant (it is immutable) and so sees its selectivity and uses the GIN
        # index; in FROM it scanned the whole tenant (73 ms instead of a few at 100k memories). A query of stop words
        # only has no terms and matches nothing.
        query = "websearch_to_tsquery('english', %s)"
        cursor.execute(
            f"(SELECT NULL, {query}::text) UNION ALL (SELECT id, NULL FROM memory_memory WHERE search @@ {query} AND"
            f" {where} ORDER BY ts_rank_cd(search, {query}) DESC, created_at DESC LIMIT {CHANNEL_DEPTH})",
            [text, text, *params, text],
        )
        found = cursor.fetchall()
    terms = next(terms for memory_id, terms in found if memory_id is None)
    return [memory_id for memory_id, _ in found if memory_id is not None], terms


def current_versions(ids: set[str], where: str = "TRUE", params: list | tuple = ()) -> dict[str, str]:
    """Map each found memory to the live head of its version chain that passes the filters (itself when live).

    A question is often phrased like an earlier version of its answer ("deploys on Monday" for a window that has
    moved to Thursday, in other words). The earlier version is evidence for the current one: it is searched, and
    what it earns goes to the current version, never to itself. Superseded versions are never returned this way.
    The walk stops where a chain comes back to a version it has passed (CYCLE): the lifecycle never writes such a
    loop, but a walk must not spin for ever on one. Without filters, annotate uses it to find what has
    replaced a probable successor in an open conflict.
    """
    if not ids:
        return {}
    org = rls.require_scope().org_id  # named for the partition (see filters)
    with connection.cursor() as cursor:
        # Each version is tested against the filters as the walk reads it (``passes``): a lookup per head afterwards
        # was planned as a scan of the tenant's live memories for each one (8.5 ms for 50 heads at 1,000 memories).
        # The walk's columns are named apart from memory_memory's, so the filters' bare names read the version.
        cursor.execute(
            f"""
            WITH RECURSIVE walk(w_start, w_id, w_status, w_next, w_passes) AS (
                SELECT id, id, status, superseded_by_id, ({where}) FROM memory_memory
                WHERE org_id = %s AND id = ANY(%s)
                UNION ALL
                SELECT w.w_start, m.id, m.status, m.superseded_by_id, ({where})
                FROM walk w JOIN memory_memory m ON m.org_id = %s AND m.id = w.w_next
                WHERE w.w_status = 'superseded'
            ) CYCLE w_id SET looped USING path
            SELECT w_start, w_id FROM walk WHERE w_status = 'live' AND w_passes
            """,
            [*params, org, list(ids), *params, org],
        )
        return dict(cursor.fetchall())


def to_heads(rows: list[tuple], heads: dict[str, str], via: dict[str, str]) -> list[tuple]:
    """Replace each row's memory by its current version, keeping the best rank of each; note where it came via."""
    seen, out = set(), []
    for memory_id, *rest in rows:
        head = heads.get(memory_id)
        if head is None or head in seen:
            continue
        seen.add(head)
        if head != memory_id:
            via.setdefault(head, memory_id)
        out.append((head, *rest))
    return out


def fuse(vector_rows: list[tuple[str, float]], text_ids: list[str]) -> dict[str, dict]:
    fused: dict[str, dict] = {}
    for rank, (memory_id, distance) in enumerate(vector_rows, start=1):
        fused[memory_id] = {"score": VECTOR_WEIGHT / (RRF_K + rank), "vector_rank": rank, "vector_distance": distance}
    for rank, memory_id in enumerate(text_ids, start=1):
        entry = fused.setdefault(memory_id, {"score": 0.0})
        entry["score"] += TEXT_WEIGHT / (RRF_K + rank)
        entry["text_rank"] = rank
    return fused
