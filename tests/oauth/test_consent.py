"""The authorization code flow in process: the consent page behind the sign-in, the grant it writes, the token
endpoint, and the hostile requests each refused as the specs name it, changing nothing.

RFC 6749 4.1.2.1: an error about the client or its redirect URI is shown here, never redirected; any other error is
sent back to the client's redirect URI. RFC 7636: PKCE with S256 (plain and a missing challenge refused). RFC 8707:
a token is bound to the resource it was asked for.
"""
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.test import Client
from oauth2_provider.models import AccessToken, Grant, RefreshToken

from tenants import rls
from tenants.models import ApiToken
from tests.support.oauth import (
    REDIRECT,
    approve,
    approved_code,
    authorize_path,
    exchange,
    granted,
    mcp_resource,
    pkce,
    redirect_params,
    refresh,
    register,
    token,
)
from tests.support.pages import signed_in


def _grants(tenant) -> list[ApiToken]:
    with rls.tenant_scope(tenant.scope):
        return list(ApiToken.objects.filter(application__isnull=False).select_related("project"))


def test_signing_in_comes_first_and_leads_back(acme):
    path = authorize_path("whatever", pkce()[1])
    response = Client().get(path)
    assert response.status_code == 302 and response["Location"].startswith("/sign-in?next=/oauth/authorize")


def test_the_consent_page_names_the_client_its_redirect_host_and_the_persons_choices(acme):
    _, client = register(Client(), client_name="Claude Desktop")
    path = authorize_path(client["client_id"], pkce()[1])
    page = signed_in(acme, acme.member).get(path)
    html = page.content.decode()
    assert page.status_code == 200 and page["Cache-Control"] == "no-store"
    assert "Claude Desktop" in html and "127.0.0.1:53682" in html and "csrfmiddlewaretoken" in html
    # The member's organization, alone or with the one project they belong to (web), never ops.
    assert f'value="{acme.org.id}"' in html and f'value="{acme.org.id}/web"' in html
    assert f"{acme.org.id}/ops" not in html
    assert 'value="read"' in html and 'value="write"' in html
    # The answer redirects to the client: the page's policy lets the form go there, and nowhere else.
    assert "form-action 'self' http://127.0.0.1:53682;" in page["Content-Security-Policy"]


def test_approval_writes_one_grant_and_the_code_redeems_for_tokens_bound_to_the_resource(acme):
    _, tokens = granted(acme, acme.member)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["scope"] == "memory:read memory:write" and tokens["refresh_token"]
    [grant] = _grants(acme)
    assert (grant.user_id, grant.project.slug, grant.read_only, grant.writer, grant.name) == (
        acme.member.id, "web", False, "agent", "Test agent")
    stored = AccessToken.objects.get()
    assert stored.resource == [mcp_resource()]
    assert stored.token == "" and RefreshToken.objects.get().token == ""  # stored only as their SHA-256


def test_a_read_only_choice_narrows_the_scope_the_client_gets(acme):
    _, tokens = granted(acme, acme.member, access="read")
    assert tokens["scope"] == "memory:read"
    assert _grants(acme)[0].read_only


def test_deny_sends_access_denied_and_stores_nothing(acme):
    _, client = register(Client())
    path = authorize_path(client["client_id"], pkce()[1])
    params = redirect_params(approve(signed_in(acme, acme.member), path, str(acme.org.id), decision="deny"))
    assert params == {"error": "access_denied", "state": "st4te"}
    assert _grants(acme) == [] and Grant.objects.count() == 0


def test_a_project_the_person_is_not_in_cannot_be_chosen(acme):
    _, client = register(Client())
    path = authorize_path(client["client_id"], pkce()[1])
    response = approve(signed_in(acme, acme.member), path, f"{acme.org.id}/ops")
    assert response.status_code == 400
    assert _grants(acme) == [] and Grant.objects.count() == 0


def test_another_organization_cannot_be_chosen(acme, globex):
    _, client = register(Client())
    path = authorize_path(client["client_id"], pkce()[1])
    response = approve(signed_in(acme, acme.member), path, f"{globex.org.id}/web")
    assert response.status_code == 400
    assert _grants(acme) == [] and _grants(globex) == [] and Grant.objects.count() == 0


def test_a_forged_consent_without_the_csrf_token_is_refused(acme):
    _, client = register(Client())
    path = authorize_path(client["client_id"], pkce()[1])
    browser = signed_in(acme, acme.member)
    browser.handler.enforce_csrf_checks = True
    response = approve(browser, path, f"{acme.org.id}/web")
    assert response.status_code == 403 and "CSRF" in response.content.decode()
    assert _grants(acme) == [] and Grant.objects.count() == 0


def test_a_consent_post_without_a_session_goes_to_sign_in_and_stores_nothing(acme):
    _, client = register(Client())
    path = authorize_path(client["client_id"], pkce()[1])
    response = approve(Client(), path, f"{acme.org.id}/web")
    assert response.status_code == 302 and response["Location"].startswith("/sign-in")
    assert _grants(acme) == [] and Grant.objects.count() == 0


@pytest.mark.parametrize("overrides, error", [
    ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),  # PKCE missing
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),  # oauthlib would take this as plain
    ({"response_type": "token"}, "unauthorized_client"),  # no implicit flow
    ({"resource": "https://other.example/mcp"}, "invalid_target"),
    ({"resource": None}, "invalid_target"),
    ({"scope": "admin"}, "invalid_scope"),
])
def test_a_bad_authorization_request_goes_back_to_the_client_with_its_error(acme, overrides, error):
    _, client = register(Client())
    path = authorize_path(client["client_id"], pkce()[1], **overrides)
    browser = signed_in(acme, acme.member)
    params = redirect_params(browser.get(path))
    assert params["error"] == error and params["state"] == "st4te"
    # The approval, sent anyway, is refused the same way and stores nothing.
    assert redirect_params(approve(browser, path, f"{acme.org.id}/web"))["error"] == error
    assert _grants(acme) == [] and Grant.objects.count() == 0


@pytest.mark.parametrize("client_id, overrides", [
    (None, {"redirect_uri": "http://127.0.0.1:53682/elsewhere"}),  # not registered
    (None, {"redirect_uri": "https://attacker.example/callback"}),
    ("no-such-client", {}),
])
def test_an_unknown_client_or_unregistered_redirect_uri_is_never_redirected_to(acme, client_id, overrides):
    _, client = register(Client())
    path = authorize_path(client_id or client["client_id"], pkce()[1], **overrides)
    browser = signed_in(acme, acme.member)
    for response in (browser.get(path), approve(browser, path, f"{acme.org.id}/web")):
        assert response.status_code == 400 and "cannot be used" in response.content.decode()
    assert _grants(acme) == [] and Grant.objects.count() == 0


def test_a_wrong_or_missing_verifier_redeems_nothing(acme):
    client_id, _, code = approved_code(acme, acme.member)
    status, answer = exchange(Client(), client_id, code, pkce()[0])
    assert (status, answer["error"]) == (400, "invalid_grant")
    status, answer = exchange(Client(), client_id, code, None)
    assert (status, answer["error"]) == (400, "invalid_request")
    assert AccessToken.objects.count() == 0


def test_a_code_redeems_once(acme):
    client_id, verifier, code = approved_code(acme, acme.member)
    assert exchange(Client(), client_id, code, verifier)[0] == 200
    status, answer = exchange(Client(), client_id, code, verifier)
    assert (status, answer["error"]) == (400, "invalid_grant")
    assert AccessToken.objects.count() == 1


def test_a_code_is_bound_to_its_client_and_redirect_uri(acme):
    client_id, verifier, code = approved_code(acme, acme.member)
    _, other = register(Client(), redirect_uris=[REDIRECT])
    status, answer = exchange(Client(), other["client_id"], code, verifier)
    assert (status, answer["error"]) == (400, "invalid_grant")
    status, answer = exchange(Client(), client_id, code, verifier, redirect_uri="http://127.0.0.1:53682/other")
    assert status == 400 and answer["error"] in ("invalid_grant", "invalid_request")
    assert AccessToken.objects.count() == 0
    assert exchange(Client(), client_id, code, verifier)[0] == 200  # the control: the code was still good


def test_a_token_request_cannot_widen_the_resource(acme):
    client_id, verifier, code = approved_code(acme, acme.member)
    status, answer = exchange(Client(), client_id, code, verifier, resource=settings.PUBLIC_URL)
    assert (status, answer["error"]) == (400, "invalid_target")
    assert AccessToken.objects.count() == 0


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code",
                                        "implicit", ""])
def test_only_the_code_and_refresh_grants_are_offered(db, grant_type):
    status, answer = token(Client(), grant_type=grant_type, client_id="x")
    assert (status, answer["error"]) == (400, "unsupported_grant_type")


def test_the_token_endpoint_takes_a_small_form_only(db):
    response = Client().post("/oauth/token", {"grant_type": "authorization_code"})  # multipart
    assert (response.status_code, response.json()["error"]) == (400, "invalid_request")
    status, answer = token(Client(), grant_type="authorization_code", code="x" * 9000)
    assert (status, answer["error"]) == (400, "invalid_request")
    status, answer = token(Client(), grant_type="authorization_code", code="a\x00b")
    assert (status, answer["error"]) == (400, "invalid_request")


def test_refresh_rotates_and_a_reused_refresh_token_ends_the_family(acme):
    client_id, first = granted(acme, acme.member)
    status, second = refresh(Client(), client_id, first["refresh_token"])
    assert status == 200 and second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    status, answer = refresh(Client(), client_id, first["refresh_token"])  # replayed: a stolen token, say
    assert (status, answer["error"]) == (400, "invalid_grant")
    assert refresh(Client(), client_id, second["refresh_token"])[0] == 400  # the whole family is revoked


def test_a_revoked_grant_refreshes_nothing(acme):
    client_id, tokens = granted(acme, acme.member)
    [grant] = _grants(acme)
    with rls.tenant_scope(acme.scope):
        ApiToken.objects.filter(pk=grant.pk).update(revoked_at="2026-01-01T00:00:00Z")
    status, answer = refresh(Client(), client_id, tokens["refresh_token"])
    assert (status, answer["error"]) == (400, "invalid_grant")


def test_the_revocation_endpoint_ends_an_access_token(acme):
    client_id, tokens = granted(acme, acme.member)
    response = Client().post("/oauth/revoke", urlencode({"token": tokens["access_token"], "client_id": client_id}),
                             content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200
    assert AccessToken.objects.count() == 0


def test_token_answers_are_never_cached(acme):
    client_id, verifier, code = approved_code(acme, acme.member)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
            "code_verifier": verifier, "resource": mcp_resource()}
    for _ in range(2):  # the answer with tokens, then the refusal of the spent code (RFC 6749 5.1, 5.2)
        response = Client().post("/oauth/token", urlencode(form), content_type="application/x-www-form-urlencoded")
        assert response["Cache-Control"] == "no-store" and response["Content-Type"] == "application/json"
