"""Discovery (RFC 9728, RFC 8414) and the 401 challenges that point at it (RFC 6750 3, RFC 9728 5.1)."""
from django.conf import settings
from django.test import Client


def test_the_protected_resource_metadata_names_the_resource_and_its_authorization_server(db):
    base = settings.PUBLIC_URL
    for path, resource in (("/.well-known/oauth-protected-resource", base),
                           ("/.well-known/oauth-protected-resource/mcp", base + "/mcp")):
        document = Client().get(path).json()
        assert document["resource"] == resource
        assert document["authorization_servers"] == [base]
        assert document["scopes_supported"] == ["memory:read", "memory:write"]
        assert document["bearer_methods_supported"] == ["header"]


def test_the_authorization_server_metadata_says_exactly_what_is_offered(db):
    base = settings.PUBLIC_URL
    document = Client().get("/.well-known/oauth-authorization-server").json()
    assert document["issuer"] == base
    assert (document["authorization_endpoint"], document["token_endpoint"], document["registration_endpoint"],
            document["revocation_endpoint"]) == (base + "/oauth/authorize", base + "/oauth/token",
                                                 base + "/oauth/register", base + "/oauth/revoke")
    assert document["response_types_supported"] == ["code"]
    assert document["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["token_endpoint_auth_methods_supported"] == ["none"]
    assert document["scopes_supported"] == ["memory:read", "memory:write"]


def test_an_api_401_points_at_the_metadata_and_keeps_the_envelope(db):
    metadata = f'resource_metadata="{settings.PUBLIC_URL}/.well-known/oauth-protected-resource"'
    response = Client().get("/api/v1/me")
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
    assert response["WWW-Authenticate"] == f'Bearer realm="zero-memory", {metadata}'
    response = Client().get("/api/v1/me", HTTP_AUTHORIZATION="Bearer not-a-token")
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
    assert response["WWW-Authenticate"] == f'Bearer realm="zero-memory", error="invalid_token", {metadata}'
