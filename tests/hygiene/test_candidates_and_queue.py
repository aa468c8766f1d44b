"""Which memories a review looks at (every visible live memory of the project, any writer, and the writer's own
personal ones; RLS applies to the reviewing identity), and when a verdict asks a person (the queue rule)."""
import pytest

from hygiene.judge import Judgement
from hygiene.services import Action, action_for, queue_refusal, retire_refusal
from memory.models import Conflict, Link, Memory, Verdict
from tenants import rls
from tests.support.tenants import build_tenant
from tests.support.memories import remember_id


def judged_as_member(tenant, memory_id: str) -> list[Verdict]:
    """The verdicts on a member's write, read as that member (the admin cannot see the member's personal memories)."""
    with rls.tenant_scope(rls.Scope(org_id=tenant.org.id, user_id=tenant.member.id)):
        return list(Verdict.objects.filter(memory_id=memory_id))


def conflicts_of(tenant, memory_id: str) -> list[Conflict]:
    with rls.tenant_scope(rls.Scope(org_id=tenant.org.id, user_id=tenant.member.id)):
        return list(Conflict.objects.filter(b_id=memory_id, status=Conflict.Status.OPEN))


@pytest.mark.slow
def test_a_teammates_project_memory_and_the_writers_personal_ones_are_candidates(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "complementary", "confidence": 0.8, "rationale": "both true"}
    acme = build_tenant("acme")
    admin, member = api(acme.admin_token), api(acme.member_token)
    teammate = remember_id(api, acme.admin_token, "Web deploys go out on Mondays at 10:00.", project="web")
    other_project = remember_id(api, acme.admin_token, "Ops deploys go out on Mondays at 10:00.", project="ops")
    admins_personal = remember_id(api, acme.admin_token, "I deploy web on Mondays at 10:00.", scope="personal")
    mine = remember_id(api, acme.member_token, "My web deploys go out on Mondays.", scope="personal")
    assert admin and member  # both clients validate their responses against the OpenAPI document
    work()
    new = remember_id(api, acme.member_token, "Web deploys moved to Thursdays at 15:00.")  # project web (the token's)
    work()
    judged = {v.other_id for v in judged_as_member(acme, new)}
    # Another writer's project memory and the writer's own personal one; never another project's, nor a
    # personal memory of someone else (RLS hides it from the member anyway).
    assert judged == {teammate, mine}
    assert other_project not in judged and admins_personal not in judged


@pytest.mark.slow
def test_a_personal_write_looks_at_the_writers_personal_memories_only(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "unrelated", "confidence": 0.9, "rationale": "no"}
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "The web team standup is at 09:30.")
    mine = remember_id(api, acme.member_token, "I join the web standup at 09:30.", scope="personal")
    work()
    new = remember_id(api, acme.member_token, "I join the web standup at 10:00 now.", scope="personal")
    work()
    assert {v.other_id for v in judged_as_member(acme, new)} == {mine}


@pytest.mark.slow
def test_a_turn_that_changes_a_fact_in_passing_is_judged_against_the_turn_it_changes(api, work, settings, fake_vllm):
    """The changed turn is far from the new one by meaning (both are mostly about something else), so it is not
    among the nearest; it is a candidate because a sentence of each gives another value for the same thing."""
    settings.JUDGE_CANDIDATES = 1
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.8, "rationale": "moved"}
    acme = build_tenant("acme")
    first = remember_id(api, acme.member_token, "Can you help me plan meals for the week? I want less meat. "
                                             "The launch is on March 3, marketing is lined up.")
    nearer = remember_id(api, acme.member_token, "The release script fails on the tag step again, I am puzzled.")
    work()
    new = remember_id(api, acme.member_token, "The release script passes the tag step now, thanks a lot. "
                                           "Heads up, the launch is on March 17.")
    work()
    assert {v.other_id for v in judged_as_member(acme, new)} == {nearer, first}
    (conflict,) = conflicts_of(acme, new)
    assert (conflict.a_id, conflict.relation) == (first, "supersedes")


@pytest.mark.slow
@pytest.mark.parametrize("relation", ["complementary", "contradicts", "unrelated"])
def test_a_writers_turn_that_says_it_moved_a_value_retires_their_earlier_turn(api, work, fake_vllm, relation):
    """The words bind the new value to the thing the earlier turn gave a value for ("moved to March 17" after
    "the launch is on March 3"): the older retires whatever the judge called it, the words quoted in the reason."""
    fake_vllm.verdict = {"relation": relation, "confidence": 0.95, "rationale": "judged"}
    acme = build_tenant("acme")
    first = remember_id(api, acme.member_token, "Can you help me plan meals for the week? I want less meat. "
                                             "The launch is on March 3, marketing is lined up.")
    work()
    new = remember_id(api, acme.member_token, "The release script passes the tag step now, thanks a lot. "
                                           "Heads up, the launch moved to March 17.")
    work()
    assert [v.decision for v in judged_as_member(acme, new) if v.other_id == first] == ["auto_retired"]
    with rls.tenant_scope(acme.scope):
        assert Memory.objects.get(pk=first).status == "superseded"
        link = Link.objects.get(src_id=new, dst_id=first)
    assert link.reason.startswith("the newer says “moved to March 17”; ") and link.origin == "judge"


@pytest.mark.slow
def test_another_writers_turn_that_moves_a_value_retires_nothing(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.95, "rationale": "moved"}
    acme = build_tenant("acme")
    first = remember_id(api, acme.admin_token, "The launch is on March 3, marketing is lined up.", project="web")
    work()
    new = remember_id(api, acme.member_token, "Heads up, the launch moved to March 17.")
    work()
    assert [v.decision for v in judged_as_member(acme, new) if v.other_id == first] == ["recorded"]
    with rls.tenant_scope(acme.scope):
        assert Memory.objects.get(pk=first).status == "live"


@pytest.mark.slow
def test_only_the_likeliest_probable_predecessors_are_queued(api, work, settings, fake_vllm):
    """Every candidate judged a probable replacement below the bar: JUDGE_ACTIONS_PER_WRITE conflicts, the rest
    only recorded. Of the write's conflicts one is queued, the other shown beside it (one open conflict per thing)."""
    settings.JUDGE_ACTIONS_PER_WRITE = 2
    fake_vllm.verdict = {"relation": "complementary", "confidence": 0.9, "rationale": "another asset"}
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "The web cache TTL is 60 seconds.")
    remember_id(api, acme.member_token, "The web cache TTL for images is 1 hour.")
    remember_id(api, acme.member_token, "The web cache TTL for fonts is 1 day.")
    work()  # none of the three in an open conflict: each may be queued against the next write
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.87, "rationale": "maybe newer"}
    new = remember_id(api, acme.member_token, "Web cache TTL is 5 minutes now.")
    work()
    assert sorted(v.decision for v in judged_as_member(acme, new)) == ["conflict", "recorded", "shown"]
    with rls.tenant_scope(acme.scope):
        assert sorted(Conflict.objects.filter(b_id=new).values_list("status", flat=True)) == ["open", "shown"]


@pytest.mark.slow
def test_the_judge_retires_one_predecessor_per_write_and_queues_a_second(api, work, settings, fake_vllm):
    settings.JUDGE_ACTIONS_PER_WRITE = 2
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.95, "rationale": "newer"}
    acme = build_tenant("acme")
    first = remember_id(api, acme.member_token, "The web cache TTL is 60 seconds.", kind="fact")
    # Linked, so that the second one's own review does not judge the first (a linked pair is never judged).
    remember_id(api, acme.member_token, "The web cache TTL for images is 1 hour.", kind="fact",
             links=[{"type": "relates_to", "dst": first}])
    new = remember_id(api, acme.member_token, "Web cache TTL is 5 minutes now.", kind="fact")
    work()
    assert sorted(v.decision for v in judged_as_member(acme, new)) == ["auto_retired", "conflict"]


@pytest.mark.slow
def test_a_confident_complementary_or_unrelated_verdict_opens_no_conflict(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "complementary", "confidence": 0.95, "rationale": "another scope"}
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "Staging web deploys go out on Mondays.")
    new = remember_id(api, acme.member_token, "Production web deploys go out on Thursdays.")
    work()
    assert [v.decision for v in judged_as_member(acme, new)] == ["recorded"]
    assert conflicts_of(acme, new) == []


def test_the_action_rule(settings):
    settings.JUDGE_QUEUE_THRESHOLD = 0.85
    verdict = lambda relation, confidence: Judgement(relation, confidence, "")  # noqa: E731
    assert action_for(verdict("supersedes", 0.9), 0.9) == Action.RETIRE
    assert action_for(verdict("duplicate", 0.95), 0.9) == Action.RETIRE
    assert action_for(verdict("supersedes", 0.89), 0.9) == Action.CONFLICT
    assert action_for(verdict("contradicts", 0.99), 0.9) == Action.CONFLICT
    assert action_for(verdict("supersedes", 0.8), 0.9) == Action.RECORD  # under the queue bar: nobody is asked
    assert action_for(verdict("complementary", 0.6), 0.9) == Action.RECORD
    assert action_for(verdict("unrelated", 0.3), 0.9) == Action.RECORD
    # A refused retirement goes to a person; a refused queue entry is only recorded.
    assert action_for(verdict("supersedes", 0.99), 0.9, retire_refused="another writer's memory") == Action.CONFLICT
    assert action_for(verdict("supersedes", 0.99), 0.9, queue_refused="a question") == Action.RECORD


def test_the_judge_alone_retires_only_the_same_writers_update_of_the_same_subject():
    update = {"older": "The web cache TTL is 60 seconds.", "newer": "Web cache TTL is 5 minutes now."}
    assert retire_refusal(**update, older_kind="fact", newer_kind="fact", same_writer=True) is None
    assert retire_refusal(**update, older_kind="fact", newer_kind="fact", same_writer=False) == \
        "another writer's memory"
    # A note (a turn of a conversation), a task or a kind change never retires on a judge's word.
    assert retire_refusal(**update, older_kind="fact", newer_kind="note", same_writer=True)
    assert retire_refusal(**update, older_kind="task", newer_kind="task", same_writer=True)
    assert retire_refusal(**update, older_kind="fact", newer_kind="decision", same_writer=True)
    # A question about the fact, a rewrite in other words, a neighbour of the same topic: a person decides.
    assert retire_refusal(older="The web cache TTL is 60 seconds.", newer="What is the web cache TTL now?",
                          older_kind="fact", newer_kind="fact", same_writer=True) == "a question"
    assert retire_refusal(older="Static assets are served by CloudFront distribution E2ABC123.",
                          newer="Frontend bundles are cached at Fastly (service nw-web-static).",
                          older_kind="fact", newer_kind="fact", same_writer=True)
    assert retire_refusal(older="Dashboards refresh from the warehouse daily at 06:00 UTC.",
                          newer="Product analytics dashboards read from MART_PRODUCT, refreshed after the dbt run.",
                          older_kind="fact", newer_kind="fact", same_writer=True)
    # An update that adds a reason or a date keeps the older text's subject: it may retire...
    assert retire_refusal(older="The staging database is Postgres 13.", newer="Staging DB upgraded to Postgres 15 "
                          "last night.", older_kind="fact", newer_kind="fact", same_writer=True) is None
    # ...but a text that only passes through the old subject on its way to another may not.
    assert retire_refusal(older="Spanish is Saturday 9-12 now, the intensive one.",
                          newer="Because of Spanish moving, gym is Tuesday, Thursday and Saturday after.",
                          older_kind="fact", newer_kind="fact", same_writer=True) == \
        "not the same subject with a changed value"
    # The same subject, the same values: a restatement is not an update the judge may act on alone.
    assert retire_refusal(older="The web cache TTL is 60 seconds.", newer="Web cache TTL: 60 seconds.",
                          older_kind="fact", newer_kind="fact", same_writer=True)


def test_a_disagreement_nobody_marked_is_queued_whatever_the_judge_called_it():
    """Seed 004: a later statement that disagrees without saying it is an update overwrites nothing. The judge's
    confident "supersedes" on such a pair (a contradiction) goes to a person; the same pair with a word of change
    may retire."""
    pair = {"older": "The staging database is Postgres 13.", "older_kind": "fact", "newer_kind": "fact",
            "same_writer": True}
    assert retire_refusal(**pair, newer="The staging database is Postgres 15.") == \
        "no word of the newer says it is an update: a disagreement for a person"
    assert retire_refusal(**pair, newer="The staging database is Postgres 15 now.") is None
    assert retire_refusal(**pair, newer="We switched the staging database to Postgres 15.") is None


def test_two_remarks_are_queued_only_when_they_give_different_values_for_one_thing():
    """A conversation's turns (notes) are weighed against each other only on the evidence recall shows: a sentence
    of each about the same thing, with different values of one type."""
    remarks = {"older_kind": "note", "newer_kind": "note", "similarity": 0.6}
    older = "Can you help me with the release script? The launch is on March 3, marketing is lined up."
    assert queue_refusal(**remarks, older=older, newer="Script works, thanks. The launch moved to March 17, "
                                                       "so we have more time.") is None
    assert queue_refusal(**remarks, older=older, newer="Marketing wants the launch video in the press kit by then.") \
        == "two remarks that give no different values for one thing"


def test_a_question_is_never_queued_and_distant_pairs_are_only_recorded(settings):
    settings.JUDGE_QUEUE_SIMILARITY = 0.35
    assert queue_refusal(older="Noah is allergic to peanuts.", newer="what did I say Noah's allergy was again?",
                         similarity=0.8) == "a question"
    assert queue_refusal(older="Noah is allergic to peanuts.", newer="Noah is allergic to tree nuts too.",
                         similarity=0.34) == "too far apart"
    assert queue_refusal(older="Noah is allergic to peanuts.", newer="Noah is allergic to tree nuts too.",
                         similarity=0.7) is None


def test_an_answer_to_an_open_question_is_queued_but_a_question_never_is():
    """An open question's text ends in '?' like any question, but it is a loop that a later statement answers: a
    person may close it. Measured (bench judge): 3 of the 40 held-out replacements (1 of the tuning ones) were
    answers to an open question that the question rule only recorded."""
    asked = {"older": "Open question: do admins need WebAuthn?", "similarity": 0.7}
    assert queue_refusal(**asked, newer="Decided: WebAuthn is required for admins.", older_kind="open-question",
                         newer_kind="decision") is None
    assert queue_refusal(**asked, newer="Do admins need WebAuthn or TOTP?", older_kind="open-question",
                         newer_kind="open-question") == "a question"
    # A question of any other kind asks for a fact and settles nothing.
    assert queue_refusal(**asked, newer="Decided: WebAuthn is required for admins.", older_kind="fact",
                         newer_kind="decision") == "a question"


def test_a_writers_remark_that_reports_their_own_loop_done_is_queued():
    """An agent closes its task with a remark ("Done: ..."), the kind of an untyped write. Measured (bench judge,
    tuning pairs): 3 of the 40 replacements were such remarks that the note rule only recorded."""
    task = {"older": "TODO: rotate the Stripe API key for billing before Friday.", "older_kind": "task",
            "newer_kind": "note", "similarity": 0.8}
    assert queue_refusal(**task, newer="Done: Stripe key for billing rotated on Thursday, old key revoked.") is None
    assert queue_refusal(**task, newer="INFRA-88 closed: the disk pressure was a log rotation misconfig.") is None
    # A remark that only shares the loop's topic reports nothing done; another writer's remark is theirs.
    assert queue_refusal(**task, newer="Stripe billing keys live in the payments vault under /billing.") == \
        "a remark weighed against another kind or writer"
    assert queue_refusal(**task, newer="Done: Stripe key for billing rotated on Thursday, old key revoked.",
                         same_writer=False) == "a remark weighed against another kind or writer"
    # Only a loop is closed by a remark: a stated fact is not.
    assert queue_refusal(**{**task, "older_kind": "fact"}, newer="Done: Stripe key for billing rotated.") == \
        "a remark weighed against another kind or writer"


# An open question or a task is a loop: never retired on a judge's word, so a person decides, and closes it.
@pytest.mark.slow
@pytest.mark.parametrize("loop, closing, why", [
    ({"content": "Open question: should admin accounts require WebAuthn?", "kind": "open-question"},
     {"content": "Decided: WebAuthn is required for all admin accounts from October.", "kind": "decision"},
     "a decision does not retire an open-question on a judge's word"),
    # An agent's untyped remark that reports its writer's task done.
    ({"content": "TODO: rotate the Stripe API key for billing before Friday.", "kind": "task"},
     {"content": "Done: Stripe key for billing rotated on Thursday, old key revoked."},
     "a note does not retire a task on a judge's word"),
])
def test_a_person_closes_a_loop_from_the_queue(api, work, fake_vllm, loop, closing, why):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.97, "rationale": "closes it"}
    acme = build_tenant("acme")
    opened = remember_id(api, acme.member_token, **loop)
    work()
    answer = remember_id(api, acme.member_token, **closing)
    work()
    (verdict,) = judged_as_member(acme, answer)
    assert (verdict.decision, verdict.rationale) == ("conflict", f"closes it; queued: {why}")
    (conflict,) = conflicts_of(acme, answer)
    resolved = api(acme.member_token).post(f"/api/v1/conflicts/{conflict.id}/resolve",
                                            {"decision": "supersede", "winner": answer}, format="json")
    assert resolved.status_code == 200, resolved.content
    with rls.tenant_scope(acme.scope):
        closed = Memory.objects.get(pk=opened)
    assert (closed.status, closed.loop, closed.closed_by_id) == ("superseded", "closed", answer)


def test_small_talk_is_never_queued_but_a_remark_with_something_to_check_is():
    chat = {"similarity": 0.8, "older_kind": "note", "newer_kind": "note"}
    assert queue_refusal(older="yep", newer="nope", **chat) == "small talk"
    assert queue_refusal(older="I'm so tired today", newer="today was actually productive", **chat) == "small talk"
    # A value, a name, or a remark long enough to state something: a person may need to settle it.
    # A note is also what an untyped write is: a name that opens it counts, a pronoun or an interjection does not.
    assert queue_refusal(older="Checkout is owned by Dana.", newer="Ivan owns checkout.", **chat) is None
    assert queue_refusal(older="Alice's 1:1 with Sam is on Tuesdays at 15:00.", newer="My catch-up with Sam moved to "
                         "Friday mornings, 10:30 CET.", **chat) is None
    assert queue_refusal(older="Ingest's dead-letter queue is drained manually by whoever is on call.",
                         newer="A scheduled job replays the ingest dead-letter queue, nobody drains it by hand.",
                         **chat) is None
    # Only remarks: a short fact is no small talk.
    assert queue_refusal(older="Standup is daily.", newer="Standup is weekly.", similarity=0.8) is None


@pytest.mark.slow
def test_a_queue_only_judge_retires_nothing_and_still_ranks_the_successor_first(api, work, settings, fake_vllm):
    """The prod overlay's vLLM judge until its model passes `bench judge --check` (k8s/README.md)."""
    settings.JUDGE_AUTO_RESOLVE_THRESHOLD = 1.01
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.99, "rationale": "newer"}
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "The staging database is Postgres 13.", kind="fact")
    work()
    new = remember_id(api, acme.member_token, "Staging DB upgraded to Postgres 15 last night.", kind="fact")
    work()
    (verdict,) = judged_as_member(acme, new)
    assert (verdict.decision, verdict.rationale) == ("conflict", "newer")
    hits = api(acme.member_token).post("/api/v1/recall", {"query": "Which Postgres version does staging run?",
                                                          "k": 2}, format="json").json()["results"]
    assert [(hit["memory"]["id"], hit["memory"]["status"]) for hit in hits] == [(new, "live"), (old, "live")]
    assert all("in_conflict" in hit["flags"] for hit in hits)


@pytest.mark.slow
def test_a_teammates_confident_rewrite_is_queued_not_retired(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.99, "rationale": "newer"}
    acme = build_tenant("acme")
    old = remember_id(api, acme.admin_token, "The web cache TTL is 60 seconds.", project="web", kind="fact")
    new = remember_id(api, acme.member_token, "Web cache TTL is 5 minutes now.", kind="fact")  # project web
    work()
    (verdict,) = judged_as_member(acme, new)
    assert (verdict.decision, verdict.other_id) == ("conflict", old)
    assert verdict.rationale == "newer; queued: another writer's memory"
    (conflict,) = conflicts_of(acme, new)
    assert conflict.a_id == old and conflict.rationale == verdict.rationale
    with rls.tenant_scope(acme.scope):
        assert Memory.objects.get(pk=old).status == "live"


@pytest.mark.slow
def test_a_question_or_a_note_never_retires_a_fact(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.99, "rationale": "newer"}
    acme = build_tenant("acme")
    fact = remember_id(api, acme.member_token, "The web cache TTL is 60 seconds.", kind="fact")
    question = remember_id(api, acme.member_token, "What is the web cache TTL now?", kind="fact")
    work()
    assert [(v.decision, v.rationale) for v in judged_as_member(acme, question)] == [
        ("recorded", "newer; recorded: a question")]
    # A note (the kind of a write that names none) is a remark: weighed only against the writer's own notes, never
    # queued against a stated fact, and never retiring one.
    note = remember_id(api, acme.member_token, "web cache TTL is 5 minutes now")
    work()
    assert [(v.decision, v.rationale) for v in judged_as_member(acme, note) if v.other_id == fact] == [
        ("recorded", "newer; recorded: a remark weighed against another kind or writer")]
    with rls.tenant_scope(acme.scope):
        assert Memory.objects.get(pk=fact).status == "live"


@pytest.mark.slow
def test_a_burst_of_templated_writes_asks_a_person_once_not_once_per_write(api, work, fake_vllm):
    # A writer logging a series ("build 41 passed", "build 42 passed", ...) is not changing one fact 50 times: the
    # first change is queued, the writes that find two or more live siblings with other values are only recorded.
    fake_vllm.verdict = {"relation": "contradicts", "confidence": 0.87, "rationale": "different numbers"}
    acme = build_tenant("acme")
    builds = []
    for n in range(41, 47):
        builds.append(remember_id(api, acme.member_token, f"build {n} passed"))
        work()
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        open_pairs = list(Conflict.objects.filter(status=Conflict.Status.OPEN).values_list("a_id", "b_id"))
        series = Verdict.objects.filter(memory_id=builds[-1])
        assert series and all(v.decision == "recorded" and v.rationale.endswith(
            "recorded: one of a series (the same words with a third value or more)") for v in series)
    assert open_pairs == [(builds[0], builds[1])]
    # A fact changed twice is no series: the retired version is not a live sibling, so the next change is judged
    # like the first.
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.97, "rationale": "newer"}
    first = remember_id(api, acme.member_token, "Staging runs release 4.1.0.", kind="fact")
    work()
    second = remember_id(api, acme.member_token, "Staging runs release 4.1.1 now.", kind="fact")
    work()
    third = remember_id(api, acme.member_token, "Staging runs release 4.1.2 now.", kind="fact")
    work()
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        statuses = dict(Memory.objects.filter(pk__in=[first, second, third]).values_list("id", "status"))
    assert statuses == {first: "superseded", second: "superseded", third: "live"}


@pytest.mark.slow
def test_small_talk_judged_a_duplicate_is_only_recorded_over_the_api(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "duplicate", "confidence": 0.8, "rationale": "alike"}
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "yep")
    work()
    nope = remember_id(api, acme.member_token, "nope")
    work()
    (verdict,) = judged_as_member(acme, nope)
    assert (verdict.decision, verdict.rationale) == ("recorded", "alike; recorded: small talk")
    assert conflicts_of(acme, nope) == []
    # The same verdict on two remarks that name something is a person's call.
    remember_id(api, acme.member_token, "Standup moved to 9:30.")
    work()
    later = remember_id(api, acme.member_token, "Standup is at 10:00 from Monday.")
    work()
    assert [c.relation for c in conflicts_of(acme, later)] == ["duplicate"]
