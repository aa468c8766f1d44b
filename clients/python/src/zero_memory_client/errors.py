"""Exceptions: one class per HTTP status family, each carrying the server's error envelope.

The server answers every error as `{"error": {"code", "message", "details"}}`. Callers branch on the class for the
kind of failure (retry later, fix the input, ask an admin) and on `code` for the exact reason (`not_live`,
`duplicate_slug`, `watcher_forbidden`...), so both are kept.
"""
from __future__ import annotations

from typing import Any

import httpx


class ZeroMemoryError(Exception):
    """Any failure of a call: a non-2xx answer (`status` set) or no answer at all (`status` None)."""

    def __init__(self, status: int | None, code: str, message: str, details: dict[str, Any] | None = None,
                 *, headers: httpx.Headers | None = None) -> None:
        super().__init__(f"{status or '-'} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details: dict[str, Any] = details or {}
        self.headers = headers if headers is not None else httpx.Headers()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r})"


class BadRequest(ZeroMemoryError):
    """400: the request was refused as written (`invalid`, `malformed_json`, `too_many_links`...); do not retry it."""


class Unauthorized(ZeroMemoryError):
    """401: no token, a bad or revoked one."""


class Forbidden(ZeroMemoryError):
    """403: the caller may not do this (`admin_only`, `watcher_forbidden`, `target_invisible`...)."""


class NotFound(ZeroMemoryError):
    """404: missing or invisible; the server never says which."""


class Conflict(ZeroMemoryError):
    """409: the state forbids it (`not_live`, `already_live`, `already_member`, `duplicate_slug`, `already_resolved`,
    `key_taken`: a restore of a keyed version while another live memory holds its key)."""


ConflictError = Conflict  # the package exports the conflict *record* as `Conflict`; this name avoids the clash


class PayloadTooLarge(ZeroMemoryError):
    """413: `content_too_large`, `metadata_too_large` or a body over 1 MiB (`body_too_large`)."""


class RateLimited(ZeroMemoryError):
    """429: too many requests from this token in its window; nothing was done. `retry_after` in seconds (or None)."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(ZeroMemoryError):
    """5xx: the server failed or is unavailable (503 `statement_timeout` / `database_unavailable` say retry later)."""

    @property
    def retry_after(self) -> float | None:
        return parse_retry_after(self.headers.get("Retry-After"))


class ConnectionFailed(ZeroMemoryError, ConnectionError):
    """No answer: the connection could not be made, broke, or timed out. `sent` tells whether the request may have
    reached the server (False only when the connection was never established)."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(None, "connection_error", message)
        self.sent = sent


class Timeout(ConnectionFailed, TimeoutError):
    """No answer within the client's timeout."""


_BY_STATUS: dict[int, type[ZeroMemoryError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 413: PayloadTooLarge,
    429: RateLimited,
}


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds: the server sends an integer; an HTTP date (from a proxy) is accepted too."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from datetime import datetime, timezone
    from email.utils import parsedate_to_datetime
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def error_from_response(response: httpx.Response) -> ZeroMemoryError:
    """The exception for a non-2xx answer. A body outside the envelope (a proxy's HTML page) still gives an error,
    with code `http_<status>` and the start of the text as message."""
    status = response.status_code
    code, message, details = f"http_{status}", response.reason_phrase or "HTTP error", {}
    try:
        envelope = response.json()["error"]
        code, message = str(envelope["code"]), str(envelope.get("message", ""))
        details = envelope.get("details") or {}
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()
        if text:
            message = text[:200]
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ZeroMemoryError)
    kwargs: dict[str, Any] = {"headers": response.headers}
    if cls is RateLimited:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        if retry_after is None and isinstance(details.get("retry_after"), (int, float)):
            retry_after = float(details["retry_after"])
        kwargs["retry_after"] = retry_after
    return cls(status, code, message, details, **kwargs)


# Raised by httpx before any byte of the request left this process: safe to retry whatever the method.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def error_from_transport(exc: httpx.TransportError) -> ConnectionFailed:
    sent = not isinstance(exc, NOT_SENT)
    cls = Timeout if isinstance(exc, httpx.TimeoutException) else ConnectionFailed
    return cls(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, sent=sent)
