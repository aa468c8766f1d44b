"""The one place that retires and restores a memory: supersede, forget and restore.

Declared supersedes, checks, sources, the judge and human review all retire through ``supersede``, under one rule
(``successor_refusal``); ``restore`` reverses exactly what the retirement did. Each takes ``Locked`` memories: the
type says that the caller holds the row lock, and ``lock_memories`` is the only way to get one (tenants/rls.py,
rule 3).
"""
from collections.abc import Iterable
from typing import NewType

from django.db import connection
from django.utils import timezone

from memory import selectors
from memory.events import event_record
from memory.models import Event, Link, Memory
from plumbing import rows
from plumbing.errors import Code, DomainError, Forbidden, Invalid, StateConflict
from tenants import rls
from tenants.auth import Principal
from tenants.models import ProjectMember

Locked = NewType("Locked", Memory)


def lock_memories(ids: Iterable[str]) -> dict[str, Locked]:
    """The visible ones of ``ids``, locked FOR UPDATE until the transaction ends.

    In id order, so that concurrent writers locking overlapping sets never deadlock. Taking a lock this transaction
    already holds costs nothing more, so a composed service locks again instead of trusting its caller.
    """
    return {memory_id: Locked(memory) for memory_id, memory in selectors.memories_shown(list(ids), lock=True).items()}


def hold_memories(ids: Iterable[str]) -> dict[str, Memory]:
    """The visible ones of ``ids``, held FOR KEY SHARE until the transaction ends: for a write that only references
    them (a link, a conflict).

    A purge (memory/purge.py) locks FOR UPDATE, so it waits for this transaction, and then removes what it wrote;
    unheld, the new row's deferred foreign key failed at commit against the deleted memory (a 500). Writers that only
    reference a memory never wait for each other (KEY SHARE does not conflict with itself or with plain updates).
    """
    query = "SELECT * FROM memory_memory WHERE org_id = %s AND id = ANY(%s) ORDER BY id FOR KEY SHARE"
    return {memory.id: memory for memory in Memory.objects.raw(query, [rls.require_scope().org_id, sorted(set(ids))])}


def successor_refusal(target: Memory, successor: Memory) -> DomainError | None:
    """Why ``successor`` may not replace ``target`` (None: it may). The rule of every supersede path:

    - The successor is live. A retired one would leave the fact with no current version; and since a live memory has
      no successor of its own, a link to it can never close a loop (a check naming a superseded correction made two
      memories each other's successor, and recall's chain walk spun for ever).
    - Everyone who can see the target can see the successor, so a supersede takes no fact away from anyone. A
      personal target's audience is its owner: the successor is the owner's own, or in a project the owner belongs to.
      A project target's audience is whoever is, or will be, a member: only the same project covers it (a personal
      memory never replaces a project one; nor does a memory of another project, whose members differ).
    """
    if successor.id == target.id:
        return Invalid(Code.INVALID, "A memory cannot replace itself.", {"successor": successor.id})
    if not successor.is_live:
        return StateConflict(Code.SUCCESSOR_NOT_LIVE, f"The replacement {successor.id} is {successor.status}: only a live "
                        "memory can replace another; nothing was stored.",
                        {"successor": successor.id, "status": successor.status})
    if not _audience_covered(target, successor):
        return Forbidden(Code.SUCCESSOR_LESS_VISIBLE, f"Not everyone who can see {target.id} could see its "
                         "replacement: a personal memory cannot replace a project one, nor a memory of another "
                         "project; nothing was stored.", {"dst": target.id, "successor": successor.id})
    return None


def _audience_covered(target: Memory, successor: Memory) -> bool:
    if target.scope == Memory.Scope.PROJECT:
        return successor.scope == Memory.Scope.PROJECT and successor.project_id == target.project_id
    if successor.scope == Memory.Scope.PERSONAL:
        return successor.owner_id == target.owner_id
    return ProjectMember.objects.filter(project_id=successor.project_id, user_id=target.owner_id).exists()


def supersede(
    target: Locked, *, successor: Memory, reason: str | None, origin: Link.Origin, principal: Principal
) -> None:
    """Retire a live target in favour of its successor: status, link, a loop it closes, and the events.

    Raises the refusal of ``successor_refusal``: callers that must not fail (the judge) ask it first.
    """
    if not target.is_live:
        raise StateConflict(Code.NOT_LIVE, f"Only a live memory can be superseded; {target.id} is {target.status}.")
    refusal = successor_refusal(target, successor)
    if refusal is not None:
        raise refusal
    _retire(target, Memory.Status.SUPERSEDED, reason=reason, principal=principal)
    target.superseded_by = successor
    if target.kind in Memory.LOOP_KINDS and target.loop == Memory.Loop.OPEN:
        target.loop, target.closed_by = Memory.Loop.CLOSED, successor
        event_record(target, Event.Action.LOOP_CLOSED, principal, {"closed_by": successor.id})
    target.save(update_fields=[*_RETIREMENT_FIELDS, "superseded_by", "loop", "closed_by"])
    link = Link(org_id=target.org_id, src=successor, dst=target, type=Link.Type.SUPERSEDES, reason=reason,
                retired_dst=True, origin=origin, created_by=principal.user)
    with connection.cursor() as cursor:  # written out (plumbing/rows.py): one on every declared supersede
        cursor.execute(*rows.insert([link]))
    event_record(target, Event.Action.SUPERSEDED, principal, {"by": successor.id, "reason": reason, "origin": origin})


def forget(memory: Locked, *, reason: str | None, principal: Principal) -> None:
    _retire(memory, Memory.Status.FORGOTTEN, reason=reason, principal=principal)
    memory.save(update_fields=_RETIREMENT_FIELDS)
    event_record(memory, Event.Action.FORGOT, principal, {"reason": reason})


def restore(memory: Locked, *, principal: Principal) -> None:
    """Reverse a forget or a supersede exactly; the supersedes link stays in history, marked undone."""
    previous = {"status": memory.status, "superseded_by": memory.superseded_by_id}
    if memory.status == Memory.Status.SUPERSEDED:
        # Not an UPDATE under RLS: a link is visible only when both ends are, and the restorer may no longer see the
        # successor (a member who left its project); the retirement must be undone all the same. The function marks
        # exactly this memory's retiring link, and only for a caller who can see the memory (migration 0008).
        with connection.cursor() as cursor:
            cursor.execute("SELECT zm_undo_retirement(%s)", [memory.id])
        if memory.loop == Memory.Loop.CLOSED and memory.closed_by_id == memory.superseded_by_id:
            memory.loop, memory.closed_by = Memory.Loop.OPEN, None
            event_record(memory, Event.Action.LOOP_REOPENED, principal)
    memory.status = Memory.Status.LIVE
    memory.superseded_by = None
    memory.invalidated_at = memory.invalidated_reason = memory.invalidated_by = None
    memory.save(update_fields=[*_RETIREMENT_FIELDS, "superseded_by", "loop", "closed_by"])
    event_record(memory, Event.Action.RESTORED, principal, previous)


_RETIREMENT_FIELDS = ["status", "invalidated_at", "invalidated_reason", "invalidated_by"]


def _retire(memory: Locked, status: Memory.Status, *, reason: str | None, principal: Principal) -> None:
    memory.status = status
    memory.invalidated_at = timezone.now()
    memory.invalidated_reason = reason
    memory.invalidated_by = principal.user
