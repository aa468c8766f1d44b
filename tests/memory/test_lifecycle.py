"""forget, restore, links, detail, history and the feed."""
import pytest

from memory.models import Conflict
from tenants import rls
from tests.support.memories import supersedes


def post(api, token, path, body=None):
    return api(token).post(path, body or {}, format="json")


def test_forget_and_restore_are_exact_reversals(remember, api, acme):
    memory = remember(acme.member_token, "The VPN needs MFA.")["memory"]
    forgot = post(api, acme.member_token, f"/api/v1/memories/{memory['id']}/forget", {"reason": "wrong team"})
    assert forgot.status_code == 200
    assert forgot.json()["memory"]["status"] == "forgotten"
    assert forgot.json()["memory"]["invalidated_reason"] == "wrong team"
    again = post(api, acme.member_token, f"/api/v1/memories/{memory['id']}/forget")
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_live"
    restored = post(api, acme.member_token, f"/api/v1/memories/{memory['id']}/restore")
    assert restored.status_code == 200
    back = restored.json()["memory"]
    assert (back["status"], back["invalidated_at"], back["invalidated_reason"]) == ("live", None, None)
    twice = post(api, acme.member_token, f"/api/v1/memories/{memory['id']}/restore")
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "already_live"
    actions = [e["action"] for e in api(acme.member_token).get(f"/api/v1/memories/{memory['id']}").json()["events"]]
    assert actions == ["remembered", "forgot", "restored"]


@pytest.mark.parametrize(("body", "content_type", "status", "code"), [
    ("{bad", "application/json", 400, "malformed_json"),
    ("[1]", "application/json", 400, "invalid"),
    ("hello", "text/plain", 415, "unsupported_media_type"),
    ('{"padding": "' + "x" * (1024 * 1024) + '"}', "application/json", 413, "body_too_large"),
])
def test_a_restore_with_a_bad_body_is_refused_and_restores_nothing(remember, api, acme, body, content_type, status,
                                                                  code):
    memory = remember(acme.member_token, "The VPN needs MFA.")["memory"]
    post(api, acme.member_token, f"/api/v1/memories/{memory['id']}/forget")
    response = api(acme.member_token).post(f"/api/v1/memories/{memory['id']}/restore", body,
                                           content_type=content_type)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert api(acme.member_token).get(f"/api/v1/memories/{memory['id']}").json()["memory"]["status"] == "forgotten"
    # No body at all is the usual call.
    assert api(acme.member_token).post(f"/api/v1/memories/{memory['id']}/restore").status_code == 200


def test_restore_reverses_a_supersede_and_reopens_the_loop(remember, api, acme):
    task = remember(acme.member_token, "Migrate CI to the new runners", kind="task")["memory"]
    done = remember(acme.member_token, "CI runs on the new runners now", links=supersedes(task["id"], reason="done"))
    restored = post(api, acme.member_token, f"/api/v1/memories/{task['id']}/restore").json()["memory"]
    assert (restored["status"], restored["superseded_by"], restored["invalidated_at"]) == ("live", None, None)
    assert (restored["loop"], restored["closed_by"]) == ("open", None)
    detail = api(acme.member_token).get(f"/api/v1/memories/{task['id']}").json()
    link = detail["links"][0]
    assert link["type"] == "supersedes" and link["undone_at"] is not None  # kept in history, marked undone
    assert [m["id"] for m in detail["chain"]] == [task["id"]]
    successor = api(acme.member_token).get(f"/api/v1/memories/{done['memory']['id']}").json()["memory"]
    assert successor["status"] == "live"
    assert "loop_reopened" in [e["action"] for e in detail["events"]]


def test_link_endpoint_draws_an_edge_and_retires_nothing(remember, api, acme):
    question = remember(acme.member_token, "Should we shard the events table?", kind="open-question")["memory"]
    answer = remember(acme.member_token, "Sharding the events table is not needed below 1B rows")["memory"]
    response = post(api, acme.member_token, "/api/v1/links",
                    {"src": answer["id"], "dst": question["id"], "type": "supersedes", "reason": "answered"})
    assert response.status_code == 201
    link = response.json()["link"]
    assert (link["src"], link["dst"], link["type"], link["id"][:4]) == (answer["id"], question["id"], "supersedes", "lnk_")
    still = api(acme.member_token).get(f"/api/v1/memories/{question['id']}").json()
    assert (still["memory"]["status"], still["memory"]["loop"]) == ("live", "open")
    assert [m["id"] for m in still["chain"]] == [question["id"]]


def test_link_ends_must_be_visible(remember, api, acme, globex):
    mine = remember(acme.member_token, "Mine")["memory"]
    theirs = remember(globex.member_token, "Theirs")["memory"]
    private = remember(acme.admin_token, "Admin private", scope="personal")["memory"]
    for dst in (theirs["id"], private["id"], "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"):
        response = post(api, acme.member_token, "/api/v1/links", {"src": mine["id"], "dst": dst, "type": "relates_to"})
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    bad = post(api, acme.member_token, "/api/v1/links", {"src": mine["id"], "dst": mine["id"], "type": "relates_to"})
    assert bad.status_code == 400
    unknown = post(api, acme.member_token, "/api/v1/links", {"src": mine["id"], "dst": mine["id"], "type": "likes"})
    assert unknown.status_code == 400 and "type" in unknown.json()["error"]["details"]["fields"]


def test_history_is_the_whole_chain_oldest_first(remember, api, acme):
    v1 = remember(acme.member_token, "Pro plan is $25 per month.")["memory"]
    v2 = remember(acme.member_token, "Pro plan is $29 per month.", links=supersedes(v1["id"]))["memory"]
    v3 = remember(acme.member_token, "Pro plan is $30 per month.", links=supersedes(v2["id"]))["memory"]
    expected = [v1["id"], v2["id"], v3["id"]]
    for memory_id in expected:
        chain = api(acme.member_token).get(f"/api/v1/memories/{memory_id}/history").json()["chain"]
        assert [m["id"] for m in chain] == expected
    assert [m["status"] for m in chain] == ["superseded", "superseded", "live"]


def test_a_chain_lists_a_version_before_its_replacement_even_when_the_older_one_won(remember, api, acme):
    """A review that keeps the older memory retires the newer one: the current version still comes last."""
    older = remember(acme.member_token, "The on-call rotation changes every Monday at 09:00.")["memory"]["id"]
    newer = remember(acme.member_token, "The on-call rotation changes every Wednesday at 09:00.")["memory"]["id"]
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        conflict = Conflict.objects.create(org=acme.org, a_id=older, b_id=newer, relation="contradicts")
    resolved = post(api, acme.member_token, f"/api/v1/conflicts/{conflict.id}/resolve",
                    {"decision": "supersede", "winner": older})
    assert resolved.status_code == 200, resolved.content
    for memory_id in (older, newer):
        chain = api(acme.member_token).get(f"/api/v1/memories/{memory_id}/history").json()["chain"]
        assert [(m["id"], m["status"]) for m in chain] == [(newer, "superseded"), (older, "live")]
        detail = api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()
        assert [m["id"] for m in detail["chain"]] == [newer, older]


def test_project_memories_are_the_teams_personal_ones_are_not(remember, api, acme):
    team = remember(acme.admin_token, "Web uses Node 22", project="web")["memory"]
    private = remember(acme.admin_token, "Admin's own reminder", scope="personal")["memory"]
    assert post(api, acme.member_token, f"/api/v1/memories/{team['id']}/forget").status_code == 200
    for action in ("forget", "restore"):
        response = post(api, acme.member_token, f"/api/v1/memories/{private['id']}/{action}")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_another_orgs_memory_is_404_everywhere(remember, api, acme, globex):
    theirs = remember(globex.member_token, "Globex secret roadmap")["memory"]["id"]
    client = api(acme.admin_token)
    responses = [
        client.get(f"/api/v1/memories/{theirs}"),
        client.get(f"/api/v1/memories/{theirs}/history"),
        client.post(f"/api/v1/memories/{theirs}/forget", {}, format="json"),
        client.post(f"/api/v1/memories/{theirs}/restore", {}, format="json"),
        client.get("/api/v1/memories/mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ]
    bodies = [r.json() for r in responses]
    assert {r.status_code for r in responses} == {404}
    assert len({(b["error"]["code"], b["error"]["message"]) for b in bodies[:2] + bodies[4:]}) == 1


def test_feed_filters_by_lifecycle_and_defaults_to_live(remember, api, acme):
    old = remember(acme.member_token, "Use Python 3.10", kind="decision")["memory"]
    new = remember(acme.member_token, "Use Python 3.11", kind="decision", links=supersedes(old["id"]))["memory"]
    gone = remember(acme.member_token, "Temporary note")["memory"]
    post(api, acme.member_token, f"/api/v1/memories/{gone['id']}/forget")
    feed = lambda query="": [m["id"] for m in api(acme.member_token).get(f"/api/v1/memories{query}").json()["results"]]  # noqa: E731
    assert feed() == [new["id"]]
    assert feed("?lifecycle=superseded") == [old["id"]]
    assert feed("?lifecycle=forgotten") == [gone["id"]]
    assert feed("?lifecycle=all") == [gone["id"], new["id"], old["id"]]
    assert feed("?lifecycle=all&kind=decision") == [new["id"], old["id"]]


def test_feed_pagination_is_stable_while_new_memories_arrive(remember, api, acme):
    ids = [remember(acme.member_token, f"Release note {i}: shipped feature {i}")["memory"]["id"] for i in range(5)]
    first = api(acme.member_token).get("/api/v1/memories?limit=2").json()
    assert [m["id"] for m in first["results"]] == [ids[4], ids[3]]
    remember(acme.member_token, "A brand new note that arrives between pages")
    second = api(acme.member_token).get(f"/api/v1/memories?limit=2&cursor={first['next_cursor']}").json()
    assert [m["id"] for m in second["results"]] == [ids[2], ids[1]]
    third = api(acme.member_token).get(f"/api/v1/memories?limit=2&cursor={second['next_cursor']}").json()
    assert [m["id"] for m in third["results"]] == [ids[0]] and third["next_cursor"] is None


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=abc", "cursor=garbage", "lifecycle=dead",
                                   "kind=gossip"])
def test_feed_rejects_bad_parameters(api, acme, query):
    response = api(acme.member_token).get(f"/api/v1/memories?{query}")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_feed_project_filter_needs_membership(remember, api, acme):
    remember(acme.admin_token, "Ops only", project="ops")
    assert api(acme.member_token).get("/api/v1/memories?project=ops").status_code == 404
    assert len(api(acme.admin_token).get("/api/v1/memories?project=ops").json()["results"]) == 1
