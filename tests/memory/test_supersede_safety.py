"""Supersedes that could loop a chain or hide a fact, the statement timeout, and a restore that must undo what the
restorer cannot see."""
import time

import pytest
from django.db import OperationalError, connection
from django.utils import timezone
from psycopg.errors import QueryCanceled

from hygiene import services as hygiene
from hygiene.judge import Judgement, get_judge
from memory import selectors
from memory.models import Conflict, Link, Memory
from tenants import rls
from tenants.auth import load_principal
from tests.support.memories import supersedes


def post(api, token, path, body=None):
    return api(token).post(path, body or {}, format="json")


def error_of(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def member_scope(acme) -> rls.Scope:
    return rls.Scope(org_id=acme.org.id, user_id=acme.member.id)


# A correction that closes a cycle; walks that must survive one; the statement timeout.

def test_a_check_cannot_close_a_supersede_cycle(remember, api, acme):
    m1 = remember(acme.member_token, "The staging database is db-3.")["memory"]["id"]
    m2 = remember(acme.member_token, "The staging database is db-4.", links=supersedes(m1))["memory"]["id"]
    response = post(api, acme.member_token, f"/api/v1/memories/{m2}/checks",
                    {"outcome": "fail", "detail": "db-4 was never built", "corrected_by": m1})
    assert error_of(response) == (409, "successor_not_live")
    assert response.json()["error"]["details"] == {"successor": m1, "status": "superseded"}
    detail = api(acme.member_token).get(f"/api/v1/memories/{m2}").json()
    assert (detail["memory"]["status"], detail["checks"]) == ("live", [])  # nothing stored
    recall = post(api, acme.member_token, "/api/v1/recall", {"query": "staging database"})
    assert recall.status_code == 200 and [r["memory"]["id"] for r in recall.json()["results"]] == [m2]


def test_a_correction_must_be_live(remember, api, acme):
    old = remember(acme.member_token, "Deploys go through deploy.sh.")["memory"]["id"]
    fix = remember(acme.member_token, "Deploys go through the deploy workflow.")["memory"]["id"]
    assert post(api, acme.member_token, f"/api/v1/memories/{fix}/forget").status_code == 200
    response = post(api, acme.member_token, f"/api/v1/memories/{old}/checks",
                    {"outcome": "fail", "detail": "deploy.sh is gone", "corrected_by": fix})
    assert error_of(response) == (409, "successor_not_live")
    detail = api(acme.member_token).get(f"/api/v1/memories/{old}").json()
    assert (detail["memory"]["status"], detail["checks"]) == ("live", [])


def test_a_conflict_cannot_be_won_by_a_retired_memory(remember, api, acme):
    a = remember(acme.member_token, "Dana owns checkout.")["memory"]["id"]
    b = remember(acme.member_token, "Ivan owns checkout.")["memory"]["id"]
    remember(acme.member_token, "Mia owns checkout now.", links=supersedes(b))
    with rls.tenant_scope(acme.scope):
        conflict = Conflict.objects.create(org=acme.org, a_id=a, b_id=b, relation="contradicts", confidence=0.7,
                                           judge="local:test", rationale="two owners")
    response = post(api, acme.member_token, f"/api/v1/conflicts/{conflict.id}/resolve",
                    {"decision": "supersede", "winner": b})
    assert error_of(response) == (409, "successor_not_live")
    assert api(acme.member_token).get(f"/api/v1/memories/{a}").json()["memory"]["status"] == "live"
    assert [c["id"] for c in api(acme.member_token).get("/api/v1/conflicts").json()["results"]] == [conflict.id]


def test_chain_walks_survive_a_cycle_in_the_store(remember, api, acme, settings):
    settings.STATEMENT_TIMEOUT_MS = 2000  # a walk that loops fails in 2 s instead of 5
    m1 = remember(acme.member_token, "The release train leaves on Wednesdays.")["memory"]["id"]
    m2 = remember(acme.member_token, "The release train leaves on Thursdays.", links=supersedes(m1))["memory"]["id"]
    # What a check once could write (a correction naming its own successor): m1 and m2 each other's successor,
    # neither live. Written here directly.
    with rls.tenant_scope(acme.scope):
        Memory.objects.filter(pk=m2).update(status="superseded", superseded_by_id=m1, invalidated_at=timezone.now())
        Link.objects.create(org=acme.org, src_id=m1, dst_id=m2, type="supersedes", retired_dst=True, origin="check")
    started = time.monotonic()
    client = api(acme.member_token)
    for body in ({}, {"include_history": True}, {"as_of": timezone.now().isoformat()}):
        response = client.post("/api/v1/recall", {"query": "When does the release train leave?", **body}, format="json")
        assert response.status_code == 200, response.content
        if body.get("include_history"):
            assert {r["memory"]["id"] for r in response.json()["results"]} == {m1, m2}
        else:
            assert response.json()["results"] == []  # no live version: nothing current to return
    for memory_id in (m1, m2):
        assert [m["id"] for m in client.get(f"/api/v1/memories/{memory_id}/history").json()["chain"]] == [m1, m2]
        assert client.get(f"/api/v1/memories/{memory_id}").status_code == 200
    assert time.monotonic() - started < 5


def test_a_statement_past_the_timeout_is_cancelled(acme, settings):
    settings.STATEMENT_TIMEOUT_MS = 200
    started = time.monotonic()
    with pytest.raises(OperationalError) as raised, rls.tenant_scope(acme.scope), connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(3)")
    assert isinstance(raised.value.__cause__, QueryCanceled) and time.monotonic() - started < 2
    with connection.cursor() as cursor:  # the timeout ends with the scope
        cursor.execute("SELECT current_setting('statement_timeout')")
        assert cursor.fetchone()[0] == "0"


def test_a_request_whose_query_times_out_answers_503(api, acme, settings, monkeypatch):
    settings.STATEMENT_TIMEOUT_MS = 200

    def slow_feed(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(3)")

    monkeypatch.setattr(selectors, "memory_feed", slow_feed)
    started = time.monotonic()
    response = api(acme.member_token).get("/api/v1/memories")
    assert error_of(response) == (503, "statement_timeout") and time.monotonic() - started < 2
    assert response["Retry-After"] == "1"
    monkeypatch.undo()
    assert api(acme.member_token).get("/api/v1/memories").status_code == 200  # the connection serves the next one


# A successor must be visible to everyone who can see its target.

def test_a_personal_memory_cannot_replace_a_project_one(remember, api, acme, visible_count):
    fact = remember(acme.admin_token, "Web deploys need two approvals.", project="web")["memory"]["id"]
    before = visible_count(acme.member_token)
    body = remember(acme.member_token, "Web deploys need one approval.", expect=403, scope="personal",
                    links=supersedes(fact))
    assert body["error"]["code"] == "successor_less_visible" and body["error"]["details"]["dst"] == fact
    assert visible_count(acme.member_token) == before  # nothing stored
    assert api(acme.admin_token).get(f"/api/v1/memories/{fact}").json()["memory"]["status"] == "live"


def test_a_project_memory_cannot_be_replaced_from_another_project(remember, api, acme):
    fact = remember(acme.admin_token, "Web deploys need two approvals.", project="web")["memory"]["id"]
    body = remember(acme.admin_token, "Deploys need one approval.", expect=403, project="ops", links=supersedes(fact))
    assert body["error"]["code"] == "successor_less_visible"
    assert api(acme.member_token).get(f"/api/v1/memories/{fact}").json()["memory"]["status"] == "live"


def test_a_project_memory_may_replace_a_personal_one(remember, acme):
    mine = remember(acme.member_token, "I deploy web with deploy.sh.", scope="personal")["memory"]["id"]
    team = remember(acme.member_token, "Web deploys go through the workflow.", project="web", links=supersedes(mine))
    assert team["superseded"] == [mine]


def test_a_check_cannot_correct_a_project_memory_with_a_personal_one(remember, api, acme):
    fact = remember(acme.admin_token, "The web cache TTL is 60 s.", project="web")["memory"]["id"]
    mine = remember(acme.member_token, "The web cache TTL is 30 s.", scope="personal")["memory"]["id"]
    response = post(api, acme.member_token, f"/api/v1/memories/{fact}/checks",
                    {"outcome": "fail", "detail": "measured 30 s", "corrected_by": mine})
    assert error_of(response) == (403, "successor_less_visible")
    detail = api(acme.admin_token).get(f"/api/v1/memories/{fact}").json()
    assert (detail["memory"]["status"], detail["checks"]) == ("live", [])


def test_a_conflict_cannot_be_settled_for_a_less_visible_winner(remember, api, acme):
    fact = remember(acme.admin_token, "The web cache TTL is 60 s.", project="web")["memory"]["id"]
    mine = remember(acme.member_token, "The web cache TTL is 30 s.", scope="personal")["memory"]["id"]
    # The judge pairs memories of one place only; a conflict across places is written directly.
    with rls.tenant_scope(member_scope(acme)):
        conflict = Conflict.objects.create(org=acme.org, a_id=fact, b_id=mine, relation="contradicts",
                                           confidence=0.7, judge="local:test", rationale="two TTLs")
    response = post(api, acme.member_token, f"/api/v1/conflicts/{conflict.id}/resolve",
                    {"decision": "supersede", "winner": mine})
    assert error_of(response) == (403, "successor_less_visible")
    assert api(acme.admin_token).get(f"/api/v1/memories/{fact}").json()["memory"]["status"] == "live"
    assert [c["id"] for c in api(acme.member_token).get("/api/v1/conflicts").json()["results"]] == [conflict.id]


def test_the_judge_does_not_retire_for_a_less_visible_successor(remember, acme):
    fact = remember(acme.admin_token, "The web cache TTL is 60 s.", project="web", kind="fact")["memory"]
    mine = remember(acme.member_token, "The web cache TTL is now 30 s.", scope="personal", kind="fact")["memory"]
    candidate = hygiene.Candidate(fact["id"], fact["content"], fact["kind"], authoritative=True)
    verdict = Judgement("supersedes", 0.99, "the TTL changed")
    with rls.tenant_scope(member_scope(acme)):
        principal = load_principal(member_scope(acme), token_id=None)
        decision = hygiene.decide_pair(mine["id"], candidate, verdict, get_judge(), 5.0, principal)
        assert decision == "conflict"  # a human decides; nothing is retired on the judge's word
        assert Memory.objects.get(pk=fact["id"]).status == "live"
        assert Conflict.objects.filter(a_id=fact["id"], b_id=mine["id"], status="open").count() == 1


# A restore undoes exactly what the retirement did, whatever the restorer can see.

def test_restore_undoes_the_link_when_the_restorer_cannot_see_the_successor(remember, api, acme):
    note = remember(acme.member_token, "My laptop needs the VPN profile v2.", scope="personal")["memory"]["id"]
    team = remember(acme.member_token, "Laptops need the VPN profile v3.", project="web",
                    links=supersedes(note))["memory"]["id"]
    admin = api(acme.admin_token)
    # The member leaves web: the successor, and with it the link, are out of the member's sight.
    assert admin.delete(f"/api/v1/projects/web/members/{acme.member.id}").status_code == 204
    restored = post(api, acme.member_token, f"/api/v1/memories/{note}/restore")
    assert restored.status_code == 200 and restored.json()["memory"]["status"] == "live"
    # Back in web, the member sees both ends: the retirement is undone everywhere, not only on the restored side.
    assert admin.post("/api/v1/projects/web/members", {"user_id": str(acme.member.id)},
                      format="json").status_code == 201
    member = api(acme.member_token)
    link = next(link for link in member.get(f"/api/v1/memories/{team}").json()["links"] if link["dst"] == note)
    assert link["undone_at"] is not None
    assert [m["id"] for m in member.get(f"/api/v1/memories/{team}/history").json()["chain"]] == [team]
    assert member.get("/api/v1/stats").json()["supersedes"]["declared"] == 0


def test_the_undo_function_needs_a_visible_retired_memory(remember, acme, globex):
    old = remember(acme.member_token, "The build runs on ci-1.")["memory"]["id"]
    remember(acme.member_token, "The build runs on ci-2.", links=supersedes(old))
    for scope in (globex.scope, rls.Scope(org_id=acme.org.id, user_id=globex.admin.id)):
        with rls.tenant_scope(scope), connection.cursor() as cursor:
            cursor.execute("SELECT zm_undo_retirement(%s)", [old])
            assert cursor.fetchone()[0] == 0
    with rls.tenant_scope(member_scope(acme)):
        assert Link.objects.get(dst_id=old, type="supersedes").undone_at is None
    with connection.cursor() as cursor:
        cursor.execute("SELECT grantee FROM information_schema.routine_privileges"
                       " WHERE routine_name = 'zm_undo_retirement' AND privilege_type = 'EXECUTE'")
        assert {row[0] for row in cursor.fetchall()} <= {"zm_app", "zm_owner"}

