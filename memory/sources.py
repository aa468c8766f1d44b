"""Source artifacts versioned by source_id and content hash (seed 003): the writes of POST /api/v1/sources.

The first version creates the current memory; the same content again changes nothing; changed content becomes a new
memory that supersedes the previous version (provenance `source`). The version chain is the supersedes chain.
"""
from dataclasses import dataclass

import numpy as np
from django.db import connection

from config.errors import Code, Invalid, NotFound
from memory import lifecycle
from memory.events import event_record
from memory.models import Event, Link, Memory
from memory.normalize import content_hash
from memory.selectors import with_relations
from memory.services import _project_for_write
from tenants.auth import Principal


@dataclass
class SourceResult:
    memory: Memory
    created: bool
    superseded: str | None = None


def source_current(source_id: str) -> Memory | None:
    return Memory.objects.filter(source__source_id=source_id, status=Memory.Status.LIVE).order_by("-created_at").first()


def source_put(
    *, principal: Principal, source_id: str, content: str, vector: np.ndarray, version: str | None = None,
    url: str | None = None, kind: str = Memory.Kind.FACT, project_slug: str | None = None,
) -> SourceResult:
    """``vector`` is ``embed_one(content)``, computed by the entry point before its transaction."""
    digest = content_hash(content)
    with connection.cursor() as cursor:  # one writer per source at a time: versions stay a linear chain
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", [f"{principal.scope.org_id}:{source_id}"])
    current = source_current(source_id)
    if current is not None and current.content_hash == digest:
        return SourceResult(memory=current, created=False)
    project = _project_for_write(principal, project_slug) if project_slug or current is None else current.project
    if current is not None and project != current.project:
        where = current.project.slug if current.project else "personal scope"
        raise Invalid(Code.INVALID, "project: a source keeps its project across versions.",
                      {"fields": {"project": [f"This source lives in {where}."]}})
    count = Memory.objects.filter(source__source_id=source_id).count()
    version = version or str(count + 1)
    memory = Memory.objects.create(
        org_id=principal.scope.org_id, scope=Memory.Scope.PROJECT if project else Memory.Scope.PERSONAL,
        owner=principal.user, project=project, kind=kind, content=content, content_hash=digest, embedding=vector,
        writer=Memory.Writer.SOURCE, authoritative=True, token=principal.token,
        loop=Memory.Loop.OPEN if kind in Memory.LOOP_KINDS else None,  # a task is an open loop however written
        source={"source_id": source_id, "version": version, "url": url},
    )
    event_record(memory, Event.Action.SOURCE_VERSION, principal, {"source_id": source_id, "version": version})
    if current is not None:
        previous = lifecycle.lock_memories([current.pk])[current.pk]
        reason = f"source {source_id} changed: version {(previous.source or {}).get('version')} -> {version}"
        lifecycle.supersede(previous, successor=memory, reason=reason, origin=Link.Origin.SOURCE, principal=principal)
    return SourceResult(memory=memory, created=True, superseded=current.id if current else None)


def source_versions(*, source_id: str) -> list[Memory]:
    versions = list(
        with_relations(Memory.objects.filter(source__source_id=source_id))
        .exclude(status=Memory.Status.FORGOTTEN).order_by("created_at", "id")
    )
    if not versions:
        raise NotFound(Code.NOT_FOUND, "No such source.")
    return versions
