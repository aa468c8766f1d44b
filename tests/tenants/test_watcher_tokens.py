"""A watcher token never elevates: it mints only watcher tokens, revokes only itself, administers nothing."""
from tests.support.watchers import mint_watcher, refused


def _token_ids(api, token: str) -> set[str]:
    return {row["id"] for row in api(token).get("/api/v1/tokens").json()["results"]}


def test_a_watcher_may_mint_another_watcher_token_for_its_user(api, acme):
    watcher, _ = mint_watcher(api, acme.member_token)
    response = api(watcher).post("/api/v1/tokens", {"name": "second watcher", "writer": "watcher"}, format="json")
    assert response.status_code == 201 and response.json()["writer"] == "watcher"
    assert api(response.json()["token"]).get("/api/v1/me").json()["token"]["writer"] == "watcher"


def test_a_watcher_cannot_mint_an_authoritative_token_or_one_for_another_user(api, acme):
    for owner, other_user in ((acme.member_token, acme.admin), (acme.admin_token, acme.member)):
        watcher, _ = mint_watcher(api, owner)
        before = _token_ids(api, acme.admin_token)
        for body in ({"writer": "agent"}, {"writer": "human"}, {"writer": "agent", "user_id": str(other_user.id)},
                     {"writer": "watcher", "user_id": str(other_user.id)}):
            response = api(watcher).post("/api/v1/tokens", {"name": "escalate", **body}, format="json")
            assert refused(response), response.content
        assert _token_ids(api, acme.admin_token) == before


def test_a_watcher_may_revoke_itself(api, acme):
    watcher, watcher_id = mint_watcher(api, acme.member_token)
    assert api(watcher).delete(f"/api/v1/tokens/{watcher_id}").status_code == 204
    assert api(watcher).get("/api/v1/me").status_code == 401


def test_a_watcher_cannot_revoke_its_users_other_tokens(api, acme):
    watcher, _ = mint_watcher(api, acme.member_token)
    sibling, sibling_id = mint_watcher(api, acme.member_token)
    agent_id = api(acme.member_token).get("/api/v1/me").json()["token"]["id"]
    for token_id in (agent_id, sibling_id):
        assert refused(api(watcher).delete(f"/api/v1/tokens/{token_id}"))
    assert api(acme.member_token).get("/api/v1/me").status_code == 200
    assert api(sibling).get("/api/v1/me").status_code == 200
    # An admin's watcher cannot revoke the members' tokens either.
    admins_watcher, _ = mint_watcher(api, acme.admin_token, project=None)
    assert refused(api(admins_watcher).delete(f"/api/v1/tokens/{agent_id}"))
    assert api(acme.member_token).get("/api/v1/me").status_code == 200


def test_an_admins_watcher_token_administers_nothing_but_may_read(api, acme):
    watcher, _ = mint_watcher(api, acme.admin_token, project=None)
    client = api(watcher)
    calls = [
        client.post("/api/v1/users", {"email": "x@acme.test", "role": "admin"}, format="json"),
        client.post("/api/v1/projects", {"slug": "new", "name": "New"}, format="json"),
        client.post("/api/v1/projects/ops/members", {"user_id": str(acme.member.id)}, format="json"),
        client.delete(f"/api/v1/projects/web/members/{acme.member.id}"),
        client.post("/api/v1/org/settings", {"require_supersede_reason": True}, format="json"),
    ]
    for response in calls:
        assert refused(response), response.content
    admin = api(acme.admin_token)
    assert {u["email"] for u in client.get("/api/v1/users").json()["results"]} == {"admin@acme.test",
                                                                                     "member@acme.test"}
    assert [p["slug"] for p in admin.get("/api/v1/projects").json()["results"]] == ["ops", "web"]
    assert api(acme.member_token).get("/api/v1/me").json()["projects"] == ["web"]
    assert admin.get("/api/v1/org/settings").json()["require_supersede_reason"] is False
