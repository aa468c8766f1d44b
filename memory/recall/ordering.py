"""recall's order and annotations: flags, open-conflict partners brought along and placed, superseded versions after
their current one, the store as it stood at ``as_of``, and disagreements between the returned memories."""
from datetime import datetime

from django.db import connection
from django.utils import timezone

from memory import disagreement, selectors
from memory.models import Check, Link, Memory
from memory.recall.channels import current_versions
from memory.recall.query import Hit, RecallQuery
from memory.vocabulary import Flag, Relation
from tenants import rls

DIRECTIONAL = Relation.SUPERSEDES  # the judge's relation that says which of two conflicting memories is newer truth


def load(ids: list[str]) -> dict[str, Memory]:
    return selectors.memories_shown(ids)


def disagreements(hits: list[Hit], query: str, kept_both: set[frozenset[str]], meaning: disagreement.Meaning,
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
            hit.flags.append(Flag.DISAGREES)
    # A newer memory that says it is an update goes right before the first of those it updates (oldest update first,
    # so a third version ends up before the second, which is before the first).
    for pair in sorted((p for p in pairs if p["update_marker"] and reorder),
                       key=lambda p: live[p["newer"]].memory.created_at):
        position = {hit.memory.id: i for i, hit in enumerate(hits)}
        newer, older = position[pair["newer"]], position[pair["older"]]
        if newer > older:
            hits.insert(older, hits.pop(newer))
    return pairs


def _superseded_then(memory_status: str, invalidated_at: datetime | None, q: RecallQuery) -> bool:
    """Superseded at the time the query reads the store (now, or ``as_of``)."""
    return memory_status == Memory.Status.SUPERSEDED and (
        q.as_of is None or (invalidated_at is not None and invalidated_at <= q.as_of)
    )


def current_versions_first(hits: list[Hit], q: RecallQuery) -> list[Hit]:
    """A superseded version never ranks above its current version when both are returned (API.md).

    Fusion can rank an older version higher (it is often worded more like the question). Such a version moves to
    right after its current version, several in chain order, newest first; every other hit keeps its relevance order.
    The current version is the first one along the chain that was not superseded at the time read (so with
    ``as_of``, the version that was live then).
    """
    older = [hit.memory.id for hit in hits if _superseded_then(hit.memory.status, hit.memory.invalidated_at, q)]
    if not older:
        return hits
    org = rls.require_scope().org_id  # named for the partition (see filters)
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


def as_it_stood(memory: Memory, as_of: datetime) -> None:
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


def _with_partners(hits: list[Hit], conflicts: list[tuple[str, str, str]], partner_memories: dict[str, Memory],
                   k: int) -> list[Hit]:
    """Each hit with its open-conflict partners, ``k`` in all, and the judge's direction applied (API.md).

    A partner that is not a hit of its own goes right after its hit; but of two memories in an open conflict judged
    ``supersedes`` (the newer probably replaces the older), the newer goes right before the older, at the better of
    their two places, when the query found it too or it is typed (``_typed``). A note the query did not find stays a
    partner after its hit: on BEAM-100K the judge's direction put such a turn, about something else, first on 5
    questions whose answer had ranked first (and helped on none), on the long chats on 5 (bench/retrieval.py).
    That ranks without retiring: both stay live and flagged ``in_conflict`` until a person resolves the conflict or a
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
            if newer in pool or _typed(partner_memories.get(newer)):
                place(newer, hit)
        if len(ordered) < k:
            ordered.append(hit)
        for partner in partners.get(memory_id, []):
            if partner not in pool:  # a partner that is a hit of its own keeps its own place
                place(partner, hit)

    for hit in hits:
        place(hit.memory.id, None)
    present = {hit.memory.id: hit for hit in ordered}
    position = {hit.memory.id: i for i, hit in enumerate(ordered)}
    for older, newers in newer_of.items():
        for newer in newers:
            if older in present and newer in present and position[newer] < position[older]:
                present[newer].probably_replaces.append(older)
                present[older].probably_replaced_by.append(newer)
    return ordered


def _typed(memory: Memory | None) -> bool:
    """A memory its writer gave a kind (a fact, a decision, ...), not a note: a turn of a conversation is often about
    several things, and the judge's verdict on two turns may be about another of them than the query asks."""
    return memory is not None and memory.kind != Memory.Kind.NOTE


def _passing(ids: set[str], filters: tuple[str, list]) -> set[str]:
    """Those of ``ids`` that pass the query's own filters (filters): a partner comes along only where the caller
    asked to look, so `scope: personal` or `kinds: [fact]` never brings back a project memory or a preference."""
    if not ids:
        return set()
    where, params = filters
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM memory_memory WHERE {where} AND id = ANY(%s)", [*params, list(ids)])
        return {row[0] for row in cursor.fetchall()}


def annotate(hits: list[Hit], q: RecallQuery, filters: tuple[str, list]
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
    heads = {newer: head for newer, head in current_versions(directional).items() if head != newer}
    ordering = [(older, heads.get(newer, newer), relation) for older, newer, relation in conflicts
                if heads.get(newer) != older]
    ordering_partners = selectors.conflict_partners(ordering)
    missing = _passing({p for i in ids for p in ordering_partners.get(i, []) if p not in ids}, filters)
    partner_memories = {m_id: m for m_id, m in load(list(missing)).items() if m.is_live}
    hits[:] = _with_partners(hits, ordering, partner_memories, q.k)
    for hit in hits:
        hit.stands_for = [newer for newer, head in heads.items() if head == hit.memory.id]

    all_ids = [hit.memory.id for hit in hits]
    failed = selectors.failing_checks(all_ids)
    if q.as_of is not None:
        for hit in hits:
            as_it_stood(hit.memory, q.as_of)
    superseded_ids = [hit.memory.id for hit in hits if hit.memory.status == Memory.Status.SUPERSEDED]
    reasons = dict(  # only history has superseded hits: a plain recall skips this query
        Link.objects.filter(dst_id__in=superseded_ids, type=Link.Type.SUPERSEDES, retired_dst=True,
                            undone_at__isnull=True).values_list("dst_id", "reason")
    ) if superseded_ids else {}
    for hit in hits:
        memory = hit.memory
        superseded = memory.status == Memory.Status.SUPERSEDED
        hit.flags = selectors.flags_of(memory, in_conflict=memory.id in partners, failed_check=memory.id in failed,
                                       now=now)
        hit.conflicts_with = list(partners.get(memory.id, []))
        hit.supersede_reason = reasons.get(memory.id) if superseded else None
    return [(hit.memory, failed[hit.memory.id]) for hit in hits if hit.memory.id in failed], kept_both
