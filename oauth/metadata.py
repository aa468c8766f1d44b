"""Discovery: where a client that knows only this server's URL learns the rest.

- ``/.well-known/oauth-protected-resource[/mcp]`` (RFC 9728): the resource (the server, or its MCP endpoint), which
  authorization server issues its tokens, the scopes, and that tokens go in the Authorization header only.
- ``/.well-known/oauth-authorization-server`` (RFC 8414): the endpoints and exactly what they accept.

Both are built from PUBLIC_URL, the server's one public address, never from the request's Host header.
"""
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from tenants.auth import resource_url

ISSUER_PATHS = {
    "authorization_endpoint": "/oauth/authorize",
    "token_endpoint": "/oauth/token",
    "registration_endpoint": "/oauth/register",
    "revocation_endpoint": "/oauth/revoke",
}


def _scopes() -> list[str]:
    return list(settings.OAUTH_SCOPES)


def _public(data: dict) -> JsonResponse:
    response = JsonResponse(data)
    response["Cache-Control"] = "public, max-age=3600"
    response["Access-Control-Allow-Origin"] = "*"  # public documents: browser-based clients read them too
    return response


@require_GET
def protected_resource(request: HttpRequest, path: str = "") -> JsonResponse:
    return _public({
        "resource": resource_url(path),
        "authorization_servers": [settings.PUBLIC_URL],
        "scopes_supported": _scopes(),
        "bearer_methods_supported": ["header"],
        "resource_name": "zero-memory" + (" MCP endpoint" if path else ""),
    })


@require_GET
def authorization_server(request: HttpRequest) -> JsonResponse:
    return _public({
        "issuer": settings.PUBLIC_URL,
        **{name: settings.PUBLIC_URL + path for name, path in ISSUER_PATHS.items()},
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": _scopes(),
    })
