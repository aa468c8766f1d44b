"""The hygiene pipeline's writes: claim a review, decide on the judge's verdicts, resolve conflicts.

Each runs inside the caller's scope (tenants/rls.py). The review job (hygiene/jobs.py) claims and reads in one
transaction, calls the judge outside any, and decides in a second. Idempotent: a review is claimed with a conditional
update, pairs that already have a verdict are skipped, and only a memory that is still live is retired, so running
a job twice (a worker killed mid-job) changes nothing more.
"""
import logging
import re
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from pgvector.django import CosineDistance

from hygiene.judge import Judge, Pair
from hygiene.judge.signals import (
    is_question,
    reports_done,
    same_subject_changed_value,
    series_siblings,
    states_something,
)
from memory import conflict_queue, disagreement, lifecycle, updates
from memory.models import Conflict, Link, Memory, Review, Verdict
from memory.outbox import stale_run
from memory.vocabulary import RETIRING, Relation, Resolution
from plumbing.errors import Code, Invalid, NotFound, StateConflict
from tenants.auth import Principal, load_principal, require_authoritative

logger = logging.getLogger(__name__)
DISPUTED = {Relation.SUPERSEDES, Relation.DUPLICATE, Relation.CONTRADICTS}
SERIES = "one of a series (the same words with a third value or more)"


class Action(StrEnum):
    RETIRE = "retire"
    CONFLICT = "conflict"
    RECORD = "record"


# The kinds that state something about the world. A note is a turn of a conversation (a question, an instruction,
# an event: "when was cutover again?"), a task or an open question is a loop that its answer closes: none of them
# retires a memory on a judge's word, nor is retired by one.
STATEMENTS = frozenset({Memory.Kind.FACT, Memory.Kind.DECISION, Memory.Kind.PREFERENCE, Memory.Kind.PLAN,
                        Memory.Kind.LESSON, Memory.Kind.DIAGNOSIS})


def _a(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def retire_refusal(*, older: str, older_kind: str, newer: str, newer_kind: str, same_writer: bool) -> str | None:
    """Why a judge's retire-level verdict is queued for a person instead (None: it may retire).

    Seed 000: a wrong retirement loses a fact silently, so the judge alone retires only the narrow shape it is
    reliably right about on real stores. On the first evaluation set (bench retrieval) the embedded judge's confident
    supersedes were wrong about half the time on a store's neighbours: a teammate's memory on the same topic, a
    neighbour that shares a word and a change cue. So: the same writer (a teammate's rewrite is a person's call), the
    same statement kind, no question, the same subject with a changed value or a negation
    (signals.same_subject_changed_value), and the newer saying in words that it is an update ("moved to", "now",
    "no longer": memory.disagreement.MARKER, the words recall reads too). Without such a word the pair is a
    disagreement nobody marked, whatever the judge called it: both stay live and are shown, and a person decides (a judge's
    confident "supersedes" on a pair its labels call a contradiction was the one wrong retirement on a hand-made set).
    """
    if not same_writer:
        return "another writer's memory"
    if older_kind != newer_kind or newer_kind not in STATEMENTS:
        return f"{_a(newer_kind)} does not retire {_a(older_kind)} on a judge's word"
    if is_question(older) or is_question(newer):
        return "a question"
    if not same_subject_changed_value(older, newer):
        return "not the same subject with a changed value"
    if not disagreement.update_words(older, newer):
        return "no word of the newer says it is an update: a disagreement for a person"
    return None


def marked_update(*, older: str, older_kind: str, newer: str, newer_kind: str, same_writer: bool) -> str | None:
    """The words by which a writer's turn of a conversation says it replaces one of their earlier turns
    (memory/updates.marked: "increased my snack budget to $75" after "$65 for snacks"), or None. Such a pair retires
    on those words, whatever the judge called it: on BEAM's long conversations the embedded judge, fitted on short
    statements, called 2 of the 11 marked updates it saw a replacement and the others complementary, unrelated or a
    contradiction, while the words marked none of the 42 contradicting pairs and 1 of the 304 unlabelled pairs it
    saw (a meeting rescheduled again). Only notes (a statement kind keeps its judge's rule) and only the same
    writer."""
    if not same_writer or older_kind != Memory.Kind.NOTE or newer_kind != Memory.Kind.NOTE:
        return None
    return updates.marked(older, newer)


def queue_refusal(*, older: str, newer: str, similarity: float, older_kind: str = Memory.Kind.FACT,
                  newer_kind: str = Memory.Kind.FACT, same_writer: bool = True) -> str | None:
    """Why a verdict is only recorded, never queued (None: it may be). A question asks for a fact and changes none;
    but an open question is a loop that a later statement answers, and a person who resolves the conflict closes it
    (bench judge: 3 of the 40 held-out replacements, 1 of the tuning ones, were answers the question rule recorded).
    A note (a remark in a conversation, and the kind of a write that names none) is weighed only against an earlier
    note of the same writer, or against the writer's own loop that it reports done ("Done: Stripe key rotated"; 3 of
    the 40 tuning replacements): a remark disputes no stated fact, and one person's remark is not for anyone to
    settle against another's (on the first evaluation set the notes queued across writers were neighbours, not
    updates, and pulled a stale version up; a note that only shares a task's topic, with no word of it being done,
    was one of them). Nor is a remark that states nothing one could check (signals.states_something): small talk
    judged a "duplicate" of other small talk ("yep" / "nope") was most of the open conflicts on a long conversation
    (`make bench ARGS="retrieval --dataset conversations"`). Under JUDGE_QUEUE_SIMILARITY the pairs a judge called
    disputed were neighbours sharing a word (bench retrieval). Two remarks are weighed only when a sentence of each
    gives a different value for one thing (memory.disagreement.of_texts, the evidence recall shows as `disagrees`):
    on long conversations of untyped turns the judge's disputes between remarks were mostly neighbours on a topic."""
    if is_question(newer) or (is_question(older) and older_kind not in Memory.LOOP_KINDS):
        return "a question"
    closes_own_loop = newer_kind == Memory.Kind.NOTE and older_kind in Memory.LOOP_KINDS and reports_done(newer)
    note = Memory.Kind.NOTE in (older_kind, newer_kind)
    if note and not ((older_kind == newer_kind or closes_own_loop) and same_writer):
        return "a remark weighed against another kind or writer"
    if note and not (states_something(older) and states_something(newer)):
        return "small talk"
    if older_kind == newer_kind == Memory.Kind.NOTE:
        # Weighed on the sentences where they disagree, not on how alike the whole turns are: a turn that changes a
        # fact in passing is mostly about something else.
        return None if disagreement.of_texts(older, newer) else "two remarks that give no different values for one thing"
    if similarity < settings.JUDGE_QUEUE_SIMILARITY:
        return "too far apart"
    return None


def action_for(verdict, threshold: float, *, retire_refused: str | None = None,
               queue_refused: str | None = None) -> Action:
    """What a verdict asks of the review, before the checks on the memories' state (both live, who may replace whom).

    A replacement or a restatement at the bar retires, unless retire_refusal names a reason: then a person decides.
    A probable replacement, restatement or contradiction at JUDGE_QUEUE_THRESHOLD or more is queued: a person's
    decision is needed. Everything else, and anything queue_refusal names, is recorded without asking anyone.
    bench/judge.py scores the judge with this same rule."""
    if queue_refused:
        return Action.RECORD
    if verdict.relation in RETIRING and verdict.confidence >= threshold:
        return Action.CONFLICT if retire_refused else Action.RETIRE
    if verdict.relation in DISPUTED and verdict.confidence >= settings.JUDGE_QUEUE_THRESHOLD:
        return Action.CONFLICT
    return Action.RECORD


@dataclass(frozen=True)
class Candidate:
    id: str
    content: str
    kind: str
    authoritative: bool
    owner_id: object = None  # who wrote it (a UUID); None: unknown, never taken for the reviewed memory's writer
    similarity: float = 1.0  # cosine similarity to the reviewed memory


def rule_action(verdict, candidate: Candidate, *, content: str, kind: str, owner_id) -> tuple[Action, str]:
    """action_for with this pair's refusals, and the refusal that changed the action ('' if none did)."""
    same_writer = owner_id is not None and owner_id == candidate.owner_id
    if marked_update(older=candidate.content, older_kind=candidate.kind, newer=content, newer_kind=kind,
                     same_writer=same_writer):
        return Action.RETIRE, ""
    retire_refused = retire_refusal(older=candidate.content, older_kind=candidate.kind, newer=content,
                                    newer_kind=kind, same_writer=same_writer)
    queue_refused = queue_refusal(older=candidate.content, newer=content, similarity=candidate.similarity,
                                  older_kind=candidate.kind, newer_kind=kind, same_writer=same_writer)
    threshold = settings.JUDGE_AUTO_RESOLVE_THRESHOLD
    action = action_for(verdict, threshold, retire_refused=retire_refused, queue_refused=queue_refused)
    if action == action_for(verdict, threshold):
        return action, ""
    return action, f"{'recorded' if action == Action.RECORD else 'queued'}: {queue_refused or retire_refused}"


def _claim(review_id: int) -> bool:
    """Take the review for this run. Its memory is held first (FOR KEY SHARE), then the review row: the lock order
    of the purge (memory rows, then their reviews, verdicts and conflicts). Updating the row twice in one
    transaction (claimed, then finished with nothing to judge) makes Postgres check its foreign key at commit, which
    takes the memory's row then: behind a purge holding it, while the purge waited for this review row, a deadlock
    (found by tests/api/test_gauntlet.py: nearly every purge of a memory written a moment before)."""
    memory_id = Review.objects.filter(pk=review_id).values_list("memory_id", flat=True).first()
    if memory_id is None or not lifecycle.hold_memories([memory_id]):
        return False  # purged (with its review) before the worker came to it
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
    live_before = Memory.objects.filter(place, status=Memory.Status.LIVE, created_at__lte=memory.created_at).exclude(
        pk__in=skip).annotate(distance=CosineDistance("embedding", memory.embedding))
    nearest = list(live_before.filter(distance__lte=1 - settings.JUDGE_CANDIDATE_SIMILARITY)
                   .order_by("distance")[: settings.JUDGE_CANDIDATES])
    disagreeing = _disagreeing(memory, live_before.filter(owner_id=memory.owner_id).exclude(
        pk__in=[m.id for m in nearest]))
    return [Candidate(m.id, m.content, m.kind, m.authoritative, m.owner_id, 1 - m.distance)
            for m in nearest + disagreeing]


DISAGREEING_CANDIDATES = 3


def _disagreeing(memory: Memory, earlier) -> list[Memory]:
    """The writer's earlier memories that a sentence of the new one gives another value to (the evidence recall
    shows as `disagrees`), found by their words: a turn of a long conversation that changes a fact in passing is
    mostly about something else, so the memory it changes is rarely among its nearest by meaning (on the long
    conversations' tuning half 23 of 55 undeclared replacements never reached the judge, 12 with these candidates).
    At most DISAGREEING_CANDIDATES, best matches first, found by the 16 longest words of its sentences with values,
    the questions that state the writer's own situation with a value too (disagreement.claims: most turns of a long
    conversation are such questions), and kept when they disagree or the new one says in words that it updates them
    (marked_update)."""
    words = sorted({w for sentence in disagreement.claims(memory.content) if sentence.values
                    for w in re.findall(r"[a-z]{3,}", sentence.text.lower()) if w not in disagreement.STOP},
                   key=lambda w: (-len(w), w))[:16]
    if not words:
        return []
    query = " | ".join(words)  # letters only: a valid tsquery
    matches = earlier.extra(  # the generated `search` column is not a model field; its GIN index answers @@
        where=["search @@ to_tsquery('english', %s)"], params=[query],
        select={"rank": "ts_rank(search, to_tsquery('english', %s))"}, select_params=[query],
    ).order_by("-rank")[:20]
    return [m for m in matches if disagreement.of_texts(m.content, memory.content) or marked_update(
        older=m.content, older_kind=m.kind, newer=memory.content, newer_kind=memory.kind, same_writer=True)
    ][:DISAGREEING_CANDIDATES]


@dataclass(frozen=True)
class ReviewWork:
    """What a claimed review asks the judge: the new memory and its candidates."""

    review_id: int
    memory_id: str
    token_id: str | None
    candidates: list[Candidate]
    pairs: list[Pair]
    owner_id: object = None


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
    return ReviewWork(review_id, memory.id, memory.token_id, candidates, pairs, memory.owner_id)


def review_finish(*, review_id: int, state: Review.State, error: str = "") -> None:
    Review.objects.filter(pk=review_id).update(state=state, last_error=error, updated_at=timezone.now())


def review_decide(*, work: ReviewWork, verdicts: list, judge: Judge, latency_ms: float, scope) -> list[str]:
    """Act on the judge's verdicts, as the writer of the reviewed memory."""
    principal = load_principal(scope, token_id=work.token_id)
    # One of a series (signals.series_siblings): recorded, so a burst of templated writes asks nobody 49 times.
    series = series_siblings(work.pairs[0].newer, [c.content for c in work.candidates]) if work.pairs else set()
    ruled = [(Action.RECORD, f"recorded: {SERIES}") if i in series else
             rule_action(verdict, candidate, content=pair.newer, kind=pair.newer_kind, owner_id=work.owner_id)
             for i, (candidate, verdict, pair) in enumerate(zip(work.candidates, verdicts, work.pairs))]
    acting = acting_verdicts(verdicts, [action for action, _ in ruled])
    # Every memory of the review at once, in id order: each pair's lock below is then one this transaction holds.
    # Pair by pair, the second pair's lower id was taken after a higher one, and a writer taking the two in id order
    # deadlocked with it (tests/api/test_gauntlet.py).
    lifecycle.lock_memories([work.memory_id, *(candidate.id for candidate in work.candidates)])
    decisions = [
        decide_pair(work.memory_id, candidate, verdict, judge, latency_ms, principal, acting.get(i, Action.RECORD),
                ruled[i][1])
        for i, (candidate, verdict) in enumerate(zip(work.candidates, verdicts))
    ]
    review_finish(review_id=work.review_id, state=Review.State.DONE)
    return decisions


def acting_verdicts(verdicts: list, actions: list[Action]) -> dict[int, Action]:
    """Which of one write's verdicts are acted on, and how: at most JUDGE_ACTIONS_PER_WRITE, the retirement first,
    then the most confident, and at most one retirement (a second retire-level verdict is queued). An update replaces
    one fact; when the judge finds several probable predecessors, all but the likeliest are mostly neighbours it could
    not tell apart, and a conflict for each of them is a queue nobody reads. The others are only recorded."""
    order = sorted(
        (i for i, action in enumerate(actions) if action != Action.RECORD),
        key=lambda i: (actions[i] != Action.RETIRE, -verdicts[i].confidence),
    )[: settings.JUDGE_ACTIONS_PER_WRITE]
    return {i: Action.RETIRE if rank == 0 and actions[i] == Action.RETIRE else Action.CONFLICT
            for rank, i in enumerate(order)}


def decide_pair(memory_id: str, candidate: Candidate, verdict, judge, latency_ms: float, principal: Principal,
            action: Action | None = None, refused: str = "") -> str:
    """Act on one verdict: `action` as chosen for the whole write (acting_verdicts); alone, the rule's own."""
    # Lock both and re-read: the state may have moved while the judge was thinking.
    locked = lifecycle.lock_memories([memory_id, candidate.id])
    newer, older = locked.get(memory_id), locked.get(candidate.id)
    if newer is None or older is None or Verdict.objects.filter(memory_id=memory_id, other_id=candidate.id).exists():
        return "skipped"
    if action is None:
        action, refused = rule_action(verdict, candidate, content=newer.content, kind=newer.kind,
                                      owner_id=newer.owner_id)
    both_live = newer.is_live and older.is_live
    # The verdict names who answered when that is not the judge asked (a fallback while vLLM is down).
    judge_name = verdict.judge or judge.name
    prompt_version = verdict.prompt_version or judge.prompt_version
    # Why the rule did not do what the verdict alone asked: written on the verdict and the conflict.
    rationale = f"{verdict.rationale}; {refused}" if refused else verdict.rationale
    # A provisional (watcher) memory never retires an authoritative one on a judge's word alone, nor does one that
    # some who see the older could not see (lifecycle.successor_refusal), nor does anything retire a memory that
    # holds a key, which only a write of its key replaces (memory/keys.py): a human decides those.
    may_retire = (newer.authoritative or not older.authoritative) and older.key_hash is None and (
        not both_live or lifecycle.successor_refusal(older, newer) is None
    )
    if both_live and action == Action.RETIRE and may_retire:
        decision = Verdict.Decision.AUTO_RETIRED
        reason = f"{judge_name} judged {verdict.relation} ({verdict.confidence:.2f}): {verdict.rationale}"
        if words := marked_update(older=older.content, older_kind=older.kind, newer=newer.content,
                                  newer_kind=newer.kind, same_writer=newer.owner_id == older.owner_id):
            reason = f"the newer says “{words}”; {reason}"
        lifecycle.supersede(older, successor=newer, reason=reason, origin=Link.Origin.JUDGE, principal=principal)
    elif both_live and action != Action.RECORD:
        queued = not conflict_queue.in_unsettled_conflict([older.id, newer.id])
        decision = Verdict.Decision.CONFLICT if queued else Verdict.Decision.SHOWN
        Conflict.objects.create(
            org_id=newer.org_id, a=older, b=newer, relation=verdict.relation, confidence=verdict.confidence,
            judge=judge_name, prompt_version=prompt_version, rationale=rationale,
            status=Conflict.Status.OPEN if queued else Conflict.Status.SHOWN,
        )
    else:
        decision = Verdict.Decision.RECORDED
    Verdict.objects.create(
        org_id=newer.org_id, memory=newer, other=older, relation=verdict.relation, confidence=verdict.confidence,
        rationale=rationale, judge=judge_name, prompt_version=prompt_version, latency_ms=latency_ms,
        decision=decision, same_token=bool(newer.token_id and newer.token_id == older.token_id),
    )
    return decision


def conflict_resolve(*, principal: Principal, conflict_id: str, decision: str, winner: str | None) -> Conflict:
    """A human settles a conflict: retire the loser (provenance `review`), or keep both."""
    require_authoritative(principal, "resolve conflicts")
    if decision not in set(Resolution):
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
    if conflict.status not in Conflict.UNRESOLVED:
        raise StateConflict(Code.ALREADY_RESOLVED, "This conflict has already been resolved.")
    # A winner outside the pair is refused whatever the decision: a client that names one meant something else.
    if (decision == Resolution.SUPERSEDE or winner is not None) and winner not in {conflict.a_id, conflict.b_id}:
        raise Invalid(Code.INVALID, "winner must be one of the conflict's two memories.",
                      {"fields": {"winner": ["Not in this conflict."]}})
    if decision == Resolution.SUPERSEDE:
        loser_id = conflict.b_id if winner == conflict.a_id else conflict.a_id
        if locked[loser_id].is_live:
            lifecycle.supersede(locked[loser_id], successor=locked[winner], reason=f"review by {principal.user.email}",
                                origin=Link.Origin.REVIEW, principal=principal)
    conflict.status, conflict.resolution = Conflict.Status.RESOLVED, decision
    conflict.resolved_by, conflict.resolved_at = principal.user, timezone.now()
    conflict.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    conflict_queue.queue_next(conflict)
    return conflict


READER = "reader"  # the judge named on a conflict a person opened by settling what recall showed as a disagreement


def disagreement_settle(*, principal: Principal, memory_id: str, other_id: str, decision: str) -> Conflict:
    """A person settles a disagreement recall showed (two live memories giving different values for one thing, or
    a yes and a no): the newer replaces the older, as a human review does (origin `review`), or both hold, and recall
    stops flagging the pair. Kept as a resolved conflict, so who decided and when is on record like any conflict's;
    an open conflict of the pair is the one resolved."""
    require_authoritative(principal, "settle disagreements")
    if decision not in set(Resolution):
        raise Invalid(Code.INVALID, "decision must be 'supersede' or 'keep_both'.",
                      {"fields": {"decision": ["Invalid."]}})
    locked = lifecycle.lock_memories([memory_id, other_id])
    if memory_id == other_id or len(locked) != 2:
        raise NotFound(Code.NOT_FOUND, "No such pair of memories.")
    older, newer = sorted(locked.values(), key=lambda m: (m.created_at, m.id))
    if not (older.is_live and newer.is_live):
        raise StateConflict(Code.NOT_LIVE, "Both memories must be live to settle their disagreement.")
    pair = Conflict.objects.filter(Q(a=older, b=newer) | Q(a=newer, b=older))
    if decision == Resolution.KEEP_BOTH:  # said again (a second click, a second tab): already on record
        kept = pair.filter(status=Conflict.Status.RESOLVED, resolution=Resolution.KEEP_BOTH).first()
        if kept is not None:
            return kept
    conflict = pair.filter(status__in=Conflict.UNRESOLVED).first()
    if conflict is None:
        conflict = Conflict.objects.create(org_id=newer.org_id, a=older, b=newer, relation=Relation.CONTRADICTS,
                                           judge=READER, rationale="a disagreement recall showed")
    return conflict_resolve(principal=principal, conflict_id=conflict.id, decision=decision,
                            winner=newer.id if decision == Resolution.SUPERSEDE else None)
