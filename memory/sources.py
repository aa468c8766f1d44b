"""Source artifacts versioned by source_id and content hash: the writes of POST /api/v1/sources.

The first version creates the current memory; the same content again changes nothing; changed content becomes a new
memory that supersedes the previous version (provenance `source`). The version chain is the supersedes chain.

A watcher token's version is provisional (``authoritative`` false) and retires nothing: a changed one stays live
beside the current version, paired with it in an open conflict for an authoritative writer to settle. The current
version is the newest live authoritative one (the newest live one when there is none); the next authoritative
version retires every live version, provisional ones included.
"""
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Max, Q
from django.db.models.fields.json import KeyTextTransform

from memory import lifecycle
from memory.events import event_record
from memory.models import Conflict, Event, Link, Memory
from memory.normalize import content_hash
from memory.passages import Embedded, passages_store
from memory.selectors import with_relations
from memory.services import _project_for_write
from memory.vocabulary import Relation
from plumbing.errors import Code, Invalid, NotFound
from tenants.auth import Principal

SOURCE_CONFLICT_JUDGE = "source"  # a conflict's `judge` names who raised it: here the source versioning itself


@dataclass
class SourceResult:
    memory: Memory
    created: bool
    superseded: str | None = None
    conflict: str | None = None


def _currency(memory: Memory) -> tuple:
    """Sort key of "which live version is current": authoritative before provisional, then the newest."""
    return memory.is_live, memory.authoritative, memory.created_at, memory.id


def _live_versions(source_id: str) -> list[Memory]:
    """The live versions of a source under RLS, the current one first."""
    live = Memory.objects.filter(source__source_id=source_id, status=Memory.Status.LIVE).defer("embedding")
    return sorted(live, key=_currency, reverse=True)


def source_put(
    *, principal: Principal, source_id: str, content: str, embedded: Embedded, version: str | None = None,
    url: str | None = None, kind: str = Memory.Kind.FACT, project_slug: str | None = None,
) -> SourceResult:
    """``embedded`` is ``memory_embedding(content)``, computed by the entry point before its transaction."""
    digest = content_hash(content)
    authoritative = not principal.is_watcher
    with connection.cursor() as cursor:  # one writer per source at a time: versions stay a linear chain
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", [f"{principal.scope.org_id}:{source_id}"])
    live = _live_versions(source_id)
    # Nothing new: a live version with this content and at least the caller's authority (a watcher repeating any
    # live version; an authoritative writer repeating an authoritative one, not merely a watcher's report of it).
    same = next((m for m in live if m.content_hash == digest and (m.authoritative or not authoritative)), None)
    if same is not None:
        return SourceResult(memory=same, created=False)
    current = live[0] if live else None
    project = _project_for_write(principal, project_slug) if project_slug or current is None else current.project
    if current is not None and project != current.project:
        where = current.project.slug if current.project else "personal scope"
        raise Invalid(Code.INVALID, "project: a source keeps its project across versions.",
                      {"fields": {"project": [f"This source lives in {where}."]}})
    count = Memory.objects.filter(source__source_id=source_id).count()
    version = version or str(count + 1)
    memory = Memory.objects.create(
        org_id=principal.scope.org_id, scope=Memory.Scope.PROJECT if project else Memory.Scope.PERSONAL,
        owner=principal.user, project=project, kind=kind, content=content, content_hash=digest, embedding=embedded.vector,
        writer=Memory.Writer.SOURCE, authoritative=authoritative, token=principal.token,
        loop=Memory.Loop.OPEN if kind in Memory.LOOP_KINDS else None,  # a task is an open loop however written
        source={"source_id": source_id, "version": version, "url": url},
    )
    passages_store(memory, embedded)
    event_record(memory, Event.Action.SOURCE_VERSION, principal, {"source_id": source_id, "version": version})
    result = SourceResult(memory=memory, created=True)
    if current is None:
        return result
    change = f"source {source_id} changed: version {(current.source or {}).get('version')} -> {version}"
    if not authoritative:  # a watcher adds, it never retires: the disagreement waits for review
        if current.pk not in lifecycle.hold_memories([current.pk]):  # purged since we read it: nothing to dispute
            return result
        conflict = Conflict.objects.create(
            org_id=memory.org_id, a=current, b=memory, relation=Relation.SUPERSEDES, judge=SOURCE_CONFLICT_JUDGE,
            rationale=f"a watcher reported that {change} (provisional)",
        )
        result.conflict = conflict.id
        return result
    # Every live version retires, the watchers' provisional reports too: the source now says what this one says.
    for previous in lifecycle.lock_memories(m.pk for m in live).values():
        if not previous.is_live:  # retired by someone else since we read it
            continue
        reason = change if previous.pk == current.pk else (
            f"source {source_id} changed: provisional version {(previous.source or {}).get('version')} -> {version}"
        )
        lifecycle.supersede(previous, successor=memory, reason=reason, origin=Link.Origin.SOURCE, principal=principal)
        if previous.pk == current.pk:
            result.superseded = current.id
    return result


def source_versions(*, source_id: str) -> list[Memory]:
    """Oldest first, the current version last (a watcher's provisional version may be newer than it)."""
    versions = list(
        with_relations(Memory.objects.filter(source__source_id=source_id))
        .exclude(status=Memory.Status.FORGOTTEN).order_by("created_at", "id")
    )
    if not versions:
        raise NotFound(Code.NOT_FOUND, "No such source.")
    current = max(versions, key=_currency)
    return sorted(versions, key=lambda m: m is current and m.is_live)  # stable: the rest keep their order


SOURCE_LIST_LIMIT = 200


def source_list() -> list[dict]:
    """The visible sources, most recently changed first: source_id, how many versions, the newest one's time.

    Counts what source_versions lists (forgotten versions left out); at most SOURCE_LIST_LIMIT sources.
    """
    rows = (
        Memory.objects.filter(source__has_key="source_id").exclude(status=Memory.Status.FORGOTTEN)
        .annotate(source_id=KeyTextTransform("source_id", "source")).values("source_id")
        .annotate(versions=Count("id"), live=Count("id", filter=Q(status=Memory.Status.LIVE)),
                  changed_at=Max("created_at"))
        .order_by("-changed_at", "source_id")
    )
    return list(rows[:SOURCE_LIST_LIMIT])


def source_derived(*, versions: list[Memory]) -> dict[str, list[Link]]:
    """Each version -> the links of memories derived from (or depending on) it: what else the version produced."""
    derived: dict[str, list[Link]] = {}
    links = Link.objects.filter(dst_id__in=[m.id for m in versions], undone_at__isnull=True,
                                type__in=[Link.Type.DERIVED_FROM, Link.Type.DEPENDS_ON]).order_by("created_at", "id")
    for link in links:
        derived.setdefault(link.dst_id, []).append(link)
    return derived
