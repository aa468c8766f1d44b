"""Every write of the memory domain: remember (dedup cascade, declared supersede), forget, restore, link, checks,
source versions.

Services run inside the caller's transaction and identity (tenants/rls.py): they never embed and never open a
scope. The entry point embeds first (``memory_embedding``), then enters ``tenant_scope`` and calls them.
Retiring and restoring go through memory.lifecycle.
"""
import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.utils import timezone

from memory import keys, lifecycle, selectors
from memory.events import event_record
from memory.lifecycle import Locked
from memory.models import Check, Conflict, Event, Link, Memory
from memory.normalize import content_hash, same_signals
from memory.outbox import review_record
from memory.passages import Embedded, embed_memory, passage_rows
from memory.sources import currency
from memory.vocabulary import Dedup, Relation, SkipReason
from plumbing import rows
from plumbing.errors import Code, Forbidden, Invalid, NotFound, StateConflict
from plumbing.timing import StepTimer
from tenants.auth import Principal, require_authoritative
from tenants.models import Project

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


@dataclass(frozen=True)
class MemoryDraft:
    """What a writer asks remember to store: the body of POST /memories, validated."""

    content: str
    kind: str = Memory.Kind.NOTE
    scope: str | None = None  # default: project when there is one, else personal
    project: str | None = None  # a slug; default: the token's project
    links: tuple[LinkSpec, ...] = ()
    session_id: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    source: dict | None = None
    metadata: dict = field(default_factory=dict)
    namespace: list[str] | None = None
    key: str | None = None

    @property
    def key_hash(self) -> str | None:
        return keys.key_hash(self.namespace, self.key) if self.key is not None else None

    @property
    def supersedes(self) -> list[str]:
        return list(dict.fromkeys(link.dst for link in self.links if link.type == Link.Type.SUPERSEDES))


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


def memory_embedding(content: str) -> Embedded:
    """The vectors a memory is stored, deduplicated and found with. Entry points call it before their transaction."""
    return embed_memory(content)


def memory_remember(
    *, principal: Principal, draft: MemoryDraft, embedded: Embedded, steps: StepTimer | None = None
) -> RememberResult:
    """Store a memory (or absorb it into a duplicate), apply its declared supersedes and links, and show an
    undeclared write its nearest existing memories. ``embedded`` is ``memory_embedding(draft.content)``."""
    vector = embedded.vector
    steps = steps or StepTimer()
    supersedes = draft.supersedes
    reasons = {link.dst: link.reason for link in draft.links if link.type == Link.Type.SUPERSEDES}
    declared = sum(link.type == Link.Type.SUPERSEDES for link in draft.links)  # API.md counts links, not targets
    _check_declaration(principal, supersedes, reasons, declared)
    project = _project_for_write(principal, draft.project)
    scope = draft.scope or (Memory.Scope.PROJECT if project else Memory.Scope.PERSONAL)
    if scope == Memory.Scope.PROJECT and project is None:
        raise Invalid(Code.PROJECT_REQUIRED, "A project memory needs a project (or a token with one).")
    project_for_row = project if scope == Memory.Scope.PROJECT else None  # personal memories span projects
    holder = keys.claim(draft.namespace, draft.key)
    targets = _lock_targets(supersedes, holder)
    while holder and (holder not in targets or not targets[holder].is_live):
        # A purge, forget or correction took the holder after it was read (they take rows, not the key's lock):
        # now that its row is ours or gone, the key's live holder is read again (found by the concurrency gauntlet).
        again = keys.key_holder(keys.key_hash(draft.namespace, draft.key))
        if again == holder:
            break  # live, and not the caller's to see
        holder, targets = again, _lock_targets(supersedes, again)
    if holder:
        keys.require_visible(holder, targets, draft.namespace, draft.key)
    if draft.key is not None:  # dedup within the key: its holder, when this write would store the very same memory
        same = holder and keys.same_memory(targets[holder], draft.content, draft.metadata, scope, project_for_row)
        absorbing, dedup = (targets[holder], Dedup.EXACT) if same else (None, None)
    else:
        absorbing, dedup = _find_duplicate(principal, scope, project_for_row, draft, vector)
    replaced_by_key = holder if holder and absorbing is None and holder not in supersedes else None
    if replaced_by_key:
        keys.check_replace(principal, holder, draft.namespace, draft.key)
    steps.lap("dedup")

    if absorbing is not None:
        successor = absorbing
        event_record(successor, Event.Action.ABSORBED, principal, {"dedup": dedup, "content": draft.content})
    else:
        successor = _store(principal, draft, scope, project_for_row, embedded, targets.get(holder))
    result = RememberResult(
        memory=successor, created=absorbing is None, dedup=dedup,
        absorbed_into=successor.id if absorbing is not None else None,
    )
    _supersede_all(result, supersedes, reasons, targets, principal)
    if replaced_by_key:
        lifecycle.supersede(targets[holder], successor=successor, reason=None, origin=Link.Origin.KEY,
                            principal=principal)
        result.superseded.append(holder)
    if holder and absorbing is None:
        keys.take(successor, draft.key_hash)
    for link in draft.links:
        if link.type != Link.Type.SUPERSEDES:
            _link_on_write(successor, link, principal, result)
    steps.lap("insert")

    if not supersedes and not replaced_by_key:
        result.similar_existing = selectors.similar_existing(
            owner=principal.user, project=project, vector=vector, exclude_id=successor.id
        )
        result.hint = HINT if result.similar_existing else None
        steps.lap("similar_existing")
        # A key is the writer's own declaration of what a memory replaces: the judge never reviews a keyed write.
        if result.created and draft.key is None:
            review_record(memory=successor, scope=principal.scope)
            steps.lap("outbox")
    return result


def _store(principal: Principal, draft: MemoryDraft, scope: str, project: Project | None,
           embedded: Embedded, holder: Memory | None) -> Memory:
    """The new row; a new version of a key keeps the time its chain began (``holder``: the version it replaces)."""
    now = timezone.now()
    key_since = None if draft.key is None else (holder.key_since or holder.created_at) if holder else now
    return _memory_create(
        principal, embedded, Event.Action.REMEMBERED, {"kind": draft.kind},
        scope=scope, project=project, kind=draft.kind, content=draft.content, writer=principal.writer,
        session_id=draft.session_id, valid_from=draft.valid_from, valid_until=draft.valid_until, source=draft.source,
        metadata=draft.metadata, namespace=draft.namespace, key=draft.key, key_since=key_since, created_at=now,
        key_hash=None if holder else draft.key_hash,  # a new version takes the key once its holder let go (keys.take)
    )


def _memory_create(principal: Principal, embedded: Embedded, action: str, details: dict, *, kind: str, content: str,
                   **fields) -> Memory:
    """The one place a memory row is written: as the caller, with its statements' vectors and its event. A watcher's
    memory is provisional; a task is an open loop however it was written."""
    memory = Memory(
        org_id=principal.scope.org_id, owner=principal.user, token=principal.token, kind=kind, content=content,
        content_hash=content_hash(content), embedding=embedded.vector, authoritative=not principal.is_watcher,
        loop=Memory.Loop.OPEN if kind in Memory.LOOP_KINDS else None, **fields,
    )
    sql, params = rows.insert([memory])
    passages = passage_rows(memory, embedded)
    if passages:
        # One statement for the memory and its passages: a passage's row-level security reads the passage's own
        # columns, and its memory exists when the statement ends.
        passages_sql, passages_params = rows.insert(passages)
        sql, params = f"WITH memory AS ({sql}) {passages_sql}", [*params, *passages_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    event_record(rows.saved(memory), action, principal, details)
    return memory


def _check_declaration(principal: Principal, supersedes: list[str], reasons: dict[str, str | None],
                       declared: int) -> None:
    """Who may declare a supersede, how many, and with which reasons: refused before anything is written."""
    if not supersedes:
        return
    if declared > MAX_SUPERSEDES:
        raise Invalid(Code.TOO_MANY_SUPERSEDES, f"A write may supersede at most {MAX_SUPERSEDES} memories.")
    if principal.is_watcher:  # API.md keeps its own code for this case
        raise Forbidden(Code.SUPERSEDE_FORBIDDEN, "Watcher tokens write provisional memories and cannot supersede.")
    if principal.org.require_supersede_reason:
        missing = [dst for dst in supersedes if not (reasons.get(dst) or "").strip()]
        if missing:
            raise Invalid(Code.REASON_REQUIRED, "This organization requires a reason on every supersedes link.",
                          {"dst": missing})


def _project_for_write(principal: Principal, slug: str | None) -> Project | None:
    """The named project, else the token's default one; either way the caller must be a member now."""
    if slug is None:
        if principal.token is None or principal.token.project_id is None:
            return None
        if principal.token.project is None:  # RLS hides it: the user has left the project since the token was made
            raise NotFound(Code.NOT_FOUND, "No such project.")
        slug = principal.token.project.slug
    return selectors.project_for_member(user=principal.user, slug=slug)


def _lock_targets(ids: list[str], holder: str | None = None) -> dict[str, Locked]:
    """Lock the visible targets and the key's holder, all at once (in id order: no deadlock); refuse the invisible
    targets before anything is stored (the caller refuses an invisible holder its own way)."""
    if not ids and not holder:
        return {}
    # Of concurrent writers superseding one target, the first retires it and the rest then see it dead.
    targets = lifecycle.lock_memories([*ids, holder] if holder else ids)
    for dst in ids:
        if dst not in targets and memory_exists(dst):
            raise Forbidden(Code.TARGET_INVISIBLE, "A supersedes target exists but is not visible to you; nothing "
                            "was stored.", {"dst": dst})
    return targets


def memory_exists(memory_id: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT zm_memory_exists(%s)", [memory_id])
        return cursor.fetchone()[0]


def _find_duplicate(principal: Principal, scope: str, project: Project | None, draft: MemoryDraft, vector):
    """The dedup cascade of a write without a key: the same normalized content, else a near-verbatim restatement in
    the same session; among memories without a key, of the same namespace."""
    # Two identical writes at once must not both miss each other: serialize them on (owner, content).
    digest = content_hash(draft.content)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"{principal.user.id}:{digest}"])
    place = selectors.same_place(owner=principal.user, scope=scope, project=project, namespace=draft.namespace)
    found, dedup = selectors.exact_duplicate(place, digest), Dedup.EXACT
    if found is None and draft.session_id:
        nearest = selectors.nearest_in_session(place, draft.session_id, vector)
        if nearest is not None and 1 - nearest.distance >= NEAR_VERBATIM_SIMILARITY and same_signals(
            nearest.content, draft.content
        ):
            found, dedup = nearest, Dedup.NEAR_VERBATIM
    if found is None:
        return None, None
    found.owner, found.project = principal.user, project  # what the answer shows, known without a join
    return found, dedup


def _supersede_all(result: RememberResult, supersedes: list[str], reasons: dict[str, str | None],
                   targets: dict[str, Locked], principal: Principal) -> None:
    for dst in supersedes:
        outcome = _supersede_declared(targets.get(dst), result.memory, reasons.get(dst), principal)
        if outcome == "superseded":
            result.superseded.append(dst)
        else:
            logger.info("declared supersede of %s by %s skipped: %s", dst, result.memory.id, outcome)
            result.skipped.append({"dst": dst, "reason": outcome})


def _supersede_declared(target: Locked | None, successor: Memory, reason: str | None, principal: Principal) -> str:
    if target is None:
        return SkipReason.MISSING
    if target.id == successor.id:
        return SkipReason.SELF
    if not target.is_live:
        return SkipReason.DEAD
    lifecycle.supersede(target, successor=successor, reason=reason, origin=Link.Origin.DECLARED, principal=principal)
    return "superseded"


def _link_on_write(successor: Memory, spec: LinkSpec, principal: Principal, result: RememberResult) -> None:
    # Invisible and missing look the same here: not a supersede. Held, so that a purge cannot delete it under us.
    dst = lifecycle.hold_memories([spec.dst]).get(spec.dst)
    if dst is None or dst.id == successor.id:
        result.skipped.append({"dst": spec.dst, "reason": SkipReason.MISSING if dst is None else SkipReason.SELF})
        return
    _link_create(src=successor, dst=dst, type=spec.type, reason=spec.reason, principal=principal)


def _link_create(*, src: Memory, dst: Memory, type: str, reason: str | None, principal: Principal) -> Link:
    link = Link.objects.create(
        org_id=src.org_id, src=src, dst=dst, type=type, reason=reason, created_by=principal.user
    )
    event_record(src, Event.Action.LINKED, principal, {"link": link.id, "type": type, "dst": dst.id})
    return link


def _locked(memory_id: str) -> Locked:
    memory = lifecycle.lock_memories([memory_id]).get(memory_id)
    if memory is None:  # missing and invisible look the same under RLS, on purpose
        raise NotFound(Code.NOT_FOUND, "No such memory.")
    return memory


def memory_forget(*, principal: Principal, memory_id: str, reason: str | None = None) -> Memory:
    require_authoritative(principal, "forget memories")
    memory = _locked(memory_id)
    if not memory.is_live:
        raise StateConflict(Code.NOT_LIVE, f"Only a live memory can be forgotten; this one is {memory.status}.")
    lifecycle.forget(memory, reason=reason, principal=principal)
    return memory


def memory_restore(*, principal: Principal, memory_id: str) -> Memory:
    require_authoritative(principal, "restore memories")
    memory = _locked(memory_id)
    if memory.is_live:
        raise StateConflict(Code.ALREADY_LIVE, "This memory is already live.")
    if memory.key_hash is not None:  # a key has one live holder: restoring an older version would make two
        keys.lock_key(memory.key_hash)
        holder = keys.key_holder(memory.key_hash)
        if holder is not None:
            raise StateConflict(Code.KEY_TAKEN, "Another live memory holds this key now; forget it first, or write"
                                " this version's content under the key again.",
                                {"namespace": memory.namespace, "key": memory.key})
    lifecycle.restore(memory, principal=principal)
    return memory


def memory_link(*, principal: Principal, src: str, dst: str, type: str, reason: str | None = None) -> Link:
    """A graph edge only: even a supersedes link retires nothing and closes no loop."""
    if src == dst:
        raise Invalid(Code.INVALID, "A memory cannot link to itself.", {"fields": {"dst": ["Same as src."]}})
    found = lifecycle.hold_memories([src, dst])  # held: a purge cannot delete an end under the new link
    if src not in found or dst not in found:
        raise NotFound(Code.NOT_FOUND, "No such memory.")
    return _link_create(src=found[src], dst=found[dst], type=type, reason=reason, principal=principal)


def memory_check_record(
    *, principal: Principal, memory_id: str, outcome: str, detail: str, corrected_by: str | None = None
) -> Check:
    """Someone tried a memory. A failed check that names its correction retires the memory (provenance `check`)."""
    if corrected_by and outcome != Check.Outcome.FAIL:
        raise Invalid(Code.INVALID, "corrected_by: only a failed check names a correction.",
                      {"fields": {"corrected_by": ["Only with outcome 'fail'."]}})
    if corrected_by == memory_id:
        raise Invalid(Code.INVALID, "corrected_by: a memory cannot correct itself.",
                      {"fields": {"corrected_by": ["Same as the checked memory."]}})
    if corrected_by and principal.is_watcher:
        raise Forbidden(Code.SUPERSEDE_FORBIDDEN, "Watcher tokens cannot retire memories.")
    locked = lifecycle.lock_memories({memory_id, corrected_by} - {None})
    memory = locked.get(memory_id)
    if memory is None or (corrected_by and corrected_by not in locked):
        raise NotFound(Code.NOT_FOUND, "No such memory.")
    # A correction is held to the rule of a supersede even when the memory is already retired: it is named on the
    # check for everyone who sees the memory.
    refusal = corrected_by and lifecycle.successor_refusal(memory, locked[corrected_by])
    if refusal:
        raise refusal
    check = Check.objects.create(
        org_id=memory.org_id, memory=memory, outcome=outcome, detail=detail,
        corrected_by=locked.get(corrected_by), created_by=principal.user,
    )
    event_record(memory, Event.Action.CHECKED, principal, {"check": check.id, "outcome": outcome})
    if corrected_by and memory.is_live:
        lifecycle.supersede(memory, successor=locked[corrected_by], reason=detail, origin=Link.Origin.CHECK,
                            principal=principal)
    return check


# Source artifacts: a version of a source is a memory, and a changed version supersedes the previous one.

SOURCE_CONFLICT_JUDGE = "source"  # a conflict's `judge` names who raised it: here the source versioning itself


@dataclass
class SourceResult:
    memory: Memory
    created: bool
    superseded: str | None = None
    conflict: str | None = None


def _live_versions(source_id: str) -> list[Memory]:
    """The live versions of a source under RLS, the current one first."""
    live = Memory.objects.filter(source__source_id=source_id, status=Memory.Status.LIVE).defer("embedding")
    return sorted(live, key=currency, reverse=True)


def source_put(
    *, principal: Principal, source_id: str, content: str, embedded: Embedded, version: str | None = None,
    url: str | None = None, kind: str = Memory.Kind.FACT, project_slug: str | None = None,
) -> SourceResult:
    """A version of a source artifact (memory/sources.py has the rules): the first version creates the current
    memory, the same content again changes nothing, changed content supersedes the previous version (provenance
    ``source``); a watcher's changed version stays provisional beside it, in an open conflict. ``embedded`` is
    ``memory_embedding(content)``, computed by the entry point before its transaction."""
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
    memory = _memory_create(
        principal, embedded, Event.Action.SOURCE_VERSION, {"source_id": source_id, "version": version},
        scope=Memory.Scope.PROJECT if project else Memory.Scope.PERSONAL, project=project, kind=kind, content=content,
        writer=Memory.Writer.SOURCE, source={"source_id": source_id, "version": version, "url": url},
    )
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
