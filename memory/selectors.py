"""Every non-trivial read of the memory domain. Row-level security decides visibility; these decide order."""
import base64
import binascii
import heapq
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory import keys, passages
from memory.models import Check, Conflict, Event, Link, Memory, Verdict
from memory.vocabulary import Flag, Resolution
from plumbing import rows
from plumbing.errors import Code, Invalid, NotFound
from tenants import ids, rls
from tenants.models import Project, ProjectMember, User

SIMILAR_LIMIT = 10
PREVIEW_CHARS = 200


def same_place(*, owner: User, scope: str, project: Project | None, namespace: list[str] | None) -> tuple[str, list]:
    """Where a write without a key finds its duplicate: live memories without a key of the same owner, scope,
    project and namespace (conditions on memory_memory, with their parameters)."""
    where = ["org_id = %s", "owner_id = %s", "scope = %s", "status = 'live'", "key_hash IS NULL"]
    params = [rls.require_scope().org_id, owner.id, scope]
    where.append("project_id = %s" if project else "project_id IS NULL")
    params += [project.id] if project else []
    where.append("namespace = %s::text[]" if namespace is not None else "namespace IS NULL")
    params += [namespace] if namespace is not None else []
    return " AND ".join(where), params


MEMORY_COLUMNS = rows.fields(Memory, without=("embedding",))  # the embedding loads only if read


def exact_duplicate(place: tuple[str, list], digest: str) -> Memory | None:
    """The oldest memory of ``place`` with the same normalized content. Written out, like the next one: the
    queryset's compilation cost more than the query."""
    return _first(f"{place[0]} AND content_hash = %s ORDER BY created_at", [*place[1], digest])


def nearest_in_session(place: tuple[str, list], session_id: str, vector: np.ndarray) -> Memory | None:
    """The memory of ``place`` and the session nearest to ``vector``, with its ``distance``."""
    literal = passages.vector_literal(vector)
    return _first(f"{place[0]} AND session_id = %s ORDER BY embedding <=> %s::vector", [*place[1], session_id, literal],
                  distance_to=literal)


def _first(where_and_order: str, params: list, distance_to: str | None = None) -> Memory | None:
    distance = ", embedding <=> %s::vector" if distance_to else ""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.select_list('memory_memory', MEMORY_COLUMNS)}{distance} FROM memory_memory"
                       f" WHERE {where_and_order} LIMIT 1", [*([distance_to] if distance_to else []), *params])
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    memory = rows.take(values, Memory, MEMORY_COLUMNS)
    if distance_to:
        memory.distance = values[0]
    return memory


def similar_query(*, owner: User, project: Project | None, exclude_id: str, literal: str,
                  exact: bool = False) -> tuple[str, list]:
    """What similar_existing runs (also what `make bench ARGS=load` explains): the caller's own live memories,
    personal plus the project written into, nearest to the vector ``literal``. ``exact``: "+ 0" keeps the planner off
    the HNSW index, for an exact scan of the few candidates found by the btree index. Written out, not built by the
    ORM: compiling the queryset cost about as much as running it. No join for the project's slug: it can only be
    ``project`` (a join before the sort cost 79 ms at 4k rows)."""
    place, params = "scope = 'personal'", [rls.require_scope().org_id]
    if project is not None:
        place, params = f"({place} OR (project_id = %s AND scope = 'project'))", [*params, project.id]
    order = "(embedding <=> %s::vector) + 0" if exact else "embedding <=> %s::vector"
    sql = (f"SELECT id, kind, scope, project_id, content, created_at, embedding <=> %s::vector FROM memory_memory"
           f" WHERE org_id = %s AND {place} AND owner_id = %s AND status = 'live' AND id <> %s"
           f" ORDER BY {order} LIMIT {SIMILAR_LIMIT}")
    return sql, [literal, *params, owner.id, exclude_id, literal]


def similar_existing(*, owner: User, project: Project | None, vector: np.ndarray, exclude_id: str) -> list[dict]:
    """The caller's own live memories nearest to a write: personal ones plus the project written into.

    Ranked by distance, at most ten, no similarity window. Exactly min(10, candidates): if the approximate index
    scan (iterative: settings.VECTOR_SEARCH_OPTIONS) comes back short, an exact scan of the few candidates decides.
    """
    literal = passages.vector_literal(vector)
    with connection.cursor() as cursor:
        cursor.execute(*similar_query(owner=owner, project=project, exclude_id=exclude_id, literal=literal))
        found = cursor.fetchall()
        if len(found) < SIMILAR_LIMIT:
            cursor.execute(*similar_query(owner=owner, project=project, exclude_id=exclude_id, literal=literal,
                                          exact=True))
            found = cursor.fetchall()
    now = timezone.now()
    return [
        {
            "id": memory_id,
            "kind": kind,
            "scope": scope,
            "project": project.slug if project_id else None,
            "content_preview": content[:PREVIEW_CHARS],
            "distance": round(float(distance), 4),
            "age_seconds": int((now - created_at).total_seconds()),
        }
        for memory_id, kind, scope, project_id, content, created_at, distance in found
    ]


PROJECT_COLUMNS = rows.fields(Project)


def project_for_member(*, user: User, slug: str) -> Project:
    """A project the user belongs to. Any other answers like a project that does not exist (API.md)."""
    # Written out: the queryset's compilation cost more than the query.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.select_list('p', PROJECT_COLUMNS)} FROM {Project._meta.db_table} p"
                       f" WHERE p.slug = %s AND EXISTS (SELECT 1 FROM {ProjectMember._meta.db_table} m"
                       " WHERE m.project_id = p.id AND m.user_id = %s) ORDER BY p.id LIMIT 1", [slug, user.id])
        row = cursor.fetchone()
    project = rows.take(list(row), Project, PROJECT_COLUMNS) if row else None
    if project is None:
        raise NotFound(Code.NOT_FOUND, "No such project.", {"project": slug})
    return project


SHOWN_PARTS = ((Memory, MEMORY_COLUMNS), (User, rows.fields(User)), (Project, PROJECT_COLUMNS))


def memories_shown(ids: list[str], *, lock: bool = False) -> dict[str, Memory]:
    """The visible ones of ``ids`` with their owner and project, what an answer shows (``with_relations``, written
    out: recall's hits and remember's targets, on every call); ``lock``: FOR UPDATE, in id order
    (lifecycle.lock_memories)."""
    if not ids:
        return {}
    columns = ", ".join(rows.select_list(alias, fields) for alias, (_, fields) in zip("mup", SHOWN_PARTS, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {columns} FROM memory_memory m JOIN {User._meta.db_table} u ON u.id = m.owner_id"
            f" LEFT JOIN {Project._meta.db_table} p ON p.id = m.project_id WHERE m.org_id = %s AND m.id = ANY(%s)"
            + (" ORDER BY m.id FOR UPDATE OF m" if lock else ""),
            [rls.require_scope().org_id, sorted(set(ids))],
        )
        found = cursor.fetchall()
    memories = {}
    for row in found:
        values = list(row)
        memory, owner, project = (rows.take(values, model, fields) for model, fields in SHOWN_PARTS)
        rows.attach(memory, owner=owner, project=project)
        memories[memory.id] = memory
    return memories


def with_relations(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    return memories.select_related("owner", "project").defer("embedding")


def memory_get(*, memory_id: str) -> Memory:
    memory = with_relations(Memory.objects.filter(pk=memory_id)).first()
    if memory is None:
        raise NotFound(Code.NOT_FOUND, "No such memory.")
    return memory


def memory_chain(*, memory: Memory) -> list[Memory]:
    """Every version connected to this one through supersedes links that retired something, oldest first: each
    version before the one that replaced it (_in_replacement_order), so the current version comes last even when a
    review kept the older memory and retired the newer one.

    UNION, not UNION ALL: a version already reached is not walked again, so even a loop of links ends.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH RECURSIVE chain(id) AS (
                SELECT %s::varchar
                UNION
                SELECT CASE WHEN l.src_id = c.id THEN l.dst_id ELSE l.src_id END
                FROM memory_link l JOIN chain c ON l.src_id = c.id OR l.dst_id = c.id
                WHERE l.type = 'supersedes' AND l.retired_dst AND l.undone_at IS NULL
            )
            SELECT id FROM chain
            """,
            [memory.id],
        )
        ids = [row[0] for row in cursor.fetchall()]
    versions = list(with_relations(Memory.objects.filter(pk__in=ids)).order_by("created_at", "id"))
    replaced = Link.objects.filter(type=Link.Type.SUPERSEDES, retired_dst=True, undone_at__isnull=True,
                                   src_id__in=ids, dst_id__in=ids).values_list("dst_id", "src_id")
    return _in_replacement_order(versions, list(replaced))


def _in_replacement_order(versions: list[Memory], replaced: list[tuple[str, str]]) -> list[Memory]:
    """``versions`` (in creation order) with each one before its successors; (retired, successor) pairs. Creation
    order decides between versions that no link orders (two replaced by one write) and inside a loop of links."""
    position = {m.id: i for i, m in enumerate(versions)}
    successors: dict[str, list[str]] = {m.id: [] for m in versions}
    waiting = dict.fromkeys(position, 0)  # predecessors not yet listed
    for retired, successor in replaced:
        if retired != successor:
            successors[retired].append(successor)
            waiting[successor] += 1
    ready = [position[i] for i, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    ordered: list[Memory] = []
    while ready:
        version = versions[heapq.heappop(ready)]
        ordered.append(version)
        for successor in successors[version.id]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                heapq.heappush(ready, position[successor])
    listed = {m.id for m in ordered}
    return ordered + [m for m in versions if m.id not in listed]  # a loop of links: creation order


def memory_links(*, memory: Memory) -> list[Link]:
    return list(Link.objects.filter(Q(src=memory) | Q(dst=memory)).order_by("created_at", "id"))


def memory_events(*, memory: Memory) -> list[Event]:
    return list(Event.objects.filter(memory=memory).select_related("actor").order_by("created_at", "id"))


LIFECYCLES = {"live", "superseded", "forgotten", "all"}


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        created_at, memory_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|", 1)
        when = datetime.fromisoformat(created_at)
        # Only what _encode_cursor writes: an aware time and a memory id (a NUL would reach Postgres as a 500).
        if when.tzinfo is None or not ids.is_id(memory_id, "mem"):
            raise ValueError(cursor)
        return when, memory_id
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise Invalid(Code.INVALID, "cursor: not a cursor returned by this endpoint.", {"fields": {"cursor": ["Invalid."]}})


def _encode_cursor(memory: Memory) -> str:
    return base64.urlsafe_b64encode(f"{memory.created_at.isoformat()}|{memory.id}".encode()).decode()


def memory_feed(
    *, user: User, lifecycle: str, kind: str | None, project_slug: str | None, scope: str | None, limit: int,
    cursor: str | None, namespace: list[str] | None = None, key: str | None = None,
    namespace_prefix: list[str] | None = None,
) -> tuple[list[Memory], str | None]:
    """Newest first, keyset-paginated on (created_at, id): stable while new memories arrive."""
    memories = with_relations(Memory.objects.all())
    if key is not None and namespace:
        memories = memories.filter(key_hash=keys.key_hash(namespace, key))  # every version of the key, indexed
    elif key is not None:
        memories = memories.filter(key=key)
    if namespace:
        memories = memories.filter(namespace=namespace)
    if namespace_prefix:
        memories = memories.filter(**{f"namespace__0_{len(namespace_prefix)}": namespace_prefix})
    if lifecycle != "all":
        memories = memories.filter(status=lifecycle)
    if kind:
        memories = memories.filter(kind=kind)
    if scope:
        memories = memories.filter(scope=scope)
    if project_slug:
        memories = memories.filter(project=project_for_member(user=user, slug=project_slug))
    if cursor:
        created_at, memory_id = _decode_cursor(cursor)
        memories = memories.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=memory_id))
    page = list(memories.order_by("-created_at", "-id")[: limit + 1])
    next_cursor = _encode_cursor(page[limit - 1]) if len(page) > limit else None
    return page[:limit], next_cursor


WILDCARD = "*"  # in a namespace listing's prefix or suffix: any one label


def namespace_list(*, prefix: list[str], suffix: list[str], max_depth: int | None, limit: int,
                   offset: int) -> list[list[str]]:
    """The distinct namespaces of the live memories the caller can see, each cut to ``max_depth`` labels, in code
    point order (LangGraph's list_namespaces)."""
    where, params = ["org_id = %s", "status = 'live'", "namespace IS NOT NULL"], [rls.require_scope().org_id]
    for labels, position in ((prefix, "{i}"), (suffix, "cardinality(namespace) - {n} + {i}")):
        if labels:
            where.append("cardinality(namespace) >= %s")
            params.append(len(labels))
        for i, label in enumerate(labels, start=1):
            if label != WILDCARD:
                where.append(f"namespace[{position.format(i=i, n=len(labels))}] = %s")
                params.append(label)
    cut = f"namespace[1:{int(max_depth)}]" if max_depth else "namespace"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT {cut} COLLATE \"C\" AS ns FROM memory_memory WHERE {' AND '.join(where)}"
            " ORDER BY ns LIMIT %s OFFSET %s", [*params, limit, offset],
        )
        return [row[0] for row in cursor.fetchall()]


def memory_checks(*, memory: Memory) -> list:

    return list(Check.objects.filter(memory=memory).order_by("created_at", "id"))


def loop_list(*, user: User, state: str, project_slug: str | None) -> list[Memory]:
    """Tasks and open questions, newest first. Closed ones carry `closed_by`, the memory that closed them."""
    loops = with_relations(Memory.objects.filter(kind__in=Memory.LOOP_KINDS, loop=state))
    if state == "open":
        loops = loops.filter(status=Memory.Status.LIVE)
    if project_slug:
        loops = loops.filter(project=project_for_member(user=user, slug=project_slug))
    return list(loops.order_by("-created_at", "-id")[:200])


def memory_conflicts(*, memory: Memory) -> list:

    return list(Conflict.objects.filter(Q(a=memory) | Q(b=memory)).order_by("created_at", "id"))


def open_conflicts(ids: list[str]) -> list[tuple[str, str, str]]:
    """(older, newer, relation) of every unsettled (open or shown) conflict that involves one of ``ids``."""
    return conflicts_of(ids)[0]


def conflicts_of(ids: list[str]) -> tuple[list[tuple[str, str, str]], set[frozenset[str]]]:
    """The unsettled conflicts (open, or shown beside a thing's open one) that involve one of ``ids`` (older, newer,
    relation), and the pairs a person decided to keep both of (read-time disagreement does not raise those again),
    in one query."""

    if not ids:
        return [], set()
    with connection.cursor() as cursor:  # written out, like failing_checks: both run on every recall
        cursor.execute(f"SELECT a_id, b_id, relation, status FROM {Conflict._meta.db_table}"
                       " WHERE (a_id = ANY(%s) OR b_id = ANY(%s)) AND (status = ANY(%s) OR resolution = %s)",
                       [list(ids), list(ids), list(Conflict.UNRESOLVED), Resolution.KEEP_BOTH])
        found = cursor.fetchall()
    return ([(a, b, relation) for a, b, relation, status in found if status in Conflict.UNRESOLVED],
            {frozenset((a, b)) for a, b, _, status in found if status not in Conflict.UNRESOLVED})


def conflict_partners(conflicts: list[tuple[str, str, str]]) -> dict[str, list[str]]:
    """Each memory in ``conflicts`` -> the memories it is in open conflict with (the in_conflict flag)."""
    partners: dict[str, list[str]] = {}
    for a_id, b_id, _ in conflicts:
        partners.setdefault(a_id, []).append(b_id)
        partners.setdefault(b_id, []).append(a_id)
    return partners


CHECK_COLUMNS = rows.fields(Check)


def failing_checks(ids: list[str]) -> dict:
    """Each of ``ids`` whose latest check failed -> that check (a later pass supersedes an earlier failure)."""

    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.select_list('c', CHECK_COLUMNS)} FROM {Check._meta.db_table} c"
                       " WHERE c.memory_id = ANY(%s) ORDER BY c.created_at", [list(ids)])
        checks = [rows.take(list(row), Check, CHECK_COLUMNS) for row in cursor.fetchall()]
    failed = {}
    for check in checks:
        if check.outcome == Check.Outcome.FAIL:
            failed[check.memory_id] = check
        else:
            failed.pop(check.memory_id, None)
    return failed


def memory_flags(memories: list[Memory]) -> dict[str, list[str]]:
    """The flags recall shows, plus ``forgotten``, for a list of memories (the feed): two queries for any number."""
    ids = [memory.id for memory in memories]
    partners, failed, now = conflict_partners(open_conflicts(ids)), failing_checks(ids), timezone.now()
    return {memory.id: flags_of(memory, in_conflict=memory.id in partners, failed_check=memory.id in failed, now=now)
            for memory in memories}


def flags_of(memory: Memory, *, in_conflict: bool, failed_check: bool, now: datetime) -> list[Flag]:
    """A memory's flags at ``now`` (recall's ``as_of``, else the present), in the order API.md lists them. Recall
    adds ``disagrees``, which it reads from the hits themselves."""
    on = {
        Flag.EXPIRED: memory.valid_until is not None and memory.valid_until < now,
        Flag.SUPERSEDED: memory.status == Memory.Status.SUPERSEDED,
        Flag.FORGOTTEN: memory.status == Memory.Status.FORGOTTEN,
        Flag.IN_CONFLICT: in_conflict,
        Flag.PROVISIONAL: not memory.authoritative,
        Flag.OPEN_LOOP: memory.loop == Memory.Loop.OPEN,
        Flag.FAILED_CHECK: failed_check,
    }
    return [flag for flag, is_on in on.items() if is_on]


@dataclass
class Retirement:
    """What retired one version of a chain, and why: the retiring link (its origin and reason) and, by origin, the
    judge's verdict, the failed check, or the source versions; or the forget."""

    status: str
    successor: str | None = None
    origin: str | None = None  # Link.Origin, or None for a forget
    reason: str | None = None
    by: str | None = None  # the email of who retired it (the reviewer, the checker, the writer of the supersede)
    at: datetime | None = None
    confidence: float | None = None  # judge
    relation: str | None = None  # judge
    judge: str | None = None  # judge
    check: object | None = None  # check: the failed check that named the correction
    source_versions: tuple[str | None, str | None] | None = None  # source: (this version, the successor's)


def chain_retirements(*, chain: list[Memory]) -> dict[str, Retirement]:
    """For each retired version of ``chain`` (memory_chain), what retired it. Four queries for any chain length."""

    retired = [m for m in chain if m.status != Memory.Status.LIVE]
    if not retired:
        return {}
    ids = [m.id for m in retired]
    links = {link.dst_id: link for link in Link.objects.filter(
        dst_id__in=ids, type=Link.Type.SUPERSEDES, retired_dst=True, undone_at__isnull=True).order_by("created_at")}
    verdicts = {(v.memory_id, v.other_id): v for v in Verdict.objects.filter(other_id__in=[
        dst for dst, link in links.items() if link.origin == Link.Origin.JUDGE])} if any(
        link.origin == Link.Origin.JUDGE for link in links.values()) else {}
    checks = {(c.memory_id, c.corrected_by_id): c for c in Check.objects.filter(
        memory_id__in=ids, corrected_by__isnull=False).order_by("created_at")}
    user_ids = {link.created_by_id for link in links.values()} | {m.invalidated_by_id for m in retired}
    emails = dict(User.objects.filter(id__in=user_ids - {None}).values_list("id", "email"))
    by_id = {m.id: m for m in chain}
    out = {}
    for memory in retired:
        link = links.get(memory.id)
        item = Retirement(status=memory.status, reason=memory.invalidated_reason, at=memory.invalidated_at,
                          by=emails.get(memory.invalidated_by_id))
        if memory.status == Memory.Status.SUPERSEDED and link is not None:
            item.successor, item.origin, item.reason = link.src_id, link.origin, link.reason
            item.by = emails.get(link.created_by_id, item.by)
            if link.origin == Link.Origin.JUDGE and (verdict := verdicts.get((link.src_id, memory.id))):
                item.confidence, item.relation, item.judge = verdict.confidence, verdict.relation, verdict.judge
            elif link.origin == Link.Origin.CHECK:
                item.check = checks.get((memory.id, link.src_id))
            elif link.origin == Link.Origin.SOURCE:
                successor = by_id.get(link.src_id)
                item.source_versions = ((memory.source or {}).get("version"),
                                        ((successor.source if successor else None) or {}).get("version"))
        out[memory.id] = item
    return out
