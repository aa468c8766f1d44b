"""The Tenancy section of API.md, through HTTP, with two organizations side by side."""
import json

import pytest


def test_me_answers_as_the_contract_says(api, acme):
    response = api(acme.member_token).get("/api/v1/me")
    assert response.status_code == 200
    body = response.json()
    assert body["user"] == {"id": str(acme.member.id), "email": "member@acme.test"}
    assert body["org"] == "acme"
    assert body["role"] == "member"
    assert body["token"]["writer"] == "agent"
    assert body["token"]["project"] == "web"
    assert body["token"]["id"].startswith("tok_")
    assert body["projects"] == ["web"]


def test_admin_me_lists_every_project(api, acme):
    body = api(acme.admin_token).get("/api/v1/me").json()
    assert body["role"] == "admin"
    assert body["projects"] == ["ops", "web"]


@pytest.mark.parametrize("header", [None, "Bearer zm_nope", "Token abc", "Bearer "])
def test_missing_or_bad_token_is_401_in_the_envelope(api, acme, header):
    client = api()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_token_stops_working_on_the_next_request(api, acme):
    created = api(acme.member_token).post("/api/v1/tokens", {"name": "short-lived", "writer": "agent"}, format="json")
    assert created.status_code == 201
    secret, token_id = created.json()["token"], created.json()["id"]
    assert api(secret).get("/api/v1/me").status_code == 200
    assert api(acme.member_token).delete(f"/api/v1/tokens/{token_id}").status_code == 204
    assert api(secret).get("/api/v1/me").status_code == 401


def test_token_secret_is_shown_once_and_stored_hashed(api, acme):
    from tenants.models import ApiToken
    from tenants import rls

    created = api(acme.admin_token).post("/api/v1/tokens", {"name": "ci", "writer": "watcher"}, format="json").json()
    assert created["token"].startswith("zm_") and created["writer"] == "watcher"
    listed = api(acme.admin_token).get("/api/v1/tokens").json()["results"]
    assert all("token" not in row for row in listed)
    assert created["id"] in {row["id"] for row in listed}
    with rls.tenant_scope(acme.scope):
        stored = ApiToken.objects.get(pk=created["id"])
    assert created["token"] not in stored.secret_hash and len(stored.secret_hash) == 64


def test_members_get_403_on_admin_endpoints(api, acme):
    member = api(acme.member_token)
    calls = [
        member.get("/api/v1/users"),
        member.post("/api/v1/users", {"email": "x@acme.test", "role": "member"}, format="json"),
        member.post("/api/v1/projects", {"slug": "new", "name": "New"}, format="json"),
        member.post("/api/v1/projects/web/members", {"user_id": str(acme.member.id)}, format="json"),
        member.delete(f"/api/v1/projects/web/members/{acme.member.id}"),
        member.post("/api/v1/org/settings", {"require_supersede_reason": True}, format="json"),
    ]
    for response in calls:
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "admin_only"


def test_admin_manages_users_projects_and_members(api, acme):
    admin = api(acme.admin_token)
    user = admin.post("/api/v1/users", {"email": "New@Acme.test", "role": "member"}, format="json")
    assert user.status_code == 201
    assert user.json()["email"] == "new@acme.test" and user.json()["role"] == "member"
    assert admin.post("/api/v1/users", {"email": "new@acme.test"}, format="json").status_code == 409
    emails = {row["email"] for row in admin.get("/api/v1/users").json()["results"]}
    assert emails == {"admin@acme.test", "member@acme.test", "new@acme.test"}

    project = admin.post("/api/v1/projects", {"slug": "data", "name": "Data"}, format="json")
    assert project.status_code == 201 and project.json() == {"slug": "data", "name": "Data"}
    duplicate = admin.post("/api/v1/projects", {"slug": "data", "name": "Again"}, format="json")
    assert duplicate.status_code == 409 and duplicate.json()["error"]["code"] == "duplicate_slug"

    user_id = user.json()["id"]
    assert admin.post("/api/v1/projects/data/members", {"user_id": user_id}, format="json").status_code == 201
    assert admin.post("/api/v1/projects/data/members", {"user_id": user_id}, format="json").status_code == 409
    assert admin.delete(f"/api/v1/projects/data/members/{user_id}").status_code == 204
    assert admin.delete(f"/api/v1/projects/data/members/{user_id}").status_code == 404


def test_project_list_shows_only_the_callers_projects(api, acme):
    assert [p["slug"] for p in api(acme.member_token).get("/api/v1/projects").json()["results"]] == ["web"]
    assert [p["slug"] for p in api(acme.admin_token).get("/api/v1/projects").json()["results"]] == ["ops", "web"]


def test_nothing_of_another_org_is_visible_or_reachable(api, acme, globex):
    admin = api(acme.admin_token)
    assert {r["email"] for r in admin.get("/api/v1/users").json()["results"]} == {
        "admin@acme.test", "member@acme.test"
    }
    globex_tokens = api(globex.admin_token).get("/api/v1/tokens").json()["results"]
    assert not {t["id"] for t in globex_tokens} & {t["id"] for t in admin.get("/api/v1/tokens").json()["results"]}

    refused = [
        admin.post("/api/v1/projects/web/members", {"user_id": str(globex.member.id)}, format="json"),
        admin.delete(f"/api/v1/projects/web/members/{globex.member.id}"),
        admin.delete(f"/api/v1/tokens/{globex_tokens[0]['id']}"),
        admin.post("/api/v1/tokens", {"name": "x", "writer": "agent", "user_id": str(globex.admin.id)}, format="json"),
    ]
    for response in refused:
        assert response.status_code == 404, response.content
        assert response.json()["error"] == {"code": "not_found", "message": response.json()["error"]["message"],
                                            "details": response.json()["error"]["details"]}
    # globex's token still works: the cross-org revoke changed nothing.
    assert api(globex.admin_token).get("/api/v1/me").status_code == 200


def test_token_rules_for_members_and_admins(api, acme):
    member, admin = api(acme.member_token), api(acme.admin_token)
    for_other = {"name": "x", "writer": "agent", "user_id": str(acme.admin.id)}
    assert member.post("/api/v1/tokens", for_other, format="json").status_code == 403
    for_member = {"name": "x", "writer": "human", "user_id": str(acme.member.id), "project": "web"}
    minted = admin.post("/api/v1/tokens", for_member, format="json")
    assert minted.status_code == 201 and minted.json()["project"] == "web"
    # The member does not belong to "ops": for them it does not exist.
    not_member = admin.post("/api/v1/tokens", {**for_member, "project": "ops"}, format="json")
    assert not_member.status_code == 404
    # Members see only their own tokens; admins see the member's too; members cannot revoke the admin's.
    member_ids = {t["id"] for t in member.get("/api/v1/tokens").json()["results"]}
    assert minted.json()["id"] in member_ids
    admin_token_id = api(acme.admin_token).get("/api/v1/me").json()["token"]["id"]
    assert admin_token_id not in member_ids
    assert member.delete(f"/api/v1/tokens/{admin_token_id}").status_code == 404


def test_org_settings_default_and_update(api, acme):
    assert api(acme.member_token).get("/api/v1/org/settings").json() == {"require_supersede_reason": False}
    updated = api(acme.admin_token).post("/api/v1/org/settings", {"require_supersede_reason": True}, format="json")
    assert updated.status_code == 200 and updated.json() == {"require_supersede_reason": True}
    assert api(acme.member_token).get("/api/v1/org/settings").json() == {"require_supersede_reason": True}


@pytest.mark.parametrize(
    "body, content_type, status, code",
    [
        ("{not json", "application/json", 400, "malformed_json"),
        ("[1, 2]", "application/json", 400, "invalid"),
        ('"a string"', "application/json", 400, "invalid"),
        ("slug=x", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
        (json.dumps({"slug": "not a slug!"}), "application/json", 400, "invalid"),
    ],
)
def test_bad_bodies_get_the_envelope_and_change_nothing(api, acme, body, content_type, status, code):
    response = api(acme.admin_token).post("/api/v1/projects", body, content_type=content_type)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert [p["slug"] for p in api(acme.admin_token).get("/api/v1/projects").json()["results"]] == ["ops", "web"]


def test_validation_error_names_the_field(api, acme):
    response = api(acme.admin_token).post("/api/v1/tokens", {"name": "x", "writer": "robot"}, format="json")
    assert response.status_code == 400
    assert "writer" in response.json()["error"]["details"]["fields"]
    assert response.json()["error"]["message"].startswith("writer:")


def test_unknown_paths_and_wrong_methods_use_the_envelope(api, acme):
    missing = api(acme.admin_token).get("/api/v1/nothing/here")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = api(acme.admin_token).put("/api/v1/me", {}, format="json")
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", ["/api/v1/nothing/here", "/api/v1/memories/"])
def test_writes_to_unknown_paths_are_404_in_the_envelope(api, acme, method, path):
    # As a real client sends them: no CSRF cookie (Django's test client skips the CSRF check unless told).
    for client in (api(acme.admin_token), api()):
        client.handler.enforce_csrf_checks = True
        response = getattr(client, method)(path, "{}", content_type="application/json")
        assert response.status_code == 404, response.content
        assert response.json()["error"]["code"] == "not_found"


def test_a_body_over_1_mib_is_413_in_the_envelope_and_stores_nothing(api, acme):
    body = json.dumps({"content": "A body with padding.", "pad": "x" * (1024 * 1024)})
    client = api(acme.member_token)
    response = client.post("/api/v1/memories", body, content_type="application/json")
    assert response.status_code == 413, response.content[:200]
    assert response.json()["error"]["code"] == "body_too_large"
    assert response.json()["error"]["details"] == {"limit": 1024 * 1024}
    assert client.get("/api/v1/memories").json()["results"] == []


def test_what_django_rejects_itself_answers_in_the_envelope(acme, client):
    from rest_framework.test import APIClient

    # Rejected before any operation runs, so not an answer of the OpenAPI document: a client that does not check it.
    other_host = APIClient().get("/api/v1/me", HTTP_HOST="evil.example", HTTP_AUTHORIZATION=f"Bearer {acme.member_token}")
    assert other_host.status_code == 400 and other_host.json()["error"]["code"] == "disallowed_host"
    client.handler.enforce_csrf_checks = True
    no_csrf = client.post("/healthz", "{}", content_type="application/json")
    assert no_csrf.status_code == 403 and no_csrf.json()["error"]["code"] == "csrf_failed"


def test_healthz_and_schema(client, db):
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "db": "ok", "queue": "ok", "judge": "local"}
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    document = schema.json()
    assert document["openapi"].startswith("3.")
    assert {"/api/v1/me", "/api/v1/tokens", "/api/v1/projects/{slug}/members"} <= set(document["paths"])


def test_session_login_acts_in_the_org_chosen_at_login(client, acme):
    from tenants import rls
    from tenants.auth import SESSION_ORG_KEY

    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        client.force_login(acme.member)
    assert client.get("/api/v1/me").status_code == 401  # logged in, but no organization chosen
    session = client.session
    session[SESSION_ORG_KEY] = str(acme.org.id)
    session.save()
    body = client.get("/api/v1/me").json()
    assert (body["user"]["email"], body["org"], body["role"], body["token"]) == ("member@acme.test", "acme", "member", None)


def test_bootstrap_command_prints_one_json_line_with_a_working_token(api, db, capsys):
    from django.core.management import call_command

    call_command("bootstrap", "--org", "initech", "--admin", "Boss@Initech.test", "--project", "tps")
    line = json.loads(capsys.readouterr().out.strip())
    assert (line["org"], line["user"], line["projects"]) == ("initech", "boss@initech.test", ["tps"])
    assert line["token"].startswith("zm_")
    me = api(line["token"]).get("/api/v1/me").json()
    assert (me["org"], me["role"], me["projects"]) == ("initech", "admin", ["tps"])
    # Again: nothing is duplicated, and a new token is issued.
    call_command("bootstrap", "--org", "initech", "--admin", "boss@initech.test", "--project", "tps", "--project", "qa")
    again = json.loads(capsys.readouterr().out.strip())
    assert again["token"] != line["token"] and again["user_id"] == line["user_id"]
    assert api(again["token"]).get("/api/v1/me").json()["projects"] == ["qa", "tps"]


@pytest.mark.slow
def test_the_openapi_document_validates_without_warnings(db, tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    text = (tmp_path / "schema.yaml").read_text()
    assert "/api/v1/recall:" in text and "/api/v1/conflicts/{conflict_id}/resolve:" in text
