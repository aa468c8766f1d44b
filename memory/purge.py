"""The privacy purge (API.md, "Privacy purge": deletion is not supersession).

Everything else in the API is forward-only; this is the one deletion. The app role has no DELETE on memories, so the
work is done by the owner-defined function ``zm_purge_memories`` (migration 0009), which refuses anyone but an org
admin who can see every memory named. This module decides *which* memories: the one asked for, or with
``whole_chain`` every version of its chain as the caller's history shows it.
"""
from django.db import connection
from django.db.models import Q

from plumbing.errors import Code, Forbidden, NotFound
from memory import conflict_queue, lifecycle, selectors
from memory.models import Conflict, Memory
from tenants.auth import Principal, require_authoritative

MAX_REASON_CHARS = 2000


def memory_purge(*, principal: Principal, memory_id: str, reason: str, whole_chain: bool = False) -> list[str]:
    """Hard-delete a memory (and with ``whole_chain`` its visible versions); the ids purged, in id order."""
    require_authoritative(principal, "purge memories")
    if not principal.is_admin:  # the view refuses first; the function refuses too
        raise Forbidden(Code.ADMIN_ONLY, "Only organization admins may purge memories.")
    ids = _versions(memory_id) if whole_chain else {memory_id}
    # In id order, all at once: the memories to purge and those the purge changes besides them (what they superseded
    # or closed loses its pointer), so that it takes no row while holding a higher one (tests/api/test_gauntlet.py:
    # a purge updating a predecessor that a restore held, while the restore waited for the purged memory).
    locked = lifecycle.lock_memories(ids | _pointing_at(ids))
    if whole_chain and memory_id in locked:
        # A version added while we waited for the locks is purged too (locking again what we hold costs nothing;
        # a new version's id is higher than every one held, so the order holds).
        ids = _versions(memory_id)
        locked |= lifecycle.lock_memories(ids)
    if memory_id not in locked:  # missing, invisible, or purged by someone else while we waited
        raise NotFound(Code.NOT_FOUND, "No such memory.")
    ids = sorted(set(locked) & ids)
    queued = list(conflict_queue.unresolved_touching(ids).filter(status=Conflict.Status.OPEN))
    with connection.cursor() as cursor:
        cursor.execute("SELECT zm_purge_memories(%s, %s, %s)", [ids, reason, principal.token and principal.token.id])
    for conflict in queued:  # the purge took a thing's open conflict: the next disagreement of it is asked about
        conflict_queue.queue_next(conflict)
    return ids


def _pointing_at(ids: set[str]) -> set[str]:
    return set(Memory.objects.filter(Q(superseded_by_id__in=ids) | Q(closed_by_id__in=ids))
               .values_list("id", flat=True))


def _versions(memory_id: str) -> set[str]:
    """The chain as GET /memories/{id}/history shows it to the caller (RLS: invisible versions are not in it)."""
    try:
        memory = selectors.memory_get(memory_id=memory_id)
    except NotFound:
        return set()
    return {version.id for version in selectors.memory_chain(memory=memory)}
