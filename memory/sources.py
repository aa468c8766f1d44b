"""Source artifacts versioned by source_id and content hash (seed 003): the writes of POST /api/v1/sources.

The first version creates the current memory; the same content again changes nothing; changed content becomes a new
memory that supersedes the previous version (provenance `source`). The version chain is the supersedes chain.
"""
from dataclasses import dataclass

from django.db import connection

from config.errors import Invalid, NotFound
from memory.embeddings import embed_one
from memory.models import Event, Memory
from memory.normalize import content_hash
from memory.selectors import with_relations
from memory.services import _event, _project_for_write, memory_supersede
from tenants import rls
from tenants.auth import Principal


@dataclass
class SourceResult:
    memory: Memory
    created: bool
    superseded: str | None = None


def source_current(source_id: str) -> Memory | None:
    return Memory.objects.filter(source__source_id=source_id, status=Memory.Status.LIVE).order_by("-created_at").first()


def source_put(
    *, principal: Principal, source_id: str, content: str, version: str | None = None, url: str | None = None,
    kind: str = Memory.Kind.FACT, project_slug: str | None = None,
) -> SourceResult:
    vector = embed_one(content)  # before the transaction
    digest = content_hash(content)
    with rls.tenant_scope(principal.scope):
        with connection.cursor() as cursor:  # one writer per source at a time: versions stay a linear chain
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", [f"{principal.scope.org_id}:{source_id}"])
        current = source_current(source_id)
        if current is not None and current.content_hash == digest:
            return SourceResult(memory=current, created=False)
        project = _project_for_write(principal, project_slug) if project_slug or current is None else current.project
        if current is not None and project != current.project:
            raise Invalid("invalid", "project: a source keeps its project across versions.",
                          {"fields": {"project": [f"This source lives in {current.project.slug if current.project else 'personal scope'}."]}})
        count = Memory.objects.filter(source__source_id=source_id).count()
        version = version or str(count + 1)
        memory = Memory.objects.create(
            org_id=principal.scope.org_id, scope=Memory.Scope.PROJECT if project else Memory.Scope.PERSONAL,
            owner=principal.user, project=project, kind=kind, content=content, content_hash=digest, embedding=vector,
            writer=Memory.Writer.SOURCE, authoritative=True, token=principal.token,
            source={"source_id": source_id, "version": version, "url": url},
        )
        _event(memory, Event.Action.SOURCE_VERSION, principal, {"source_id": source_id, "version": version})
        if current is not None:
            previous = Memory.objects.select_for_update().get(pk=current.pk)
            reason = f"source {source_id} changed: version {(previous.source or {}).get('version')} -> {version}"
            memory_supersede(target=previous, successor=memory, reason=reason, principal=principal, origin="source")
        return SourceResult(memory=memory, created=True, superseded=current.id if current else None)


def source_versions(*, source_id: str) -> list[Memory]:
    versions = list(
        with_relations(Memory.objects.filter(source__source_id=source_id))
        .exclude(status=Memory.Status.FORGOTTEN).order_by("created_at", "id")
    )
    if not versions:
        raise NotFound("not_found", "No such source.")
    return versions
