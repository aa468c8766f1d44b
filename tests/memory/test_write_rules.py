"""Write rules of issue 11 (defects 3 and 7): a token whose default project the user has left, sources that write
tasks, a strict recall query, the cap on links, and reviews left running by a crashed worker."""
import pytest

from tests.conftest import Tenant


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
