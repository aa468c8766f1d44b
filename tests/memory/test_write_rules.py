"""Rules at the edge of a write: a token whose default project the user has left, sources that write tasks, a strict
recall query and the cap on links (reviews left running by a crashed worker: tests/hygiene/test_stale_reviews.py)."""
import pytest

from tests.support.tenants import Tenant


def test_a_member_removed_from_the_default_project_of_their_token_gets_404_on_writes(api, acme: Tenant):
    assert api(acme.admin_token).delete(f"/api/v1/projects/web/members/{acme.member.id}").status_code == 204
    member = api(acme.member_token)
    for path, body in [
        ("/api/v1/memories", {"content": "Deploys are on Fridays."}),
        ("/api/v1/memories", {"content": "Deploys are on Fridays.", "scope": "project"}),
        ("/api/v1/sources", {"source_id": "runbook", "content": "Deploys are on Fridays."}),
    ]:
        response = member.post(path, body, format="json")
        assert response.status_code == 404, response.content
        assert response.json()["error"]["code"] == "not_found"
        assert response.json()["error"]["message"] == "No such project."
    # Reads still answer, and the token shows no project it cannot see.
    me = member.get("/api/v1/me")
    assert me.status_code == 200 and me.json()["token"]["project"] is None
    assert member.get("/api/v1/memories").json()["results"] == []


def test_a_task_written_through_sources_is_an_open_loop_and_its_next_version_closes_it(api, acme: Tenant):
    member = api(acme.member_token)
    first = member.post("/api/v1/sources", {"source_id": "todo-42", "content": "Rotate the staging TLS cert.",
                                            "kind": "task"}, format="json").json()["memory"]
    assert first["loop"] == "open"
    assert [m["id"] for m in member.get("/api/v1/loops").json()["results"]] == [first["id"]]
    second = member.post("/api/v1/sources", {"source_id": "todo-42", "content": "Rotate the staging and prod TLS "
                                             "certs.", "kind": "task"}, format="json").json()["memory"]
    assert second["loop"] == "open"
    assert [m["id"] for m in member.get("/api/v1/loops").json()["results"]] == [second["id"]]
    closed = member.get("/api/v1/loops?state=closed").json()["results"]
    assert [(m["id"], m["closed_by"]) for m in closed] == [(first["id"], second["id"])]
    fact = member.post("/api/v1/sources", {"source_id": "readme", "content": "The cert lives in vault."},
                       format="json").json()["memory"]
    assert fact["loop"] is None


@pytest.mark.parametrize("query", [5, 5.5, True, None, ["deploys"], {"q": "deploys"}])
def test_recall_takes_only_a_string_query(api, acme: Tenant, query):
    response = api(acme.member_token).post("/api/v1/recall", {"query": query}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid" and "query" in error["details"]["fields"]


def link_list(count: int) -> list[dict]:
    return [{"type": "relates_to", "dst": f"mem_01HZZZZZZZZZZZZZZZZZZZ{i:04d}"} for i in range(count)]


def test_a_write_carries_at_most_50_links(api, acme: Tenant, visible_count):
    member = api(acme.member_token)
    for count in (51, 5000):
        response = member.post("/api/v1/memories", {"content": "Many links.", "links": link_list(count)},
                               format="json")
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert (error["code"], error["details"]) == ("too_many_links", {"limit": 50, "count": count})
    assert visible_count(acme.member_token) == 0
    # Exactly 50 is fine (all of them name nothing here, so each is skipped as missing).
    response = member.post("/api/v1/memories", {"content": "Many links.", "links": link_list(50)}, format="json")
    assert response.status_code == 201 and len(response.json()["skipped"]) == 50
