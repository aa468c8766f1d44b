"""One error envelope for every error: {"error": {"code", "message", "details"}}."""
import logging
from enum import StrEnum

from django.conf import settings
from django.core.exceptions import DisallowedHost, PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from psycopg.errors import QueryCanceled
from rest_framework import exceptions, status
from rest_framework.response import Response

from telemetry import lock_failures
from telemetry.middleware import route_of

logger = logging.getLogger(__name__)


class Code(StrEnum):
    """Every error code the API sends (the `code` of the envelope); API.md and docs/API.md name them."""

    # Input and transport
    INVALID = "invalid"
    BAD_REQUEST = "bad_request"
    BODY_TOO_LARGE = "body_too_large"
    BODY_TIMEOUT = "body_timeout"
    DISALLOWED_HOST = "disallowed_host"
    CSRF_FAILED = "csrf_failed"
    MALFORMED_JSON = "malformed_json"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    NOT_ACCEPTABLE = "not_acceptable"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    CONTENT_TOO_LARGE = "content_too_large"
    METADATA_TOO_LARGE = "metadata_too_large"
    NESTING_TOO_DEEP = "nesting_too_deep"
    TOO_MANY_LINKS = "too_many_links"
    RATE_LIMITED = "rate_limited"
    # Who is asking
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    ADMIN_ONLY = "admin_only"
    WATCHER_FORBIDDEN = "watcher_forbidden"  # a watcher token adds; it never takes away or elevates
    INSUFFICIENT_SCOPE = "insufficient_scope"  # an OAuth grant of memory:read only, asked to write (RFC 6750 3.1)
    OAUTH_FORBIDDEN = "oauth_forbidden"  # an OAuth grant never mints tokens nor administers (oauth/)
    # What exists
    NOT_FOUND = "not_found"
    ALREADY_MEMBER = "already_member"
    DUPLICATE_SLUG = "duplicate_slug"
    LAST_ADMIN = "last_admin"  # the web page's role change (tenants/services.py): an org keeps one admin
    # Memory lifecycle and supersession
    NOT_LIVE = "not_live"
    ALREADY_LIVE = "already_live"
    PROJECT_REQUIRED = "project_required"
    TARGET_INVISIBLE = "target_invisible"
    SUPERSEDE_FORBIDDEN = "supersede_forbidden"
    REASON_REQUIRED = "reason_required"
    TOO_MANY_SUPERSEDES = "too_many_supersedes"
    ALREADY_RESOLVED = "already_resolved"
    SUCCESSOR_NOT_LIVE = "successor_not_live"
    SUCCESSOR_LESS_VISIBLE = "successor_less_visible"
    # Ours
    KEY_TAKEN = "key_taken"  # a restore would make a second live holder of a key
    STATEMENT_TIMEOUT = "statement_timeout"
    DATABASE_UNAVAILABLE = "database_unavailable"
    ERROR = "error"  # an API exception without a code of its own
    SERVER_ERROR = "server_error"


class DomainError(Exception):
    status = status.HTTP_400_BAD_REQUEST
    headers: dict[str, str] | None = None  # sent with the answer (RateLimited: Retry-After)

    def __init__(self, code: Code, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details or {}


class Invalid(DomainError):
    status = status.HTTP_400_BAD_REQUEST


class Forbidden(DomainError):
    status = status.HTTP_403_FORBIDDEN


class NotFound(DomainError):
    status = status.HTTP_404_NOT_FOUND


class StateConflict(DomainError):
    status = status.HTTP_409_CONFLICT


class TooLarge(DomainError):
    status = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


def envelope(code: Code, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


# DRF exception class -> (code, message used when DRF's own text is not helpful).
_DRF_CODES: dict[type, Code] = {
    exceptions.ParseError: Code.MALFORMED_JSON,
    exceptions.NotAuthenticated: Code.UNAUTHENTICATED,
    exceptions.AuthenticationFailed: Code.UNAUTHENTICATED,
    exceptions.PermissionDenied: Code.FORBIDDEN,
    exceptions.NotFound: Code.NOT_FOUND,
    exceptions.MethodNotAllowed: Code.METHOD_NOT_ALLOWED,
    exceptions.NotAcceptable: Code.NOT_ACCEPTABLE,
    exceptions.UnsupportedMediaType: Code.UNSUPPORTED_MEDIA_TYPE,
    exceptions.Throttled: Code.RATE_LIMITED,
}


def _field_errors(detail, path: str = "") -> dict[str, list[str]]:
    """DRF's nested errors as {path: messages}, paths written as the parser's (`links[0].reason`), so that every
    `invalid` answer names a field the same way whatever found the problem."""
    if isinstance(detail, dict):
        items = detail.items()
    elif isinstance(detail, list) and any(isinstance(item, dict | list) for item in detail):
        items = enumerate(detail)  # a list of objects: one entry per item, {} for the valid ones
    else:
        messages = [str(message) for message in (detail if isinstance(detail, list) else [detail])]
        return {path or "non_field_errors": messages} if messages else {}
    fields = {}
    for key, value in items:
        if key == "non_field_errors":
            child = path
        elif isinstance(key, int) or str(key).isdigit():
            child = f"{path}[{key}]"
        else:
            child = f"{path}.{key}" if path else str(key)
        fields.update(_field_errors(value, child))
    return fields


def _first_message(fields: dict[str, list[str]]) -> str:
    field, messages = next(iter(fields.items()), ("non_field_errors", ["Invalid input."]))
    return messages[0] if field == "non_field_errors" else f"{field}: {messages[0]}"


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(envelope(exc.code, exc.message, exc.details), status=exc.status, headers=exc.headers)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, OperationalError) and isinstance(exc.__cause__, QueryCanceled):
        # The statement timeout (tenants/rls.py) or an operator's cancel: the server's trouble, not the input's,
        # and usually passing (a lock wait, a load peak), so 503 and a retry rather than 500.
        logger.warning("statement cancelled: %s", exc)
        message = "The database did not answer in time; nothing was changed. Try again."
        return Response(envelope(Code.STATEMENT_TIMEOUT, message), status=503, headers={"Retry-After": "1"})
    if isinstance(exc, OperationalError | InterfaceError):
        return database_unavailable(exc, context.get("request"))
    if not isinstance(exc, exceptions.APIException):
        return None  # a real bug: let Django log it and answer 500 through plumbing.errors.server_error
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if isinstance(exc, exceptions.ValidationError):
        fields = _field_errors(exc.detail)
        body = envelope(Code.INVALID, _first_message(fields), {"fields": fields})
    else:
        code = _DRF_CODES.get(type(exc), Code.ERROR)
        body = envelope(code, str(exc.detail))
    return Response(body, status=exc.status_code, headers=headers)


def database_unavailable(exc: Exception, request: HttpRequest | None = None) -> JsonResponse:
    """Postgres cannot be reached (down, restarting, no pooled connection free within DB_POOL_TIMEOUT) or dropped
    the connection: the server's trouble and passing, so 503 and a retry rather than 500. The pool throws a broken
    connection away when it is handed back, and opens new ones as soon as Postgres answers again. A deadlock or a
    serialization failure answers the same and is counted by route (zm_db_lock_failures): a defect to fix."""
    if lock_failures.count(exc, route_of(request) if request is not None else "unknown"):
        logger.error("lock failure: %s: %s", type(exc).__name__, exc)
    else:
        logger.warning("database unavailable: %s: %s", type(exc).__name__, exc)
    message = "The database is unavailable for a moment; try again."
    return JsonResponse(envelope(Code.DATABASE_UNAVAILABLE, message), status=503, headers={"Retry-After": "1"})


class DatabaseUnavailableMiddleware:
    """The same 503 for a database failure outside DRF's exception handler: a commit after the view has answered
    (TenantAPIView.dispatch), or a plain Django view."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            return database_unavailable(exception, request)
        return None


def error_page(request: HttpRequest, status: int, message: str, *, principal=None,
               headers: dict | None = None) -> HttpResponse:
    """An error as a web page (tenants/pages.py); ``principal`` keeps the navigation for a signed-in user."""
    titles = {400: "That did not work", 403: "Not allowed", 404: "Not found", 405: "Not a page", 409: "Conflict",
              410: "Link no longer valid", 429: "Slow down"}
    context = {"title": titles.get(status, "Error"), "status": status, "message": message, "principal": principal}
    response = render(request, "zm/error.html", context, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


class PageMethods:
    """For page views: a method the address does not take gets the error page, not Django's empty 405 (a GET of a
    form's target, say after signing in again)."""

    def http_method_not_allowed(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        allowed = [method for method in self._allowed_methods() if method != "OPTIONS"]
        message = ("This address is where a form's button sends its answer, not a page: go back and use the button."
                   if allowed == ["POST"] else f"This page does not take a {request.method}.")
        return error_page(request, 405, message, headers={"Allow": ", ".join(allowed)})


def _wants_page(request: HttpRequest) -> bool:
    # Everything outside the API, the MCP endpoint and the health probe is a web page: its errors are pages too.
    return not request.path.startswith(("/api/", "/mcp", "/healthz", "/livez", "/readyz", "/metrics"))


@csrf_exempt  # it reads and writes nothing: a POST to an unknown path is 404, not Django's CSRF page
def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_page(request):
        return error_page(request, 404, "No such page.")
    return JsonResponse(envelope(Code.NOT_FOUND, "No such resource."), status=404)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """handler400: what Django rejects before a view answers (SuspiciousOperation), in the envelope, not HTML."""
    if isinstance(exception, RequestDataTooBig):
        # DRF reads a JSON body through request.body, which enforces DATA_UPLOAD_MAX_MEMORY_SIZE (1 MiB).
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return JsonResponse(envelope(Code.BODY_TOO_LARGE, f"The request body is larger than {limit} bytes.",
                                     {"limit": limit}), status=413)
    if isinstance(exception, DisallowedHost):
        return JsonResponse(envelope(Code.DISALLOWED_HOST, "This server does not answer for that Host header."),
                            status=400)
    return JsonResponse(envelope(Code.BAD_REQUEST, "The request was rejected as malformed."), status=400)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a cookie-session POST without its CSRF token (API views check it through DRF instead)."""
    if _wants_page(request):
        message = "This form expired or was sent from elsewhere (CSRF check). Go back, reload the page and try again."
        return error_page(request, 403, message)
    return JsonResponse(envelope(Code.CSRF_FAILED, f"CSRF check failed: {reason}"), status=403)


def server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(envelope(Code.SERVER_ERROR, "Something went wrong on our side; it has been logged."), status=500)
