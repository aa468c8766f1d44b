"""Open dynamic client registration (RFC 7591) for public clients, on django-oauth-toolkit's Application.

Anyone may register (that is what lets a client connect by URL alone), so what a registration can hold is small and
checked: a JSON object of at most MAX_BODY bytes, 1..MAX_REDIRECT_URIS redirect URIs of at most MAX_URI_LENGTH
characters, each https or loopback http (RFC 8252 section 7.3; http://localhost too, as MCP clients use it), without
wildcards, fragments, user info or whitespace; a client name of at most MAX_NAME_LENGTH printable characters; only
the authorization code and refresh token grants, no client secret (token_endpoint_auth_method "none"). Registrations
are counted per client address in Redis (tenants/ratelimit.py's windows): past the limit, 429 with Retry-After.

A registration grants nothing by itself: only a person's approval on the consent page does. The toolkit's own DCR
view was not used: it requires an authenticated registrant by default, issues RFC 7592 management tokens we do not
need, and does not know our redirect URI rules. django-oauth-toolkit-dcr (0.1) adds a dependency for less than this.
"""
import json
import math
import unicodedata
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider.models import Application

from oauth import throttle

MAX_BODY = 8 * 1024
MAX_REDIRECT_URIS = 5
MAX_URI_LENGTH = 512
MAX_NAME_LENGTH = 100
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
GRANT_TYPES = ["authorization_code", "refresh_token"]


class Refused(Exception):
    def __init__(self, error: str, description: str, status: int = 400, headers: dict | None = None) -> None:
        super().__init__(description)
        self.error, self.description, self.status, self.headers = error, description, status, headers


def _oauth_error(refused: Refused) -> JsonResponse:
    response = JsonResponse({"error": refused.error, "error_description": refused.description},
                            status=refused.status, headers=refused.headers)
    response["Cache-Control"] = "no-store"
    return response


def redirect_uri_problem(uri: object) -> str | None:
    """Why a redirect URI may not be registered, or None when it may."""
    if not isinstance(uri, str) or not uri:
        return "Each redirect URI must be a non-empty string."
    if len(uri) > MAX_URI_LENGTH:
        return f"A redirect URI may have at most {MAX_URI_LENGTH} characters."
    if any(ch.isspace() or unicodedata.category(ch)[0] == "C" for ch in uri):
        return "A redirect URI may not contain whitespace or control characters."
    if "*" in uri:
        return "A redirect URI may not contain wildcards."
    if "#" in uri:
        return "A redirect URI may not contain a fragment."
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return "A redirect URI must be an absolute URL."
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "A redirect URI may not contain user information."
    if not parts.hostname:
        return "A redirect URI must be an absolute URL with a host."
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return "A redirect URI must use https, or http on a loopback address (127.0.0.1, [::1], localhost)."


def _check(metadata: object) -> dict:
    if not isinstance(metadata, dict):
        raise Refused("invalid_client_metadata", "The body must be a JSON object of client metadata.")
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
        raise Refused("invalid_redirect_uri", f"redirect_uris must be a list of 1 to {MAX_REDIRECT_URIS} URIs.")
    for uri in uris:
        if problem := redirect_uri_problem(uri):
            raise Refused("invalid_redirect_uri", problem)
    name = metadata.get("client_name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH or not all(ch.isprintable() for ch in name):
        raise Refused("invalid_client_metadata", f"client_name must be at most {MAX_NAME_LENGTH} printable characters.")
    method = metadata.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise Refused("invalid_client_metadata", "Only public clients register here: token_endpoint_auth_method "
                                                 "must be \"none\" (PKCE protects the code instead of a secret).")
    grant_types = metadata.get("grant_types", GRANT_TYPES)
    if not isinstance(grant_types, list) or not set(grant_types) <= set(GRANT_TYPES) or not grant_types:
        raise Refused("invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only.")
    response_types = metadata.get("response_types", ["code"])
    if response_types != ["code"]:
        raise Refused("invalid_client_metadata", "response_types may hold code only.")
    scope = metadata.get("scope")
    if scope is not None and (not isinstance(scope, str) or not set(scope.split()) <= set(settings.OAUTH_SCOPES)):
        raise Refused("invalid_client_metadata", f"scope may hold {' '.join(settings.OAUTH_SCOPES)} only.")
    return {"redirect_uris": list(dict.fromkeys(uris)), "client_name": name.strip(), "scope": scope}


def _rate_limit_check(request: HttpRequest) -> None:
    limit, window = settings.OAUTH_REGISTRATIONS_PER_WINDOW, settings.OAUTH_REGISTRATION_WINDOW_SECONDS
    seconds = throttle.retry_after(request, "registration", limit, window)
    if seconds is not None:
        raise Refused("rate_limited", f"More than {limit} registrations in {window} s from this address; "
                                      f"retry in {seconds} s.", status=429, headers={"Retry-After": str(seconds)})


@csrf_exempt  # a public JSON endpoint without cookies: there is no session to forge a request with
@require_POST
def register(request: HttpRequest) -> JsonResponse:
    try:
        _rate_limit_check(request)
        if request.content_type != "application/json":
            raise Refused("invalid_client_metadata", "Send the client metadata as application/json.")
        if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY or len(request.body) > MAX_BODY:
            raise Refused("invalid_client_metadata", f"The client metadata may be at most {MAX_BODY} bytes.", 413)
        try:
            metadata = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            raise Refused("invalid_client_metadata", "The body is not valid JSON.")
        client = _check(metadata)
    except Refused as refused:
        return _oauth_error(refused)
    application = Application.objects.create(
        name=client["client_name"], client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(client["redirect_uris"]), client_secret="", hash_client_secret=False,
        skip_authorization=False, algorithm=Application.NO_ALGORITHM,
    )
    answer = {
        "client_id": application.client_id,
        "client_id_issued_at": math.floor(timezone.now().timestamp()),
        "client_name": application.name,
        "redirect_uris": client["redirect_uris"],
        "grant_types": GRANT_TYPES,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    if client["scope"]:
        answer["scope"] = client["scope"]
    response = JsonResponse(answer, status=201)
    response["Cache-Control"] = "no-store"
    return response
