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
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection
from django.utils import timezone

from plumbing.timing import StepTimer
from memory import disagreement, passages, selectors
from memory.models import Check, Link, Memory
from tenants import rls
from tenants.auth import Principal
from tenants.models import Project

CHANNEL_DEPTH = 50  # candidates taken from each channel before fusion
RRF_K = 60
DIRECTIONAL = "supersedes"  # the judge's relation that says which of two conflicting memories is newer truth
VECTOR_WEIGHT = 1.0
TEXT_WEIGHT = 1.0  # words count as much as meaning when every query term matches (see _text_channel)


@dataclass
class RecallQuery:
    query: str
    k: int = 10
    project: str | None = None
    scope: str = "all"
    kinds: list[str] | None = None
    include_history: bool = False
    as_of: datetime | None = None


@dataclass
class Hit:
    memory: Memory
    score: float
    vector_rank: int | None = None
    vector_distance: float | None = None
    text_rank: int | None = None
    flags: list[str] = field(default_factory=list)
    conflicts_with: list[str] = field(default_factory=list)
    supersede_reason: str | None = None
    partner_of: str | None = None  # set when the hit is only here as an open-conflict partner
    # Open conflicts judged "supersedes" (the newer probably replaces the older): ids of the other side.
    probably_replaces: list[str] = field(default_factory=list)
    probably_replaced_by: list[str] = field(default_factory=list)
    found_via: str | None = None  # an earlier version of this memory that matched the query
    # The retired probable successor(s) in an open conflict that this memory, their current version, stands in for.
    stands_for: list[str] = field(default_factory=list)
    # Read-time disagreement (memory/disagreement.py): other returned memories giving another value for the same
    # thing, and of those, the ones this newer memory says in words it updates, or that say they update it.
    disagrees_with: list[Memory] = field(default_factory=list)
    updates: dict[str, str] = field(default_factory=dict)  # older id -> the words that say this is an update
    updated_by: dict[str, str] = field(default_factory=dict)  # newer id -> those words
    disagreement_values: dict[str, str] = field(default_factory=dict)  # other id -> the values, described


@dataclass
class RecallResult:
    hits: list[Hit]
    warnings: list[tuple[Memory, Check]]
    trace: dict


def _searches_history(q: RecallQuery) -> bool:
    """Whether older versions are searched as evidence for their current version (see _current_versions)."""
    return q.as_of is None and not q.include_history


def _filters(q: RecallQuery, project: Project | None, *, statuses: list[str] | None = None) -> tuple[str, list]:
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
    return " AND ".join(where), params


def _vector_channel(vector: np.ndarray, where: str, params: list) -> tuple[list[tuple[str, float]], int]:
    """The memories nearest in meaning, by their whole text and by their statements (memory/passages.py), nearest
    first; and how many of them only a statement found."""
    literal = passages.vector_literal(vector)
    select = f"SELECT id, embedding <=> %s::vector AS distance FROM memory_memory WHERE {where}"
    with connection.cursor() as cursor:
        # Iterative scans (settings.VECTOR_SEARCH_OPTIONS): filters and RLS do not shorten the list.
        cursor.execute(f"{select} ORDER BY embedding <=> %s::vector LIMIT {CHANNEL_DEPTH}", [literal, *params, literal])
        rows = cursor.fetchall()
        if len(rows) < CHANNEL_DEPTH:
            # Short: either few rows pass the filters, or the iterative scan gave up (hnsw.max_scan_tuples) before
            # finding them. At 1M memories a kinds=[fact] question worded like an outage report found none of the
            # tenant's facts in 21k visited tuples. Either way an exact sort of the candidates decides; "+ 0" keeps
            # the planner off the index.
            cursor.execute(f"{select} ORDER BY (embedding <=> %s::vector) + 0 LIMIT {CHANNEL_DEPTH}",
                           [literal, *params, literal])
            rows = cursor.fetchall()
    org_id = rls.require_scope().org_id
    near = passages.nearest_memories(literal, org_id, 2 * CHANNEL_DEPTH)
    if not near:  # no memory of several statements near the query: the whole texts' distances are the distances
        return sorted(rows, key=lambda row: row[1]), 0
    # A memory of several statements is at the mean of its whole text's distance and its nearest statement's.
    whole = dict(rows)
    whole |= passages.whole_distances(literal, [m for m in near if m not in whole], where, params)
    statement = near | passages.nearest_passages(literal, org_id, [m for m in whole if m not in near])
    measured = {m: (distance + statement[m]) / 2 if m in statement else distance for m, distance in whole.items()}
    by_passage = len(measured.keys() - {memory_id for memory_id, _ in rows})
    return sorted(measured.items(), key=lambda row: row[1])[:CHANNEL_DEPTH], by_passage


def _text_channel(text: str, where: str, params: list) -> tuple[list[str], str]:
    """Memories that contain every term of the query (web-search syntax: "quoted phrases", or, -excluded).

    All terms, not any: on the evaluation set an any-term channel put loosely related notes first and cut recall@1
    from 0.455 (meaning alone) to 0.295; requiring every term keeps the channel for what words are good at, exact
    identifiers, numbers and names, and leaves paraphrases to the vectors.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT websearch_to_tsquery('english', %s)::text", [text])
        terms = cursor.fetchone()[0]
        if not terms:
            return [], ""
        # The query goes in as a constant, not a function call, so the planner sees its selectivity and uses the
        # GIN index (with the call in FROM it scanned the whole tenant: 73 ms instead of a few at 100k memories).
        cursor.execute(
            f"SELECT id FROM memory_memory WHERE search @@ %s::tsquery AND {where}"
            f" ORDER BY ts_rank_cd(search, %s::tsquery) DESC, created_at DESC LIMIT {CHANNEL_DEPTH}",
            [terms, *params, terms],
        )
        return [row[0] for row in cursor.fetchall()], terms


def _current_versions(ids: set[str], where: str = "TRUE", params: list | tuple = ()) -> dict[str, str]:
    """Map each found memory to the live head of its version chain that passes the filters (itself when live).

    A question is often phrased like an earlier version of its answer ("deploys on Monday" for a window that has
    moved to Thursday, in other words). The earlier version is evidence for the current one: it is searched, and
    what it earns goes to the current version, never to itself. Superseded versions are never returned this way.
    The walk stops where a chain comes back to a version it has passed (CYCLE): the lifecycle never writes such a
    loop, but a walk must not spin for ever on one (issue 11). Without filters, _annotate uses it to find what has
    replaced a probable successor in an open conflict.
    """
    if not ids:
        return {}
    org = rls.require_scope().org_id  # named for the partition (see _filters)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH RECURSIVE walk(start, id, status, next) AS (
                SELECT id, id, status, superseded_by_id FROM memory_memory WHERE org_id = %s AND id = ANY(%s)
                UNION ALL
                SELECT w.start, m.id, m.status, m.superseded_by_id
                FROM walk w JOIN memory_memory m ON m.org_id = %s AND m.id = w.next
                WHERE w.status = 'superseded'
            ) CYCLE id SET looped USING path
            SELECT w.start, w.id FROM walk w
            WHERE w.status = 'live' AND EXISTS (SELECT 1 FROM memory_memory WHERE id = w.id AND {where})
            """,
            [org, list(ids), org, *params],
        )
        return dict(cursor.fetchall())


def _to_heads(rows: list[tuple], heads: dict[str, str], via: dict[str, str]) -> list[tuple]:
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


def _fuse(vector_rows: list[tuple[str, float]], text_ids: list[str]) -> dict[str, dict]:
    fused: dict[str, dict] = {}
    for rank, (memory_id, distance) in enumerate(vector_rows, start=1):
        fused[memory_id] = {"score": VECTOR_WEIGHT / (RRF_K + rank), "vector_rank": rank, "vector_distance": distance}
    for rank, memory_id in enumerate(text_ids, start=1):
        entry = fused.setdefault(memory_id, {"score": 0.0})
        entry["score"] += TEXT_WEIGHT / (RRF_K + rank)
        entry["text_rank"] = rank
    return fused


def _project(principal: Principal, slug: str | None) -> Project | None:
    return selectors.project_for_member(user=principal.user, slug=slug) if slug else None


def memory_recall(
    *, principal: Principal, q: RecallQuery, vector: np.ndarray, steps: StepTimer | None = None
) -> RecallResult:
    """``vector`` is ``embed_one(q.query)``, computed by the entry point before its transaction. ``steps`` carries
    the entry point's own laps (embedding, identity) into the trace."""
    rls.require_scope()  # raw SQL below passes no tenant manager: fail closed here
    steps = steps or StepTimer()
    project = _project(principal, q.project)
    where, params = _filters(q, project, statuses=None if _searches_history(q) or q.include_history else ["live"])
    vector_rows, by_passage = _vector_channel(vector, where, params)
    steps.lap("vector_channel")
    text_ids, terms = _text_channel(q.query, where, params)
    steps.lap("text_channel")
    via: dict[str, str] = {}
    if _searches_history(q):
        live_where, live_params = _filters(q, project, statuses=["live"])
        heads = _current_versions({i for i, _ in vector_rows} | set(text_ids), live_where, live_params)
        vector_rows = _to_heads(vector_rows, heads, via)
        text_ids = [i for i, _ in _to_heads([(i, None) for i in text_ids], heads, via)]
    fused = _fuse(vector_rows, text_ids)
    for memory_id, older in via.items():
        if memory_id in fused:
            fused[memory_id]["found_via"] = older
    ranked = sorted(fused.items(), key=lambda item: item[1]["score"], reverse=True)[: q.k]
    steps.lap("fusion")
    hits = _hydrate(ranked, q)
    steps.lap("hydration")
    warnings, kept_both = _annotate(hits, q, _filters(q, project, statuses=["live"]))
    # Vectors only for what could disagree: live memories that state a value.
    valued = [hit.memory for hit in hits if hit.memory.status == Memory.Status.LIVE
              and any(sentence.values for sentence in disagreement.sentences(hit.memory.content))]
    vectors = passages.statement_vectors(rls.require_scope().org_id, valued) if len(valued) > 1 else {}
    meaning = disagreement.Meaning(vector, vectors)
    disagreements = _disagreements(hits, q.query, kept_both, meaning, reorder=not q.include_history)
    steps.lap("annotation")
    trace = {
        "query": q.query,
        "filters": {
            "lifecycle": "live+superseded" if q.include_history else "live",
            "earlier_versions": "searched as evidence for their current version" if _searches_history(q) else None,
            "as_of": q.as_of.isoformat() if q.as_of else None,
            "scope": q.scope,
            "project": q.project,
            "kinds": q.kinds,
            "visibility": "row-level security: your personal memories and your projects' memories",
        },
        "channels": {
            "vector": {
                "candidates": len(vector_rows),
                "passages": by_passage,
                "method": "pgvector cosine: HNSW index with iterative scan, or an exact sort when the planner expects"
                          " few candidates; a memory of several statements at the mean of its whole text's distance"
                          " and its nearest statement's",
            },
            "text": {"candidates": len(text_ids), "tsquery": terms},
        },
        "fusion": f"reciprocal rank fusion: {VECTOR_WEIGHT}/({RRF_K}+vector_rank) + {TEXT_WEIGHT}/({RRF_K}+text_rank)",
        "age_penalty": None,
        "conflict_order": {
            "rule": f"of two memories in an open conflict judged '{DIRECTIONAL}', the newer (or the current version"
                    " that has replaced it since) comes right before the older; other conflicts keep relevance order",
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
    return RecallResult(hits=hits, warnings=warnings, trace=trace)


def _disagreements(hits: list[Hit], query: str, kept_both: set[frozenset[str]], meaning: disagreement.Meaning,
                   reorder: bool) -> list[dict]:
    """Flag the returned live memories that disagree (memory/disagreement.py) and, unless the reader asked for
    history (``reorder`` false: a question about the past wants the older value), put a newer one that says it is
    an update right before what it updates. Pairs in an open conflict (or whose current version stands in for one)
    are shown as that, pairs a person kept both of are settled, and superseded versions have their successor.
    Returns the pairs for the trace."""
    live = {hit.memory.id: hit for hit in hits if hit.memory.status == Memory.Status.LIVE}
    related = kept_both | {frozenset((hit.memory.id, other)) for hit in live.values()
                           for other in hit.conflicts_with + hit.probably_replaces}
    by_time = sorted(live.values(), key=lambda hit: (hit.memory.created_at, hit.memory.id))
    pairs = []
    for pair in disagreement.find(query, [(hit.memory.id, hit.memory.content) for hit in by_time], meaning):
        if frozenset((pair.newer, pair.older)) in related:
            continue
        older, newer, found = live[pair.older], live[pair.newer], pair.disagreement
        described = disagreement.describe(found.values)
        older.disagrees_with.append(newer.memory)
        newer.disagrees_with.append(older.memory)
        older.disagreement_values[newer.memory.id] = newer.disagreement_values[older.memory.id] = described
        if found.marker:
            newer.updates[older.memory.id] = older.updated_by[newer.memory.id] = found.marker
        pairs.append({"newer": newer.memory.id, "older": older.memory.id, "values": described,
                      "update_marker": found.marker})
    for hit in hits:
        if hit.disagrees_with:
            hit.flags.append("disagrees")
    # A newer memory that says it is an update goes right before the first of those it updates (oldest update first,
    # so a third version ends up before the second, which is before the first).
    for pair in sorted((p for p in pairs if p["update_marker"] and reorder),
                       key=lambda p: live[p["newer"]].memory.created_at):
        position = {hit.memory.id: i for i, hit in enumerate(hits)}
        newer, older = position[pair["newer"]], position[pair["older"]]
        if newer > older:
            hits.insert(older, hits.pop(newer))
    return pairs


def _load(ids: list[str]) -> dict[str, Memory]:
    return {m.id: m for m in selectors.with_relations(Memory.objects.filter(pk__in=ids))}


def _hydrate(ranked: list[tuple[str, dict]], q: RecallQuery) -> list[Hit]:
    memories = _load([memory_id for memory_id, _ in ranked])
    hits = [Hit(memory=memories[memory_id], **entry) for memory_id, entry in ranked if memory_id in memories]
    return _current_versions_first(hits, q) if q.include_history else hits


def _superseded_then(memory_status: str, invalidated_at: datetime | None, q: RecallQuery) -> bool:
    """Superseded at the time the query reads the store (now, or ``as_of``)."""
    return memory_status == Memory.Status.SUPERSEDED and (
        q.as_of is None or (invalidated_at is not None and invalidated_at <= q.as_of)
    )


def _current_versions_first(hits: list[Hit], q: RecallQuery) -> list[Hit]:
    """A superseded version never ranks above its current version when both are returned (API.md).

    Fusion can rank an older version higher (it is often worded more like the question). Such a version moves to
    right after its current version, several in chain order, newest first; every other hit keeps its relevance order.
    The current version is the first one along the chain that was not superseded at the time read (so with
    ``as_of``, the version that was live then).
    """
    older = [hit.memory.id for hit in hits if _superseded_then(hit.memory.status, hit.memory.invalidated_at, q)]
    if not older:
        return hits
    org = rls.require_scope().org_id  # named for the partition (see _filters)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH RECURSIVE walk(start, id, status, invalidated_at, next, depth) AS (
                SELECT id, id, status, invalidated_at, superseded_by_id, 0 FROM memory_memory
                WHERE org_id = %s AND id = ANY(%s)
                UNION ALL
                SELECT w.start, m.id, m.status, m.invalidated_at, m.superseded_by_id, w.depth + 1
                FROM walk w JOIN memory_memory m ON m.org_id = %s AND m.id = w.next
                WHERE w.status = 'superseded'
            ) CYCLE id SET looped USING path
            SELECT start, id, status, invalidated_at, depth FROM walk WHERE depth > 0 AND NOT looped
            ORDER BY start, depth
            """,
            [org, older, org],
        )
        current: dict[str, tuple[str, int]] = {}  # superseded hit -> (its current version, steps away)
        for start, memory_id, status, invalidated_at, depth in cursor.fetchall():
            if start not in current and not _superseded_then(status, invalidated_at, q):
                current[start] = (memory_id, depth)
    position = {hit.memory.id: i for i, hit in enumerate(hits)}
    kept: list[Hit] = []
    moved: dict[str, list[tuple[int, Hit]]] = {}
    for i, hit in enumerate(hits):
        head, depth = current.get(hit.memory.id, (None, 0))
        if head is not None and position.get(head, -1) > i:
            moved.setdefault(head, []).append((depth, hit))
        else:
            kept.append(hit)
    ordered: list[Hit] = []
    for hit in kept:
        ordered.append(hit)
        ordered.extend(older_hit for _, older_hit in sorted(moved.get(hit.memory.id, []), key=lambda m: m[0]))
    return ordered


def _as_it_stood(memory: Memory, as_of: datetime) -> None:
    """Show a memory as it was at ``as_of`` (in memory only, never saved): a retirement after then had not happened.

    Nor had it closed the loop: a loop closes only by a supersede, which sets closed_by to the successor (restore
    reopens it by the same test).
    """
    if memory.invalidated_at is None or memory.invalidated_at <= as_of:
        return
    if memory.loop == Memory.Loop.CLOSED and memory.closed_by_id == memory.superseded_by_id:
        memory.loop, memory.closed_by = Memory.Loop.OPEN, None
    memory.status = Memory.Status.LIVE
    memory.superseded_by = None
    memory.invalidated_at = memory.invalidated_reason = memory.invalidated_by = None


def _with_partners(hits: list[Hit], conflicts: list[tuple[str, str, str]], partner_memories: dict[str, Memory], k: int) -> list[Hit]:
    """Each hit with its open-conflict partners, ``k`` in all, and the judge's direction applied (API.md).

    A partner that is not a hit of its own goes right after its hit; but of two memories in an open conflict judged ``supersedes`` (the newer
    probably replaces the older), the newer goes right before the older, at the better of their two places. That
    ranks without retiring: both stay live and flagged ``in_conflict`` until a person resolves the conflict or a
    writer declares the supersede. A conflict without a direction (contradicts, duplicate) keeps relevance order.
    Partners count towards ``k`` and push the lowest-ranked hits out.
    """
    pool = {hit.memory.id: hit for hit in hits}
    partners = selectors.conflict_partners(conflicts)
    newer_of: dict[str, list[str]] = {}
    for older, newer, relation in conflicts:
        if relation == DIRECTIONAL:
            newer_of.setdefault(older, []).append(newer)
    ordered: list[Hit] = []
    placed: set[str] = set()

    def place(memory_id: str, partner_of: Hit | None) -> None:
        if memory_id in placed or len(ordered) == k:
            return
        hit = pool.get(memory_id)
        if hit is None:
            if memory_id not in partner_memories:
                return  # not live, or not visible
            hit = Hit(memory=partner_memories[memory_id], score=partner_of.score, partner_of=partner_of.memory.id)
        placed.add(memory_id)  # before the partners: a cycle of conflicts ends instead of recursing for ever
        for newer in newer_of.get(memory_id, []):
            place(newer, hit)
        if len(ordered) < k:
            ordered.append(hit)
        for partner in partners.get(memory_id, []):
            if partner not in pool:  # a partner that is a hit of its own keeps its own place
                place(partner, hit)

    for hit in hits:
        place(hit.memory.id, None)
    present = {hit.memory.id: hit for hit in ordered}
    for older, newers in newer_of.items():
        for newer in newers:
            if older in present and newer in present:
                present[newer].probably_replaces.append(older)
                present[older].probably_replaced_by.append(newer)
    return ordered


def _passing(ids: set[str], filters: tuple[str, list]) -> set[str]:
    """Those of ``ids`` that pass the query's own filters (_filters): a partner comes along only where the caller
    asked to look, so `scope: personal` or `kinds: [fact]` never brings back a project memory or a preference."""
    if not ids:
        return set()
    where, params = filters
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM memory_memory WHERE {where} AND id = ANY(%s)", [*params, list(ids)])
        return {row[0] for row in cursor.fetchall()}


def _annotate(hits: list[Hit], q: RecallQuery, filters: tuple[str, list]
              ) -> tuple[list[tuple[Memory, Check]], set[frozenset[str]]]:
    """Flags, successors' reasons, open-conflict partners (``_with_partners``) and failed-check warnings; returns the
    warnings and the pairs a person kept both of.

    A partner that does not fit in ``k``, or outside the query's filters, is left out; its hit still says
    ``in_conflict`` and ``conflicts_with``.
    """
    now = q.as_of or timezone.now()
    ids = [hit.memory.id for hit in hits]
    conflicts, kept_both = selectors.conflicts_of(ids)
    partners = selectors.conflict_partners(conflicts)
    # A probable successor that a later version has replaced since hands its place in the order to that version:
    # (v1, v2) open and v2 retired by v3 orders v3 before v1, or the oldest version would outrank the current one.
    directional = {newer for _, newer, relation in conflicts if relation == DIRECTIONAL}
    heads = {newer: head for newer, head in _current_versions(directional).items() if head != newer}
    ordering = [(older, heads.get(newer, newer), relation) for older, newer, relation in conflicts
                if heads.get(newer) != older]
    ordering_partners = selectors.conflict_partners(ordering)
    missing = _passing({p for i in ids for p in ordering_partners.get(i, []) if p not in ids}, filters)
    partner_memories = {m_id: m for m_id, m in _load(list(missing)).items() if m.is_live}
    hits[:] = _with_partners(hits, ordering, partner_memories, q.k)
    for hit in hits:
        hit.stands_for = [newer for newer, head in heads.items() if head == hit.memory.id]

    all_ids = [hit.memory.id for hit in hits]
    failed = selectors.failing_checks(all_ids)
    if q.as_of is not None:
        for hit in hits:
            _as_it_stood(hit.memory, q.as_of)
    superseded_ids = [hit.memory.id for hit in hits if hit.memory.status == Memory.Status.SUPERSEDED]
    reasons = dict(  # only history has superseded hits: a plain recall skips this query
        Link.objects.filter(dst_id__in=superseded_ids, type=Link.Type.SUPERSEDES, retired_dst=True,
                            undone_at__isnull=True).values_list("dst_id", "reason")
    ) if superseded_ids else {}
    for hit in hits:
        memory = hit.memory
        superseded = memory.status == Memory.Status.SUPERSEDED
        flags = {
            "expired": memory.valid_until is not None and memory.valid_until < now,
            "superseded": superseded,
            "in_conflict": memory.id in partners,
            "provisional": not memory.authoritative,
            "open_loop": memory.loop == Memory.Loop.OPEN,
            "failed_check": memory.id in failed,
        }
        hit.flags = [name for name, on in flags.items() if on]
        hit.conflicts_with = list(partners.get(memory.id, []))
        hit.supersede_reason = reasons.get(memory.id) if superseded else None
    return [(hit.memory, failed[hit.memory.id]) for hit in hits if hit.memory.id in failed], kept_both
