"""The hygiene pipeline's writes: review an undeclared write through the judge; resolve conflicts.

review_run reads and commits, calls the judge outside any transaction, then writes in a new one. It is idempotent:
a review is claimed with a conditional update, pairs that already have a verdict are skipped, and a retirement only
happens to a memory that is still live, so running a job twice (a worker killed mid-job) changes nothing more.
"""
import logging
import time
from datetime import timedelta
from dataclasses import dataclass

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from pgvector.django import CosineDistance

from config.errors import Conflict as ConflictError
from config.errors import Invalid, NotFound
from hygiene.judge import JudgeUnavailable, Pair, get_judge
from hygiene.models import Conflict, Review, Verdict
from memory.models import Link, Memory
from memory.services import memory_supersede
from tenants import rls
from tenants.auth import Principal, load_principal

logger = logging.getLogger(__name__)
RETIRING = {"supersedes", "duplicate"}
DISPUTED = {"supersedes", "duplicate", "contradicts"}


@dataclass(frozen=True)
class Candidate:
    id: str
    content: str
    kind: str
    authoritative: bool


STALE_RUN = timedelta(minutes=10)  # a review "running" this long lost its worker; it may be claimed again


def _claim(review_id: int) -> bool:
    claimable = Q(state__in=[Review.State.PENDING, Review.State.UNAVAILABLE]) | Q(
        state=Review.State.RUNNING, updated_at__lt=timezone.now() - STALE_RUN
    )
    claimed = Review.objects.filter(claimable, pk=review_id).update(
        state=Review.State.RUNNING, attempts=F("attempts") + 1, updated_at=timezone.now()
    )
    return claimed == 1


def _candidates(memory: Memory) -> list[Candidate]:
    """The nearest live memories in the same place that no link, declaration or earlier verdict already covers."""
    place = Q(scope=memory.scope, project_id=memory.project_id)
    if memory.scope == Memory.Scope.PERSONAL:
        place &= Q(owner_id=memory.owner_id)
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


def review_run(*, review_id: int, scope: rls.Scope, final_attempt: bool = True) -> str:
    """Review one undeclared write. Returns what happened, for the job's result."""
    with rls.tenant_scope(scope):
        if not _claim(review_id):
            return "already_claimed_or_done"
        review = Review.objects.select_related("memory").get(pk=review_id)
        memory = review.memory
        candidates = _candidates(memory) if memory.is_live else []
    if not candidates:
        _finish(review_id, scope, Review.State.DONE)
        return "no_candidates"

    judge = get_judge()
    pairs = [Pair(older=c.content, newer=memory.content, older_kind=c.kind, newer_kind=memory.kind) for c in candidates]
    started = time.perf_counter()
    try:
        verdicts = judge.judge(pairs)  # outside any transaction: never hold locks while a model thinks
    except JudgeUnavailable as error:
        state = Review.State.UNAVAILABLE if final_attempt else Review.State.PENDING
        _finish(review_id, scope, state, error=str(error))
        if final_attempt:
            logger.error("review %s: judge unavailable after every retry: %s", review_id, error)
            return "judge_unavailable"
        raise
    latency_ms = (time.perf_counter() - started) * 1000 / len(pairs)

    decisions = []
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=memory.token_id)
        for candidate, verdict in zip(candidates, verdicts):
            decisions.append(_decide(memory.id, candidate, verdict, judge, latency_ms, principal))
        Review.objects.filter(pk=review_id).update(state=Review.State.DONE, last_error="", updated_at=timezone.now())
    return ",".join(decisions)


def _finish(review_id: int, scope: rls.Scope, state: str, error: str = "") -> None:
    with rls.tenant_scope(scope):
        Review.objects.filter(pk=review_id).update(state=state, last_error=error, updated_at=timezone.now())


def _decide(memory_id: str, candidate: Candidate, verdict, judge, latency_ms: float, principal: Principal) -> str:
    # Lock both, in id order, and re-read: the state may have moved while the judge was thinking.
    locked = {m.id: m for m in Memory.objects.select_for_update().filter(pk__in=sorted([memory_id, candidate.id]))}
    newer, older = locked.get(memory_id), locked.get(candidate.id)
    if newer is None or older is None or Verdict.objects.filter(memory_id=memory_id, other_id=candidate.id).exists():
        return "skipped"
    both_live = newer.is_live and older.is_live
    # A provisional (watcher) memory never retires an authoritative one on a judge's word alone.
    may_retire = newer.authoritative or not older.authoritative
    if (both_live and verdict.relation in RETIRING and verdict.confidence >= settings.JUDGE_AUTO_RESOLVE_THRESHOLD
            and may_retire):
        decision = Verdict.Decision.AUTO_RETIRED
        reason = f"{judge.name} judged {verdict.relation} ({verdict.confidence:.2f}): {verdict.rationale}"
        memory_supersede(target=older, successor=newer, reason=reason, principal=principal, origin="judge")
    elif both_live and verdict.relation in DISPUTED:
        decision = Verdict.Decision.CONFLICT
        Conflict.objects.create(
            org_id=newer.org_id, a=older, b=newer, relation=verdict.relation, confidence=verdict.confidence,
            judge=judge.name, rationale=verdict.rationale,
        )
    else:
        decision = Verdict.Decision.RECORDED
    Verdict.objects.create(
        org_id=newer.org_id, memory=newer, other=older, relation=verdict.relation, confidence=verdict.confidence,
        rationale=verdict.rationale, judge=judge.name, prompt_version=judge.prompt_version, latency_ms=latency_ms,
        decision=decision, same_token=bool(newer.token_id and newer.token_id == older.token_id),
    )
    return decision


def conflict_resolve(*, principal: Principal, conflict_id: str, decision: str, winner: str | None) -> Conflict:
    """A human settles a conflict: retire the loser (provenance `review`), or keep both."""
    if decision not in {"supersede", "keep_both"}:
        raise Invalid("invalid", "decision must be 'supersede' or 'keep_both'.", {"fields": {"decision": ["Invalid."]}})
    with rls.tenant_scope(principal.scope):
        conflict = Conflict.objects.select_for_update().filter(pk=conflict_id).first()
        if conflict is None:
            raise NotFound("not_found", "No such conflict.")
        if conflict.status != Conflict.Status.OPEN:
            raise ConflictError("already_resolved", "This conflict has already been resolved.")
        if decision == "supersede":
            if winner not in {conflict.a_id, conflict.b_id}:
                raise Invalid("invalid", "winner must be one of the conflict's two memories.",
                              {"fields": {"winner": ["Not in this conflict."]}})
            loser_id = conflict.b_id if winner == conflict.a_id else conflict.a_id
            locked = {m.id: m for m in Memory.objects.select_for_update().filter(pk__in=sorted([winner, loser_id]))}
            if locked[loser_id].is_live:
                memory_supersede(target=locked[loser_id], successor=locked[winner], principal=principal,
                                 reason=f"review by {principal.user.email}", origin="review")
        conflict.status, conflict.resolution = Conflict.Status.RESOLVED, decision
        conflict.resolved_by, conflict.resolved_at = principal.user, timezone.now()
        conflict.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    return conflict
