"""Every write of the memory domain: remember (dedup cascade, declared supersede), forget, restore, link.

A service embeds before it opens its transaction (never inside one), then does all of its database work in one
``tenant_scope`` transaction as the caller. Retirement is one reversible lifecycle shared by supersede and forget.
"""
import logging
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection
from django.utils import timezone

from config.errors import Conflict, Forbidden, Invalid, NotFound
from hygiene.outbox import review_record
from memory import selectors
from memory.embeddings import embed_one
from memory.models import Check, Event, Link, Memory
from memory.normalize import content_hash, normalize, same_signals
from tenants import rls
from tenants.auth import Principal
from tenants.models import ApiToken, Organization, Project

logger = logging.getLogger(__name__)

MAX_SUPERSEDES = 10
# Near-verbatim dedup: cosine similarity of a restatement in the same session. Measured on MiniLM: restatements
# 0.92-1.00 (median 0.975), one-number updates 0.97-0.99 (kept apart by normalize.same_signals), a changed name
# 0.80. 0.95 absorbs most restatements and nothing that differs in a number, an identifier or a negation.
NEAR_VERBATIM_SIMILARITY = 0.95


@dataclass(frozen=True)
class LinkSpec:
    type: str
    dst: str
    reason: str | None = None


@dataclass
class RememberResult:
    memory: Memory
    created: bool
    dedup: str | None = None
    absorbed_into: str | None = None
    superseded: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    similar_existing: list[dict] | None = None
    hint: str | None = None


HINT = (
    "These are your nearest live memories. If the new memory replaces one of them, send it again with "
    'links: [{"type": "supersedes", "dst": "<id>"}]: the repeat is absorbed and the old version retires '
    "(reversibly, with history). If it only complements them, do nothing."
)


def memory_remember(
    *,
    principal: Principal,
    content: str,
    kind: str = Memory.Kind.NOTE,
    scope: str | None = None,
    project_slug: str | None = None,
    links: list[LinkSpec] = (),
    session_id: str | None = None,
    valid_from: datetime | None = None,
    valid_until: datetime | None = None,
    source: dict | None = None,
    metadata: dict | None = None,
) -> RememberResult:
    supersedes = list(dict.fromkeys(link.dst for link in links if link.type == Link.Type.SUPERSEDES))
    reasons = {link.dst: link.reason for link in links if link.type == Link.Type.SUPERSEDES}
    if len(supersedes) > MAX_SUPERSEDES:
        raise Invalid("too_many_supersedes", f"A write may supersede at most {MAX_SUPERSEDES} memories.")
    if supersedes and principal.writer == ApiToken.Writer.WATCHER:
        raise Forbidden("supersede_forbidden", "Watcher tokens write provisional memories and cannot supersede.")
    vector = embed_one(normalize(content))  # before the transaction: never hold locks while the model runs

    with rls.tenant_scope(principal.scope):
        if supersedes and Organization.objects.get(pk=principal.scope.org_id).require_supersede_reason:
            missing = [dst for dst in supersedes if not (reasons.get(dst) or "").strip()]
            if missing:
                raise Invalid("reason_required", "This organization requires a reason on every supersedes link.",
                              {"dst": missing})
        project = _project_for_write(principal, project_slug)
        scope = scope or (Memory.Scope.PROJECT if project else Memory.Scope.PERSONAL)
        if scope == Memory.Scope.PROJECT and project is None:
            raise Invalid("project_required", "A project memory needs a project (or a token with one).")
        project_for_row = project if scope == Memory.Scope.PROJECT else None  # personal memories span projects

        targets = _lock_targets(supersedes)
        absorbing, dedup = _find_duplicate(principal, scope, project_for_row, content, vector, session_id)
        if absorbing is not None:
            successor = absorbing
            _event(successor, Event.Action.ABSORBED, principal, {"dedup": dedup, "content": content})
        else:
            successor = Memory.objects.create(
                org_id=principal.scope.org_id, scope=scope, owner=principal.user, project=project_for_row,
                kind=kind, content=content, content_hash=content_hash(content), embedding=vector,
                writer=principal.writer, authoritative=principal.writer != ApiToken.Writer.WATCHER,
                token=principal.token, session_id=session_id, valid_from=valid_from, valid_until=valid_until,
                loop=Memory.Loop.OPEN if kind in Memory.LOOP_KINDS else None, source=source,
                metadata=metadata or {},
            )
            _event(successor, Event.Action.REMEMBERED, principal, {"kind": kind})
        result = RememberResult(
            memory=successor, created=absorbing is None, dedup=dedup,
            absorbed_into=successor.id if absorbing is not None else None,
        )
        for dst in supersedes:
            outcome = _supersede_declared(targets.get(dst), dst, successor, reasons.get(dst), principal)
            if outcome == "superseded":
                result.superseded.append(dst)
            else:
                logger.info("declared supersede of %s by %s skipped: %s", dst, successor.id, outcome)
                result.skipped.append({"dst": dst, "reason": outcome})
        for link in links:
            if link.type != Link.Type.SUPERSEDES:
                _link_on_write(successor, link, principal, result)
        if not supersedes:
            result.similar_existing = selectors.similar_existing(
                owner=principal.user, project=project, vector=vector, exclude_id=successor.id
            )
            result.hint = HINT if result.similar_existing else None
            if result.created:
                review_record(memory=successor, scope=principal.scope)
    return result


def _project_for_write(principal: Principal, slug: str | None) -> Project | None:
    """The named project, else the token's default one; either way the caller must be a member now."""
    if slug is None:
        if principal.token is None or principal.token.project_id is None:
            return None
        slug = principal.token.project.slug
    return selectors.project_for_member(user=principal.user, slug=slug)


def _lock_targets(ids: list[str]) -> dict[str, Memory]:
    """Lock the visible targets (in id order, so concurrent writers never deadlock); refuse invisible ones."""
    if not ids:
        return {}
    # FOR UPDATE: of concurrent writers superseding one target, the first retires it and the rest then see it dead.
    targets = {m.id: m for m in Memory.objects.select_for_update().filter(pk__in=sorted(ids)).order_by("pk")}
    for dst in ids:
        if dst not in targets and memory_exists(dst):
            raise Forbidden("target_invisible", "A supersedes target exists but is not visible to you; nothing was "
                            "stored.", {"dst": dst})
    return targets


def memory_exists(memory_id: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT zm_memory_exists(%s)", [memory_id])
        return cursor.fetchone()[0]


def _find_duplicate(principal, scope, project, content, vector: np.ndarray, session_id):
    """The dedup cascade: the same normalized content, else a near-verbatim restatement in the same session."""
    same_place = Memory.objects.filter(
        owner=principal.user, scope=scope, project=project, status=Memory.Status.LIVE
    )
    # Two identical writes at once must not both miss each other: serialize them on (owner, content).
    digest = content_hash(content)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"{principal.user.id}:{digest}"])
    exact = same_place.filter(content_hash=digest).order_by("created_at").first()
    if exact is not None:
        return exact, "exact"
    if session_id:
        nearest = selectors.nearest_in(same_place.filter(session_id=session_id), vector)
        if nearest is not None and 1 - nearest.distance >= NEAR_VERBATIM_SIMILARITY and same_signals(
            nearest.content, content
        ):
            return nearest, "near_verbatim"
    return None, None


def _supersede_declared(target: Memory | None, dst: str, successor: Memory, reason, principal) -> str:
    if target is None:
        return "missing"
    if target.id == successor.id:
        return "self"
    if not target.is_live:
        return "dead"
    memory_supersede(target=target, successor=successor, reason=reason, principal=principal, origin="declared")
    return "superseded"


def memory_supersede(*, target: Memory, successor: Memory, reason: str | None, principal: Principal, origin: str):
    """Retire a locked, live target in favour of its successor (caller holds the transaction and the lock)."""
    now = timezone.now()
    target.status = Memory.Status.SUPERSEDED
    target.superseded_by = successor
    target.invalidated_at = now
    target.invalidated_reason = reason
    target.invalidated_by = principal.user
    fields = ["status", "superseded_by", "invalidated_at", "invalidated_reason", "invalidated_by"]
    if target.kind in Memory.LOOP_KINDS and target.loop == Memory.Loop.OPEN:
        target.loop, target.closed_by = Memory.Loop.CLOSED, successor
        fields += ["loop", "closed_by"]
        _event(target, Event.Action.LOOP_CLOSED, principal, {"closed_by": successor.id})
    target.save(update_fields=fields)
    Link.objects.create(
        org_id=target.org_id, src=successor, dst=target, type=Link.Type.SUPERSEDES, reason=reason,
        retired_dst=True, origin=origin, created_by=principal.user,
    )
    _event(target, Event.Action.SUPERSEDED, principal, {"by": successor.id, "reason": reason, "origin": origin})


def _link_on_write(successor: Memory, spec: LinkSpec, principal: Principal, result: RememberResult) -> None:
    dst = Memory.objects.filter(pk=spec.dst).first()  # invisible and missing look the same here: not a supersede
    if dst is None or dst.id == successor.id:
        result.skipped.append({"dst": spec.dst, "reason": "missing" if dst is None else "self"})
        return
    _link_create(src=successor, dst=dst, type=spec.type, reason=spec.reason, principal=principal)


def _link_create(*, src: Memory, dst: Memory, type: str, reason: str | None, principal: Principal) -> Link:
    link = Link.objects.create(
        org_id=src.org_id, src=src, dst=dst, type=type, reason=reason, created_by=principal.user
    )
    _event(src, Event.Action.LINKED, principal, {"link": link.id, "type": type, "dst": dst.id})
    return link


def _event(memory: Memory, action: str, principal: Principal, payload: dict | None = None) -> None:
    Event.objects.create(
        org_id=memory.org_id, memory=memory, action=action, actor=principal.user, token=principal.token,
        payload=payload or {},
    )


def _locked(memory_id: str) -> Memory:
    memory = Memory.objects.select_for_update().filter(pk=memory_id).first()
    if memory is None:  # missing and invisible look the same under RLS, on purpose
        raise NotFound("not_found", "No such memory.")
    return memory


def memory_forget(*, principal: Principal, memory_id: str, reason: str | None = None) -> Memory:
    with rls.tenant_scope(principal.scope):
        memory = _locked(memory_id)
        if not memory.is_live:
            raise Conflict("not_live", f"Only a live memory can be forgotten; this one is {memory.status}.")
        memory.status = Memory.Status.FORGOTTEN
        memory.invalidated_at = timezone.now()
        memory.invalidated_reason = reason
        memory.invalidated_by = principal.user
        memory.save(update_fields=["status", "invalidated_at", "invalidated_reason", "invalidated_by"])
        _event(memory, Event.Action.FORGOT, principal, {"reason": reason})
    return memory


def memory_restore(*, principal: Principal, memory_id: str) -> Memory:
    """Reverse a forget or a supersede exactly; the supersedes link stays, marked undone."""
    with rls.tenant_scope(principal.scope):
        memory = _locked(memory_id)
        if memory.is_live:
            raise Conflict("already_live", "This memory is already live.")
        now = timezone.now()
        previous = {"status": memory.status, "superseded_by": memory.superseded_by_id}
        if memory.status == Memory.Status.SUPERSEDED:
            Link.objects.filter(
                dst=memory, src_id=memory.superseded_by_id, type=Link.Type.SUPERSEDES, retired_dst=True,
                undone_at__isnull=True,
            ).update(undone_at=now)
            if memory.loop == Memory.Loop.CLOSED and memory.closed_by_id == memory.superseded_by_id:
                memory.loop, memory.closed_by = Memory.Loop.OPEN, None
                _event(memory, Event.Action.LOOP_REOPENED, principal)
        memory.status = Memory.Status.LIVE
        memory.superseded_by = None
        memory.invalidated_at = memory.invalidated_reason = memory.invalidated_by = None
        memory.save(update_fields=[
            "status", "superseded_by", "invalidated_at", "invalidated_reason", "invalidated_by", "loop", "closed_by"
        ])
        _event(memory, Event.Action.RESTORED, principal, previous)
    return memory


def memory_link(*, principal: Principal, src: str, dst: str, type: str, reason: str | None = None) -> Link:
    """A graph edge only: even a supersedes link retires nothing and closes no loop."""
    if src == dst:
        raise Invalid("invalid", "A memory cannot link to itself.", {"fields": {"dst": ["Same as src."]}})
    with rls.tenant_scope(principal.scope):
        found = {m.id: m for m in Memory.objects.filter(pk__in=[src, dst])}
        if src not in found or dst not in found:
            raise NotFound("not_found", "No such memory.")
        return _link_create(src=found[src], dst=found[dst], type=type, reason=reason, principal=principal)


def memory_check_record(
    *, principal: Principal, memory_id: str, outcome: str, detail: str, corrected_by: str | None = None
) -> Check:
    """Someone tried a memory. A failed check that names its correction retires the memory (provenance `check`)."""
    if corrected_by and outcome != Check.Outcome.FAIL:
        raise Invalid("invalid", "corrected_by: only a failed check names a correction.",
                      {"fields": {"corrected_by": ["Only with outcome 'fail'."]}})
    if corrected_by == memory_id:
        raise Invalid("invalid", "corrected_by: a memory cannot correct itself.",
                      {"fields": {"corrected_by": ["Same as the checked memory."]}})
    if corrected_by and principal.writer == ApiToken.Writer.WATCHER:
        raise Forbidden("supersede_forbidden", "Watcher tokens cannot retire memories.")
    with rls.tenant_scope(principal.scope):
        locked = {m.id: m for m in Memory.objects.select_for_update().filter(
            pk__in=sorted({memory_id, corrected_by} - {None}))}
        memory = locked.get(memory_id)
        if memory is None or (corrected_by and corrected_by not in locked):
            raise NotFound("not_found", "No such memory.")
        check = Check.objects.create(
            org_id=memory.org_id, memory=memory, outcome=outcome, detail=detail,
            corrected_by=locked.get(corrected_by), created_by=principal.user,
        )
        _event(memory, Event.Action.CHECKED, principal, {"check": check.id, "outcome": outcome})
        if corrected_by and memory.is_live:
            memory_supersede(target=memory, successor=locked[corrected_by], reason=detail, principal=principal,
                             origin="check")
    return check
