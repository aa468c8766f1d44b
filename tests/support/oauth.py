"""OAuth clients as the tests drive them in process (Django's test client): registration, PKCE, the consent page,
the token endpoint. tests/mcp_server/test_oauth.py drives the same endpoints with the MCP SDK's client instead."""
import base64
import hashlib
import json
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

from django.conf import settings
from django.test import Client

from tests.support.pages import signed_in

REDIRECT = "http://127.0.0.1:53682/callback"


def mcp_resource() -> str:
    return settings.PUBLIC_URL + "/mcp"


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(client: Client, address: str | None = None, **metadata) -> tuple[int, dict]:
    """Register a public client, from ``address`` (by default one of its own: registrations are counted per
    address in Redis, which outlives each test)."""
    body = {"client_name": "Test agent", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
            **metadata}
    address = address or f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.{secrets.randbelow(256)}"
    response = client.post("/oauth/register", json.dumps(body), content_type="application/json",
                           REMOTE_ADDR=address)
    return response.status_code, response.json()


def authorize_path(client_id: str, challenge: str | None, **overrides) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st4te",
              "code_challenge": challenge, "code_challenge_method": "S256", "resource": mcp_resource(),
              "scope": "memory:read memory:write", **overrides}
    return "/oauth/authorize?" + urlencode({k: v for k, v in params.items() if v is not None})


def redirect_params(response) -> dict[str, str]:
    """The query of a redirect back to the client (its Location)."""
    assert response.status_code == 302, response.content[:500]
    location = response["Location"]
    assert location.startswith(REDIRECT + "?"), location  # back to the client, never elsewhere
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def approve(browser: Client, path: str, target: str, access: str = "write", decision: str = "allow"):
    return browser.post(path, {"target": target, "access": access, "decision": decision})


def token(client: Client, **form) -> tuple[int, dict]:
    response = client.post("/oauth/token", urlencode(form), content_type="application/x-www-form-urlencoded")
    return response.status_code, response.json()


def exchange(client: Client, client_id: str, code: str, verifier: str | None, **overrides) -> tuple[int, dict]:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
            "code_verifier": verifier, "resource": mcp_resource(), **overrides}
    return token(client, **{k: v for k, v in form.items() if v is not None})


def refresh(client: Client, client_id: str, refresh_token: str) -> tuple[int, dict]:
    return token(client, grant_type="refresh_token", refresh_token=refresh_token, client_id=client_id,
                 resource=mcp_resource())


def approved_code(tenant, user, *, resource: str | None = None, access: str = "write",
                  project: str | None = "web") -> tuple[str, str, str]:
    """(client_id, verifier, code): a client registered and approved by ``user`` on the consent page, for the
    tenant's organization and ``project`` (None: no default project)."""
    status, client = register(Client())
    assert status == 201, client
    verifier, challenge = pkce()
    path = authorize_path(client["client_id"], challenge, resource=resource or mcp_resource())
    browser = signed_in(tenant, user)
    assert browser.get(path).status_code == 200
    target = f"{tenant.org.id}/{project}" if project else str(tenant.org.id)
    params = redirect_params(approve(browser, path, target, access))
    assert params["state"] == "st4te", params
    return client["client_id"], verifier, params["code"]


def granted(tenant, user, *, resource: str | None = None, **choices) -> tuple[str, dict]:
    """(client_id, the token endpoint's answer) after the whole flow."""
    client_id, verifier, code = approved_code(tenant, user, resource=resource, **choices)
    status, tokens = exchange(Client(), client_id, code, verifier, resource=resource or mcp_resource())
    assert status == 200, tokens
    return client_id, tokens
