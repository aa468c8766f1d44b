"""recall through the API: current facts first, history on request, flags, filters, isolation, bad input."""
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Check, Conflict, Memory
from tenants import rls
from tests.support.memories import supersedes


def ids(body: dict) -> list[str]:
    return [r["memory"]["id"] for r in body["results"]]


def test_only_live_memories_by_default_and_history_on_request(remember, recall, acme):
    old = remember(acme.member_token, "The Pro plan costs $29 per month.")["memory"]["id"]
    new = remember(acme.member_token, "The Pro plan costs $30 per month.",
                   links=supersedes(old, reason="price change in March"))["memory"]["id"]
    current = recall(acme.member_token, "How much is the Pro plan?")
    assert ids(current)[0] == new and old not in ids(current)
    assert current["results"][0]["rank"] == 1 and current["results"][0]["flags"] == []
    history = recall(acme.member_token, "How much is the Pro plan?", include_history=True)
    assert set(ids(history)[:2]) == {old, new}
    stale = next(r for r in history["results"] if r["memory"]["id"] == old)
    assert stale["flags"] == ["superseded"] and stale["superseded_by"] == new
    assert "price change in March" in stale["why"]["note"]


def test_as_of_reads_the_store_as_it_stood_then(remember, recall, acme):
    old = remember(acme.member_token, "Deploys go through Jenkins.")["memory"]["id"]
    before_change = timezone.now()
    new = remember(acme.member_token, "Deploys go through GitHub Actions now.", links=supersedes(old))["memory"]["id"]
    then = recall(acme.member_token, "What do deploys run on?", as_of=before_change.isoformat())
    assert ids(then) == [old] and then["results"][0]["flags"] == []
    now = recall(acme.member_token, "What do deploys run on?")
    assert ids(now) == [new]


def test_flags_expired_provisional_and_open_loop(remember, recall, api, acme):
    yesterday = (timezone.now() - timedelta(days=1)).isoformat()
    expired = remember(acme.member_token, "The spring sale code SPRING25 gives 25% off.",
                       valid_from=(timezone.now() - timedelta(days=30)).isoformat(), valid_until=yesterday)
    watcher = api(acme.member_token).post("/api/v1/tokens", {"name": "w", "writer": "watcher", "project": "web"},
                                          format="json").json()["token"]
    provisional = remember(watcher, "Overheard: the sale code might be extended.")
    task = remember(acme.member_token, "Task: remove the sale code banner after the sale ends", kind="task")
    body = recall(acme.member_token, "sale code", k=10)
    flags = {r["memory"]["id"]: r["flags"] for r in body["results"]}
    assert flags[expired["memory"]["id"]] == ["expired"]  # expired facts stay readable, loudly marked
    assert flags[provisional["memory"]["id"]] == ["provisional"]
    assert flags[task["memory"]["id"]] == ["open_loop"]


def test_a_failed_check_is_shown_above_the_results(remember, recall, acme):
    lesson = remember(acme.member_token, "Restart the ingest worker to clear a stuck queue.", kind="lesson")
    lesson_id = lesson["memory"]["id"]
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        Check.objects.create(org=acme.org, memory_id=lesson_id, outcome="fail", detail="restart did not help")
    body = recall(acme.member_token, "stuck ingest queue")
    assert body["warnings"][0]["memory"]["id"] == lesson_id
    assert body["warnings"][0]["check"]["detail"] == "restart did not help"
    assert "failed_check" in body["results"][0]["flags"]


def test_open_conflict_partners_come_back_together(remember, recall, acme):
    a = remember(acme.member_token, "Dana owns the checkout service.")["memory"]["id"]
    b = remember(acme.member_token, "Checkout has been Ivan's responsibility since the reorg.")["memory"]["id"]
    remember(acme.member_token, "The checkout service is written in Go.")
    with rls.tenant_scope(acme.scope):
        Conflict.objects.create(org=acme.org, a_id=a, b_id=b, relation="contradicts")
    body = recall(acme.member_token, "Who owns checkout?", k=2)
    assert set(ids(body)) == {a, b}
    assert all(r["flags"] == ["in_conflict"] for r in body["results"])
    assert body["results"][0]["conflicts_with"] == [ids(body)[1]]


def test_conflict_partners_count_towards_k(remember, recall, acme):
    owner = remember(acme.member_token, "Dana owns the checkout service.")["memory"]["id"]
    language = remember(acme.member_token, "The checkout service is written in Go.")["memory"]["id"]
    rival = remember(acme.member_token, "Ivan has been responsible for payments refunds since the reorg.")["memory"]
    with rls.tenant_scope(acme.scope):
        Conflict.objects.create(org=acme.org, a_id=owner, b_id=rival["id"], relation="contradicts")
    question = "Who owns the checkout service?"
    assert ids(recall(acme.member_token, question, k=3)) == [owner, language, rival["id"]]  # the rival ranks last
    # The partner sits right after its hit and pushes the lowest-ranked hit out: k answers, no more.
    assert ids(recall(acme.member_token, question, k=2)) == [owner, rival["id"]]
    # No room for the partner: the hit stays, and still says whom it is in conflict with.
    alone = recall(acme.member_token, question, k=1)
    assert ids(alone) == [owner]
    assert alone["results"][0]["flags"] == ["in_conflict"] and alone["results"][0]["conflicts_with"] == [rival["id"]]


def test_a_conflict_partner_comes_along_only_inside_the_querys_filters(remember, recall, acme):
    """A caller who asks for personal memories, or for facts, gets no project memory or preference as a partner."""
    mine = remember(acme.member_token, "The cache TTL is 300 seconds.", kind="preference", scope="personal")
    theirs = remember(acme.member_token, "The cache TTL is 600 seconds.", kind="fact", project="web")
    mine, theirs = mine["memory"]["id"], theirs["memory"]["id"]
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):  # who sees both
        Conflict.objects.create(org=acme.org, a_id=mine, b_id=theirs, relation="contradicts")
    assert set(ids(recall(acme.member_token, "What is the cache TTL?"))) == {mine, theirs}
    for query_filter, expected in [({"scope": "personal"}, mine), ({"scope": "project"}, theirs),
                                   ({"kinds": ["preference"]}, mine), ({"kinds": ["fact"]}, theirs)]:
        body = recall(acme.member_token, "The cache TTL is 300 seconds.", **query_filter)
        assert ids(body) == [expected], query_filter
        # Still flagged: the partner exists, it is only outside what was asked for.
        assert body["results"][0]["flags"] == ["in_conflict"]


def test_no_age_penalty_an_old_right_answer_stays_first(remember, recall, acme):
    lesson = remember(acme.member_token, "If the Redis failover hangs, promote the replica by hand with "
                      "sentinel failover.", kind="lesson")["memory"]["id"]
    with rls.tenant_scope(acme.scope):
        Memory.objects.filter(pk=lesson).update(created_at=timezone.now() - timedelta(days=180))
    remember(acme.member_token, "Redis dashboards moved to the new Grafana folder.")
    body = recall(acme.member_token, "Redis failover is stuck, what do I do?")
    assert ids(body)[0] == lesson
    assert body["trace"]["age_penalty"] is None


def test_filters_kinds_scope_and_project(remember, recall, acme):
    decision = remember(acme.admin_token, "We chose Postgres for the web app.", kind="decision", project="web")
    remember(acme.admin_token, "Postgres backups run nightly.", kind="fact", project="web")
    ops = remember(acme.admin_token, "Postgres on ops runs version 16.", kind="fact", project="ops")
    personal = remember(acme.admin_token, "I keep my Postgres notes in Obsidian.", scope="personal")
    assert ids(recall(acme.admin_token, "Postgres", kinds=["decision"])) == [decision["memory"]["id"]]
    assert ids(recall(acme.admin_token, "Postgres", scope="personal")) == [personal["memory"]["id"]]
    in_ops = ids(recall(acme.admin_token, "Postgres", project="ops"))
    assert set(in_ops) == {ops["memory"]["id"], personal["memory"]["id"]}
    assert set(ids(recall(acme.admin_token, "Postgres", project="ops", scope="project"))) == {ops["memory"]["id"]}
    assert recall(acme.member_token, "Postgres", expect=404, project="ops")["error"]["code"] == "not_found"


def test_recall_sees_only_what_the_caller_may_see(remember, recall, acme, globex):
    remember(globex.member_token, "Globex: the launch code is 0000.")
    remember(acme.admin_token, "Admin private: the launch code is 1234.", scope="personal")
    remember(acme.admin_token, "Ops: the launch code is 5678.", project="ops")
    mine = remember(acme.member_token, "Web: the launch code is 4321.")["memory"]["id"]
    assert ids(recall(acme.member_token, "launch code", k=50)) == [mine]


def test_why_and_trace_explain_the_ranking(remember, recall, acme):
    remember(acme.member_token, "The search service uses Elasticsearch 8.")
    body = recall(acme.member_token, "Elasticsearch in the search service")
    why = body["results"][0]["why"]
    assert why["vector_rank"] == 1 and why["text_rank"] == 1 and "by meaning" in why["note"]
    trace = body["trace"]
    assert trace["channels"]["vector"]["candidates"] == 1 and "elasticsearch" in trace["channels"]["text"]["tsquery"]
    assert "reciprocal rank fusion" in trace["fusion"] and trace["filters"]["lifecycle"] == "live"


def test_a_query_of_stop_words_only_finds_by_meaning_and_says_it_had_no_terms(remember, recall, acme):
    remember(acme.member_token, "The api service deploys on Tuesdays.")
    body = recall(acme.member_token, "what is it that they were")
    assert body["trace"]["channels"]["text"] == {"candidates": 0, "tsquery": ""}
    assert body["results"] and all(r["why"]["text_rank"] is None for r in body["results"])


@pytest.mark.parametrize("body", [
    {}, {"query": ""}, {"query": "x", "k": 0}, {"query": "x", "k": 51}, {"query": "x", "k": "5"},
    {"query": "x", "k": 5.5}, {"query": "x", "k": True}, {"query": "x", "scope": "everything"},
    {"query": "x", "kinds": ["gossip"]}, {"query": "x", "kinds": "fact"}, {"query": "x", "include_history": "yes"},
    {"query": "x", "as_of": "last week"},
])
def test_bad_recall_input_is_400(api, acme, body):
    response = api(acme.member_token).post("/api/v1/recall", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"


def test_words_find_exact_identifiers_that_meaning_blurs(remember, recall, acme):
    for number in (4810, 4821, 4833, 4847, 4852):
        remember(acme.member_token, f"Incident INC-{number}: the payments queue stalled during the nightly batch.")
    body = recall(acme.member_token, "INC-4821")
    assert body["results"][0]["memory"]["content"].startswith("Incident INC-4821")
    assert body["results"][0]["why"]["text_rank"] == 1


def test_a_question_phrased_like_an_old_version_finds_the_current_one(remember, recall, acme):
    old = remember(acme.member_token, "Release train leaves every Monday at 10:00 UTC.")["memory"]["id"]
    new = remember(acme.member_token, "Freeze lifted: the frontend now ships on Thursdays after the sync.",
                   links=supersedes(old))["memory"]["id"]
    for i in range(5):
        remember(acme.member_token, f"The weekly {['train', 'sync', 'demo', 'retro', 'planning'][i]} notes are in Notion.")
    body = recall(acme.member_token, "When does the Monday release train leave?")
    assert ids(body)[0] == new and old not in ids(body)
    assert f"through its earlier version {old}" in body["results"][0]["why"]["note"]
    assert body["results"][0]["flags"] == []


def test_an_earlier_version_leads_only_to_a_current_version_inside_the_filters(remember, recall, acme):
    # v1 and v2 are facts worded like the question; v3, the current version, is a decision. The walk goes two steps.
    v1 = remember(acme.member_token, "Release train leaves every Monday at 10:00 UTC.", kind="fact")["memory"]["id"]
    v2 = remember(acme.member_token, "Release train leaves every Monday at 11:00 UTC.", kind="fact",
                  links=supersedes(v1))["memory"]["id"]
    v3 = remember(acme.member_token, "Decided: the frontend ships on Thursdays after the sync.", kind="decision",
                  links=supersedes(v2))["memory"]["id"]
    remember(acme.member_token, "The weekly planning notes are in Notion.", kind="fact")
    question = "When does the Monday release train leave?"
    assert not {v1, v2, v3} & set(ids(recall(acme.member_token, question, kinds=["fact"])))
    body = recall(acme.member_token, question, kinds=["fact", "decision"])
    assert ids(body)[0] == v3 and not {v1, v2} & set(ids(body))


def test_with_history_a_superseded_version_never_ranks_above_its_current_version(remember, recall, acme):
    # The old versions are worded like the question; the current one is not, so fusion ranks them higher.
    v1 = remember(acme.member_token, "The Pro plan costs $29 per month.")["memory"]["id"]
    v2 = remember(acme.member_token, "The Pro plan costs $35 per month.", links=supersedes(v1))["memory"]["id"]
    v3 = remember(acme.member_token, "Pricing moved again: forty dollars.", links=supersedes(v2))["memory"]["id"]
    seats = remember(acme.member_token, "The Pro plan includes five seats per month.")["memory"]["id"]
    body = recall(acme.member_token, "How much does the Pro plan cost per month?", include_history=True)
    # Each older version right after its current version, newest first; the unrelated hit keeps its place.
    order = ids(body)
    assert order[order.index(v3):order.index(v3) + 3] == [v3, v2, v1]
    assert order.index(seats) < order.index(v3)
    assert [r["flags"] for r in body["results"] if r["memory"]["id"] in (v1, v2)] == [["superseded"]] * 2
    assert [r["rank"] for r in body["results"]] == list(range(1, len(order) + 1))


def test_as_of_shows_each_memory_as_it_stood_then(remember, recall, api, acme):
    task = remember(acme.member_token, "Task: rotate the staging TLS certificate", kind="task")["memory"]
    note = remember(acme.member_token, "The staging TLS certificate lives in Vault.")["memory"]["id"]
    assert task["loop"] == "open"
    before = timezone.now()
    done = remember(acme.member_token, "Rotated the staging TLS certificate; the task is done.", kind="note",
                    links=supersedes(task["id"], reason="done"))["memory"]["id"]
    assert api(acme.member_token).post(f"/api/v1/memories/{note}/forget", {"reason": "moved"},
                                       format="json").status_code == 200
    then = recall(acme.member_token, "staging TLS certificate", as_of=before.isoformat())
    assert set(ids(then)) == {task["id"], note} and done not in ids(then)
    shown = {r["memory"]["id"]: r for r in then["results"]}
    for memory_id in (task["id"], note):
        memory = shown[memory_id]["memory"]
        assert (memory["status"], memory["superseded_by"], memory["invalidated_at"], memory["invalidated_reason"]) \
            == ("live", None, None, None)
        assert shown[memory_id]["superseded_by"] is None
    assert shown[task["id"]]["memory"]["loop"] == "open" and shown[task["id"]]["memory"]["closed_by"] is None
    assert shown[task["id"]]["flags"] == ["open_loop"] and shown[note]["flags"] == []
    # Nothing was saved: today the task is still superseded, its loop closed by its successor.
    now = api(acme.member_token).get(f"/api/v1/memories/{task['id']}").json()["memory"]
    assert (now["status"], now["superseded_by"], now["loop"], now["closed_by"]) == ("superseded", done, "closed", done)


def test_as_of_with_history_orders_and_shows_versions_as_they_stood(remember, recall, acme):
    v1 = remember(acme.member_token, "The Pro plan costs $29 per month.")["memory"]["id"]
    v2 = remember(acme.member_token, "Pricing moved: thirty-five dollars.", links=supersedes(v1))["memory"]["id"]
    between = timezone.now()
    v3 = remember(acme.member_token, "Pricing moved again: forty dollars.", links=supersedes(v2))["memory"]["id"]
    body = recall(acme.member_token, "How much does the Pro plan cost per month?", include_history=True,
                  as_of=between.isoformat())
    assert v3 not in ids(body) and ids(body).index(v2) + 1 == ids(body).index(v1)  # v2 was current then
    shown = {r["memory"]["id"]: r for r in body["results"]}
    assert shown[v2]["memory"]["status"] == "live" and shown[v2]["flags"] == []
    assert shown[v1]["flags"] == ["superseded"] and shown[v1]["superseded_by"] == v2


def _judged(acme, older: str, newer: str, relation: str = "supersedes") -> None:
    with rls.tenant_scope(acme.scope):
        Conflict.objects.create(org=acme.org, a_id=older, b_id=newer, relation=relation, confidence=0.7,
                                judge="local", rationale="same subject, new value")


def test_an_open_conflict_judged_supersedes_ranks_the_newer_first_without_retiring(remember, recall, api, acme):
    old = remember(acme.member_token, "The staging database runs on Postgres 14.", kind="fact")["memory"]["id"]
    # No word of change: without the judge's direction, read-time disagreement keeps relevance order.
    new = remember(acme.member_token, "Staging is on PG 17 since last week.", kind="fact")["memory"]["id"]
    remember(acme.member_token, "Production backups run nightly at 02:00.")
    question = "Which Postgres version does staging run?"
    assert ids(recall(acme.member_token, question))[0] == old  # worded like the question: first on relevance alone
    _judged(acme, old, new)
    body = recall(acme.member_token, question)
    assert ids(body)[:2] == [new, old]
    first, second = body["results"][:2]
    assert first["flags"] == second["flags"] == ["in_conflict"]  # both still live: nothing was retired
    assert "probably replaces" in first["why"]["note"] and old in first["why"]["note"]
    assert "probably replaced by" in second["why"]["note"] and new in second["why"]["note"]
    assert body["trace"]["conflict_order"]["pairs"] == [[new, old]]
    assert api(acme.member_token).get(f"/api/v1/memories/{old}").json()["memory"]["status"] == "live"
    # With room for one answer, the probable successor is that answer.
    assert ids(recall(acme.member_token, question, k=1)) == [new]


def test_a_note_the_query_did_not_find_stays_after_what_it_probably_replaces(remember, recall, acme):
    # Turns of a conversation (notes) are about several things: the judge's direction may be about another one than
    # the question asks (BEAM-100K: such a turn came first on 5 questions whose answer had ranked first). A note the
    # query found itself still comes first; one it did not find is only the older one's partner.
    old = remember(acme.member_token, "The staging database runs on Postgres 14.")["memory"]["id"]
    new = remember(acme.member_token, "Thanks! Also staging is on PG 17 since last week, and lunch is at noon.")
    _judged(acme, old, new["memory"]["id"])
    question = "Which Postgres version does staging run?"
    assert ids(recall(acme.member_token, question))[:2] == [new["memory"]["id"], old]  # found: first
    only = recall(acme.member_token, question, k=1)["results"]
    assert [r["memory"]["id"] for r in only] == [old]  # not found within k: no room for its partner
    assert only[0]["flags"] == ["in_conflict"] and only[0]["conflicts_with"] == [new["memory"]["id"]]
    assert "probably replaced by" not in (only[0]["why"]["note"] or "")


def test_when_the_probable_successor_is_replaced_its_current_version_takes_its_place(remember, recall, acme):
    # v1 -> v2 judged a probable replacement (open conflict); then v3 replaces v2 (declared here; the judge's
    # retirement is the same). The oldest version must not come back first just because v2 left the results.
    v1 = remember(acme.member_token, "The staging database runs on Postgres 14.", kind="fact")["memory"]["id"]
    v2 = remember(acme.member_token, "Staging moved to PG 16 last week.", kind="fact")["memory"]["id"]
    _judged(acme, v1, v2)
    v3 = remember(acme.member_token, "Staging DB upgraded once more, now on release 17.", kind="fact",
                  links=supersedes(v2))["memory"]["id"]
    question = "Which Postgres version does staging run?"
    body = recall(acme.member_token, question)
    assert v2 not in ids(body) and ids(body)[:2] == [v3, v1]
    first, second = body["results"][:2]
    assert v2 in first["why"]["note"] and "has replaced" in first["why"]["note"]
    assert second["flags"] == ["in_conflict"] and second["conflicts_with"] == [v2]
    assert f"{v3} has replaced the memory of that conflict since" in second["why"]["note"]
    assert body["trace"]["conflict_order"]["pairs"] == [[v3, v1]]
    assert ids(recall(acme.member_token, question, k=1)) == [v3]


def test_a_conflict_without_direction_keeps_relevance_order(remember, recall, acme):
    old = remember(acme.member_token, "The staging database runs on Postgres 14.")["memory"]["id"]
    new = remember(acme.member_token, "Staging moved to PG 17 last week.")["memory"]["id"]
    _judged(acme, old, new, relation="contradicts")
    body = recall(acme.member_token, "Which Postgres version does staging run?")
    assert ids(body)[:2] == [old, new]
    assert body["trace"]["conflict_order"]["pairs"] == []


def test_a_resolution_decides_for_good(remember, recall, api, acme):
    old = remember(acme.member_token, "The staging database runs on Postgres 14.")["memory"]["id"]
    new = remember(acme.member_token, "Staging moved to PG 17 last week.")["memory"]["id"]
    _judged(acme, old, new)
    with rls.tenant_scope(acme.scope):
        conflict_id = Conflict.objects.get(a_id=old).id
    # A person keeps both: the judge's direction no longer orders them.
    kept = api(acme.admin_token).post(f"/api/v1/conflicts/{conflict_id}/resolve", {"decision": "keep_both"},
                                      format="json")
    assert kept.status_code == 200
    body = recall(acme.member_token, "Which Postgres version does staging run?")
    assert ids(body)[:2] == [old, new] and all(r["flags"] == [] for r in body["results"][:2])


def test_conflicts_that_form_a_cycle_still_answer(remember, recall, acme):
    a = remember(acme.member_token, "The on-call rotation changes on Mondays.")["memory"]["id"]
    b = remember(acme.member_token, "On-call now rotates every Wednesday.")["memory"]["id"]
    _judged(acme, a, b)
    _judged(acme, b, a)
    body = recall(acme.member_token, "When does on-call rotate?")
    assert sorted(ids(body)[:2]) == sorted([a, b]) and len(set(ids(body))) == len(ids(body))
