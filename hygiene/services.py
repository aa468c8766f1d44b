"""The hygiene pipeline's writes: claim a review, decide on the judge's verdicts, resolve conflicts.

Each runs inside the caller's scope (tenants/rls.py). The review job (hygiene/jobs.py) claims and reads in one
transaction, calls the judge outside any, and decides in a second. Idempotent: a review is claimed with a conditional
update, pairs that already have a verdict are skipped, and only a memory that is still live is retired, so running
a job twice (a worker killed mid-job) changes nothing more.
"""
import logging
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from pgvector.django import CosineDistance

from config.errors import Code, Invalid, NotFound
from config.errors import Conflict as ConflictError
from hygiene.judge import Judge, Pair
from hygiene.models import Conflict, Review, Verdict
from hygiene.outbox import stale_run
from memory import lifecycle
from memory.models import Link, Memory
from tenants.auth import Principal, load_principal, require_authoritative

logger = logging.getLogger(__name__)
RETIRING = {"supersedes", "duplicate"}
DISPUTED = {"supersedes", "duplicate", "contradicts"}


class Action(StrEnum):
    RETIRE = "retire"
    CONFLICT = "conflict"
    RECORD = "record"


def action_for(verdict, threshold: float) -> Action:
    """What a verdict asks of the review, before the checks on the memories themselves (both live, who may replace
    whom). Only a replacement or a restatement at the bar retires; a probable replacement below it, or a
    contradiction, needs a person; what the judge calls complementary or unrelated is recorded without asking anyone.
    bench/judge.py scores the judge with this same rule."""
    if verdict.relation in RETIRING and verdict.confidence >= threshold:
        return Action.RETIRE
    if verdict.relation in DISPUTED:
        return Action.CONFLICT
    return Action.RECORD


@dataclass(frozen=True)
class Candidate:
    id: str
    content: str
    kind: str
    authoritative: bool




def _claim(review_id: int) -> bool:
    claimable = Q(state__in=[Review.State.PENDING, Review.State.UNAVAILABLE]) | Q(
        state=Review.State.RUNNING, updated_at__lt=timezone.now() - stale_run()
    )
    claimed = Review.objects.filter(claimable, pk=review_id).update(
        state=Review.State.RUNNING, attempts=F("attempts") + 1, updated_at=timezone.now()
    )
    return claimed == 1


def _candidates(memory: Memory) -> list[Candidate]:
    """The nearest live memories that the new one may replace, that no link, declaration or earlier verdict covers.

    Where: every live memory of the same project, whoever wrote it (a teammate's rewrite is the common case; RLS
    shows the reviewing writer what a project member sees), and the writer's own personal memories (the portable layer
    that project work supersedes). A personal write looks at the writer's personal memories only. Ranked by
    similarity and capped at JUDGE_CANDIDATES, with a low floor (JUDGE_CANDIDATE_SIMILARITY): rewrites share
    few words, and on the evaluation set the replaced memory was within the 5 nearest for 28 of 30 undeclared
    replacements while 17 of them were under the old 0.45 floor.
    """
    personal = Q(scope=Memory.Scope.PERSONAL, owner_id=memory.owner_id)
    place = personal if memory.scope == Memory.Scope.PERSONAL else (
        Q(scope=Memory.Scope.PROJECT, project_id=memory.project_id) | personal)
    linked = Link.objects.filter(Q(src=memory) | Q(dst=memory)).values_list("src_id", "dst_id")
    decided = Verdict.objects.filter(memory=memory).values_list("other_id", flat=True)
    skip = {memory.id} | {i for pair in linked for i in pair} | set(decided)
    nearest = (
        Memory.objects.filter(place, status=Memory.Status.LIVE, created_at__lte=memory.created_at)
        .exclude(pk__in=skip)
        .annotate(distance=CosineDistance("embedding", memory.embedding))
        .filter(distance__lte=1 - settings.JUDGE_CANDIDATE_SIMILARITY)
        .order_by("distance")[: settings.JUDGE_CANDIDATES]
    )
    return [Candidate(m.id, m.content, m.kind, m.authoritative) for m in nearest]


@dataclass(frozen=True)
class ReviewWork:
    """What a claimed review asks the judge: the new memory and its candidates."""

    review_id: int
    memory_id: str
    token_id: str | None
    candidates: list[Candidate]
    pairs: list[Pair]


def review_claim(*, review_id: int) -> ReviewWork | None:
    """Claim a review and read what the judge must see; None when there is nothing (more) to do."""
    if not _claim(review_id):
        return None
    memory = Review.objects.select_related("memory").get(pk=review_id).memory
    candidates = _candidates(memory) if memory.is_live else []
    if not candidates:
        review_finish(review_id=review_id, state=Review.State.DONE)
        return None
    pairs = [Pair(older=c.content, newer=memory.content, older_kind=c.kind, newer_kind=memory.kind) for c in candidates]
    return ReviewWork(review_id, memory.id, memory.token_id, candidates, pairs)


def review_finish(*, review_id: int, state: Review.State, error: str = "") -> None:
    Review.objects.filter(pk=review_id).update(state=state, last_error=error, updated_at=timezone.now())


def review_decide(*, work: ReviewWork, verdicts: list, judge: Judge, latency_ms: float, scope) -> list[str]:
    """Act on the judge's verdicts, as the writer of the reviewed memory."""
    principal = load_principal(scope, token_id=work.token_id)
    acting = acting_verdicts(verdicts, settings.JUDGE_AUTO_RESOLVE_THRESHOLD)
    decisions = [
        _decide(work.memory_id, candidate, verdict, judge, latency_ms, principal, acting.get(i, Action.RECORD))
        for i, (candidate, verdict) in enumerate(zip(work.candidates, verdicts))
    ]
    review_finish(review_id=work.review_id, state=Review.State.DONE)
    return decisions


def acting_verdicts(verdicts: list, threshold: float) -> dict[int, Action]:
    """Which of one write's verdicts are acted on, and how: at most JUDGE_ACTIONS_PER_WRITE, the retirements first,
    then the most confident, and at most one retirement (the judge retires one predecessor per write; a second
    retire-level verdict is queued for a person). An update replaces one fact; when the judge finds several probable
    predecessors, all but the likeliest are mostly neighbours it could not tell apart, and a conflict for each of
    them is a queue nobody reads. The others are only recorded as verdicts."""
    order = sorted(
        (i for i, v in enumerate(verdicts) if action_for(v, threshold) != Action.RECORD),
        key=lambda i: (action_for(verdicts[i], threshold) != Action.RETIRE, -verdicts[i].confidence),
    )[: settings.JUDGE_ACTIONS_PER_WRITE]
    return {i: Action.RETIRE if rank == 0 and action_for(verdicts[i], threshold) == Action.RETIRE else Action.CONFLICT
            for rank, i in enumerate(order)}


def _decide(memory_id: str, candidate: Candidate, verdict, judge, latency_ms: float, principal: Principal,
            action: Action | None = None) -> str:
    """Act on one verdict: `action` as chosen for the whole write (acting_verdicts); alone, the verdict's own."""
    if action is None:
        action = action_for(verdict, settings.JUDGE_AUTO_RESOLVE_THRESHOLD)
    # Lock both and re-read: the state may have moved while the judge was thinking.
    locked = lifecycle.lock_memories([memory_id, candidate.id])
    newer, older = locked.get(memory_id), locked.get(candidate.id)
    if newer is None or older is None or Verdict.objects.filter(memory_id=memory_id, other_id=candidate.id).exists():
        return "skipped"
    both_live = newer.is_live and older.is_live
    # The verdict names who answered when that is not the judge asked (a fallback while vLLM is down).
    judge_name = verdict.judge or judge.name
    prompt_version = verdict.prompt_version or judge.prompt_version
    # A provisional (watcher) memory never retires an authoritative one on a judge's word alone, nor does one that
    # some who see the older could not see (lifecycle.successor_refusal): a human decides those.
    may_retire = (newer.authoritative or not older.authoritative) and (
        not both_live or lifecycle.successor_refusal(older, newer) is None
    )
    if both_live and action == Action.RETIRE and may_retire:
        decision = Verdict.Decision.AUTO_RETIRED
        reason = f"{judge_name} judged {verdict.relation} ({verdict.confidence:.2f}): {verdict.rationale}"
        lifecycle.supersede(older, successor=newer, reason=reason, origin=Link.Origin.JUDGE, principal=principal)
    elif both_live and action != Action.RECORD:
        decision = Verdict.Decision.CONFLICT
        Conflict.objects.create(
            org_id=newer.org_id, a=older, b=newer, relation=verdict.relation, confidence=verdict.confidence,
            judge=judge_name, prompt_version=prompt_version, rationale=verdict.rationale,
        )
    else:
        decision = Verdict.Decision.RECORDED
    Verdict.objects.create(
        org_id=newer.org_id, memory=newer, other=older, relation=verdict.relation, confidence=verdict.confidence,
        rationale=verdict.rationale, judge=judge_name, prompt_version=prompt_version, latency_ms=latency_ms,
        decision=decision, same_token=bool(newer.token_id and newer.token_id == older.token_id),
    )
    return decision


def conflict_resolve(*, principal: Principal, conflict_id: str, decision: str, winner: str | None) -> Conflict:
    """A human settles a conflict: retire the loser (provenance `review`), or keep both."""
    require_authoritative(principal, "resolve conflicts")
    if decision not in {"supersede", "keep_both"}:
        raise Invalid(Code.INVALID, "decision must be 'supersede' or 'keep_both'.",
                      {"fields": {"decision": ["Invalid."]}})
    conflict = Conflict.objects.filter(pk=conflict_id).first()
    if conflict is None:
        raise NotFound(Code.NOT_FOUND, "No such conflict.")
    # Its memories first, then the conflict: the order of a purge (memories, then their conflicts), so the two never
    # wait for each other in a circle. A purge that got there first took the conflict with it: 404.
    locked = lifecycle.lock_memories([conflict.a_id, conflict.b_id])
    conflict = Conflict.objects.select_for_update().filter(pk=conflict_id).first()
    if conflict is None:
        raise NotFound(Code.NOT_FOUND, "No such conflict.")
    if conflict.status != Conflict.Status.OPEN:
        raise ConflictError(Code.ALREADY_RESOLVED, "This conflict has already been resolved.")
    if decision == "supersede":
        if winner not in {conflict.a_id, conflict.b_id}:
            raise Invalid(Code.INVALID, "winner must be one of the conflict's two memories.",
                          {"fields": {"winner": ["Not in this conflict."]}})
        loser_id = conflict.b_id if winner == conflict.a_id else conflict.a_id
        if locked[loser_id].is_live:
            lifecycle.supersede(locked[loser_id], successor=locked[winner], reason=f"review by {principal.user.email}",
                                origin=Link.Origin.REVIEW, principal=principal)
    conflict.status, conflict.resolution = Conflict.Status.RESOLVED, decision
    conflict.resolved_by, conflict.resolved_at = principal.user, timezone.now()
    conflict.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    return conflict
