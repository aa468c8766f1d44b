"""Source artifacts versioned by source_id and content hash: the reads (the write, ``source_put``, is with the other
writes in memory/services.py).

The first version creates the current memory; the same content again changes nothing; changed content becomes a new
memory that supersedes the previous version (provenance `source`). The version chain is the supersedes chain.

A watcher token's version is provisional (``authoritative`` false) and retires nothing: a changed one stays live
beside the current version, paired with it in an open conflict for an authoritative writer to settle. The current
version is the newest live authoritative one (the newest live one when there is none); the next authoritative
version retires every live version, provisional ones included.
"""
from django.db.models import Count, Max, Q
from django.db.models.fields.json import KeyTextTransform

from memory.models import Link, Memory
from memory.selectors import with_relations
from plumbing.errors import Code, NotFound


def currency(memory: Memory) -> tuple:
    """Sort key of "which live version is current": authoritative before provisional, then the newest."""
    return memory.is_live, memory.authoritative, memory.created_at, memory.id


def source_versions(*, source_id: str) -> list[Memory]:
    """Oldest first, the current version last (a watcher's provisional version may be newer than it)."""
    versions = list(
        with_relations(Memory.objects.filter(source__source_id=source_id))
        .exclude(status=Memory.Status.FORGOTTEN).order_by("created_at", "id")
    )
    if not versions:
        raise NotFound(Code.NOT_FOUND, "No such source.")
    current = max(versions, key=currency)
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
