"""Resolving conflicts through the API, and the stats endpoint."""
import pytest

from memory.models import Conflict, Verdict
from tenants import rls
from tests.support.watchers import mint_watcher, refused


def remember(api, token, content, **body):
    response = api(token).post("/api/v1/memories", {"content": content, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["memory"]["id"]


@pytest.fixture
def conflict(api, acme):
    a = remember(api, acme.member_token, "Dana owns checkout.")
    b = remember(api, acme.member_token, "Ivan owns checkout.")
    with rls.tenant_scope(acme.scope):
        return Conflict.objects.create(org=acme.org, a_id=a, b_id=b, relation="contradicts", confidence=0.7,
                                       judge="local:test", rationale="two owners")


def test_resolving_with_a_winner_retires_the_loser(api, acme, conflict):
    response = api(acme.member_token).post(f"/api/v1/conflicts/{conflict.id}/resolve",
                                           {"decision": "supersede", "winner": conflict.b_id}, format="json")
    assert response.status_code == 200
    assert response.json()["conflict"]["status"] == "resolved"
    loser = api(acme.member_token).get(f"/api/v1/memories/{conflict.a_id}").json()
    assert loser["memory"]["status"] == "superseded" and loser["memory"]["superseded_by"] == conflict.b_id
    assert loser["links"][0]["origin"] == "review"
    again = api(acme.member_token).post(f"/api/v1/conflicts/{conflict.id}/resolve", {"decision": "keep_both"},
                                        format="json")
    assert again.status_code == 409
    assert api(acme.member_token).get("/api/v1/conflicts?status=open").json()["results"] == []
    assert len(api(acme.member_token).get("/api/v1/conflicts?status=resolved").json()["results"]) == 1


def test_keeping_both_retires_nothing(api, acme, conflict):
    response = api(acme.member_token).post(f"/api/v1/conflicts/{conflict.id}/resolve", {"decision": "keep_both"},
                                           format="json")
    assert response.status_code == 200 and response.json()["conflict"]["resolution"] == "keep_both"
    for memory_id in (conflict.a_id, conflict.b_id):
        assert api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["memory"]["status"] == "live"


@pytest.mark.parametrize("body", [
    {"decision": "flip_a_coin"}, {"decision": "supersede"},
    {"decision": "supersede", "winner": "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"},
    {"decision": "keep_both", "winner": "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"},  # a winner outside the pair, whatever
])
def test_bad_resolutions_are_400_and_change_nothing(api, acme, conflict, body):
    response = api(acme.member_token).post(f"/api/v1/conflicts/{conflict.id}/resolve", body, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"
    assert api(acme.member_token).get("/api/v1/conflicts?status=open").json()["results"][0]["id"] == conflict.id


def test_conflicts_follow_the_visibility_of_their_memories(api, acme, globex, conflict):
    assert api(globex.admin_token).get("/api/v1/conflicts").json()["results"] == []
    response = api(globex.admin_token).post(f"/api/v1/conflicts/{conflict.id}/resolve", {"decision": "keep_both"},
                                            format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert api(acme.member_token).get("/api/v1/conflicts?status=maybe").status_code == 400


def test_stats_count_what_the_caller_can_see(api, acme, globex, conflict):
    token = acme.member_token
    old = remember(api, token, "Retention is 30 days.")
    remember(api, token, "Retention is 90 days.", links=[{"type": "supersedes", "dst": old, "reason": "audit"}])
    gone = remember(api, token, "Scratch note")
    api(token).post(f"/api/v1/memories/{gone}/forget", {}, format="json")
    with rls.tenant_scope(acme.scope):
        Verdict.objects.create(org=acme.org, memory_id=conflict.b_id, other_id=conflict.a_id, relation="contradicts",
                               confidence=0.7, judge="local:test", prompt_version="judge-v2", latency_ms=12.0,
                               decision="conflict", same_token=True)
    stats = api(token).get("/api/v1/stats").json()
    assert stats["memories"] == {"live": 3, "superseded": 1, "forgotten": 1}
    assert stats["supersedes"] == {"declared": 1, "judge": 0, "review": 0, "check": 0, "source": 0, "key": 0}
    assert stats["conflicts"] == {"open": 1, "resolved": 0, "auto_resolved": 0}
    assert stats["explicit_link_ratio"] == 1.0
    assert stats["judge"] == {"calls": 1, "latency_ms_p50": 12.0, "latency_ms_p95": 12.0}
    assert stats["queue"]["same_writer_share"] == 1.0
    assert api(globex.member_token).get("/api/v1/stats").json()["memories"] == {"live": 0, "superseded": 0,
                                                                                 "forgotten": 0}


def test_a_watcher_cannot_resolve_a_conflict(api, acme, conflict):
    watcher, _ = mint_watcher(api, acme.member_token)
    for body in ({"decision": "supersede", "winner": conflict.b_id}, {"decision": "keep_both"}):
        response = api(watcher).post(f"/api/v1/conflicts/{conflict.id}/resolve", body, format="json")
        assert refused(response), response.content
    assert [c["id"] for c in api(watcher).get("/api/v1/conflicts?status=open").json()["results"]] == [conflict.id]
    for memory_id in (conflict.a_id, conflict.b_id):
        assert api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["memory"]["status"] == "live"
