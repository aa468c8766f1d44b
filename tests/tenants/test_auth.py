"""OAuth access tokens at the REST API (tenants/auth.py): the same Principal as a minted token, bound to a resource
(RFC 8707), never admin-capable, read-only when granted memory:read only, and refused (401 invalid_token) once
revoked, expired, or its person has left the organization. Minted tokens work as before beside them."""
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import AccessToken

from tenants import rls
from tenants.models import ApiToken, Membership, ProjectMember
from tests.support.oauth import granted

SERVER = settings.PUBLIC_URL  # a token for the whole server: the REST API's resource is below it


def _invalid(response) -> None:
    assert response.status_code == 401, response.json()
    assert response.json()["error"]["code"] == "unauthenticated"
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert "resource_metadata=" in response["WWW-Authenticate"]


def test_an_oauth_token_is_its_person_in_the_chosen_organization_and_project(api, acme):
    _, tokens = granted(acme, acme.member, resource=SERVER)
    me = api(tokens["access_token"]).get("/api/v1/me")
    assert me.status_code == 200
    body = me.json()
    assert (body["user"]["email"], body["org"], body["role"], body["token"]["writer"], body["token"]["project"]) == (
        "member@acme.test", "acme", "member", "agent", "web")
    written = api(tokens["access_token"]).post("/api/v1/memories", {"content": "Deploys go out on Tuesdays."},
                                               format="json")
    assert written.status_code == 201 and written.json()["memory"]["project"] == "web"
    assert api(acme.member_token).get("/api/v1/me").status_code == 200  # minted tokens, unchanged


def test_a_token_bound_to_the_mcp_endpoint_is_refused_at_the_api(api, acme):
    _, tokens = granted(acme, acme.member)  # resource: PUBLIC_URL/mcp
    _invalid(api(tokens["access_token"]).get("/api/v1/me"))


def test_a_token_bound_to_another_server_is_refused(api, acme):
    _, tokens = granted(acme, acme.member, resource=SERVER)
    AccessToken.objects.update(resource=["https://other.example"])
    _invalid(api(tokens["access_token"]).get("/api/v1/me"))


def test_a_read_only_grant_reads_and_recalls_but_writes_nothing(api, acme):
    _, tokens = granted(acme, acme.member, resource=SERVER, access="read")
    client = api(tokens["access_token"])
    assert client.get("/api/v1/memories").status_code == 200
    assert client.post("/api/v1/recall", {"query": "deploys"}, format="json").status_code == 200
    refused = client.post("/api/v1/memories", {"content": "Written anyway"}, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "insufficient_scope"
    assert refused["WWW-Authenticate"].startswith('Bearer realm="zero-memory", error="insufficient_scope"')
    assert api(acme.member_token).get("/api/v1/memories").json()["results"] == []  # nothing was stored


def test_an_admins_grant_has_no_admin_powers_and_mints_nothing(api, acme):
    _, tokens = granted(acme, acme.admin, resource=SERVER, project=None)
    client = api(tokens["access_token"])
    assert client.get("/api/v1/me").json()["role"] == "admin"  # who the person is, not what the token may do
    assert client.get("/api/v1/users").json()["error"]["code"] == "admin_only"
    minted = client.post("/api/v1/tokens", {"name": "escape", "writer": "human", "project": None}, format="json")
    assert minted.status_code == 403 and minted.json()["error"]["code"] == "oauth_forbidden"
    with rls.tenant_scope(acme.scope):
        assert not ApiToken.objects.filter(name="escape").exists()


def test_revoking_the_grant_like_any_token_cuts_the_next_call(api, acme):
    _, tokens = granted(acme, acme.member, resource=SERVER)
    client = api(tokens["access_token"])
    assert client.get("/api/v1/me").status_code == 200
    with rls.tenant_scope(acme.scope):
        grant = ApiToken.objects.get(application__isnull=False)
    listed = api(acme.member_token).get("/api/v1/tokens").json()["results"]
    assert grant.id in {token["id"] for token in listed}  # beside the minted ones
    assert api(acme.member_token).delete(f"/api/v1/tokens/{grant.id}").status_code == 204
    _invalid(client.get("/api/v1/me"))


def test_an_expired_token_is_refused(api, acme):
    _, tokens = granted(acme, acme.member, resource=SERVER)
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    _invalid(api(tokens["access_token"]).get("/api/v1/me"))


def test_a_token_of_someone_who_left_the_organization_is_refused(api, acme):
    _, tokens = granted(acme, acme.member, resource=SERVER)
    with rls.tenant_scope(acme.scope):
        ProjectMember.objects.filter(user=acme.member).delete()
        Membership.objects.filter(user=acme.member).delete()
    response = api(tokens["access_token"]).get("/api/v1/me")
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
