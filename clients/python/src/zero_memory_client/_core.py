"""What the sync and the async client share: how a call is described, encoded, retried and parsed.

Each API operation is built here once, as a `Call` (method, path, query, body, how to parse the answer, whether it
may be repeated); `client.py` and `aio.py` only send Calls. So the two clients cannot drift apart, and the retry
rules live in one place (`RetryPolicy`).
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Generic, TypeVar
from urllib.parse import quote

import httpx

from . import models
from .errors import NOT_SENT, RateLimited, ServerError, ZeroMemoryError
from .params import FeedFields, RecallFields, RememberFields, declared

R = TypeVar("R")

API_PREFIX = "/api/v1"
USER_AGENT = "zero-memory-client/0.1.0"


class _Unset:
    """Marks an argument the caller did not give, so that an explicit None can still be sent as JSON null."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Call(Generic[R]):
    method: str
    path: str  # below /api/v1
    parse: Callable[[Any], R]
    body: dict[str, Any] | None = None
    params: dict[str, Any] | None = None
    # True when sending it twice does what sending it once does (reads, recall, a settings value, a revocation): such
    # a call may be retried even when the server may have processed it.
    idempotent: bool = False


@dataclass(frozen=True)
class RetryPolicy:
    """When a failed call is sent again, and after how long.

    - `429 rate_limited` (the server did nothing): always retried, after `Retry-After` seconds; when the server asks
      for longer than `max_retry_after`, the error is raised at once instead (waiting less would only fail again).
    - `503` (`statement_timeout`, `database_unavailable`): retried after `Retry-After` for idempotent calls only: a
      write that got a 503 may have been stored (API.md), and sending it again could store it twice.
    - a connection that could not be made (`httpx.ConnectError`, connect/pool timeouts): retried for every call,
      nothing was sent. Any other transport error (a read timeout, a dropped connection): idempotent calls only.
    - at most `retries` retries; without a `Retry-After`, waits `backoff * 2**attempt` (capped at `max_backoff`),
      jittered between half and all of it so that many clients do not come back at the same instant.
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    jitter: bool = True

    def delay(self, attempt: int) -> float:
        wait = min(self.max_backoff, self.backoff * (2 ** attempt))
        return wait * (0.5 + random.random() / 2) if self.jitter else wait

    def after_response(self, call: Call[Any], error: ZeroMemoryError, attempt: int) -> float | None:
        """Seconds to wait before retrying after this error answer, or None to raise it."""
        if attempt >= self.retries:
            return None
        if isinstance(error, RateLimited):
            retryable = True
            retry_after = error.retry_after
        elif isinstance(error, ServerError) and error.status == 503:
            retryable = call.idempotent
            retry_after = error.retry_after
        else:
            return None
        if not retryable:
            return None
        if retry_after is None:
            return self.delay(attempt)
        return retry_after if retry_after <= self.max_retry_after else None

    def after_transport_error(self, call: Call[Any], exc: httpx.TransportError, attempt: int) -> float | None:
        if attempt >= self.retries:
            return None
        if isinstance(exc, NOT_SENT) or call.idempotent:
            return self.delay(attempt)
        return None


def base_url(url: str) -> str:
    """The server's root, with or without `/api/v1` given: the client adds it."""
    url = url.rstrip("/")
    return url[: -len(API_PREFIX)] if url.endswith(API_PREFIX) else url


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": USER_AGENT}


def segment(value: str) -> str:
    """A path parameter, escaped: a source id may contain `/`."""
    return quote(str(value), safe="")


def encode(value: Any) -> Any:
    """JSON for the server: datetimes as ISO-8601 (a naive one is taken as UTC), tuples as lists."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {k: encode(v) for k, v in value.items()}
    return value


def given(**values: Any) -> dict[str, Any]:
    """The keys the caller set (UNSET left out), encoded."""
    return {key: encode(value) for key, value in values.items() if value is not UNSET}


def checked(operation: str, fields: Mapping[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """`fields` encoded, after refusing a name the operation does not take, as Python would for a real keyword."""
    for name in fields:
        if name not in allowed:
            raise TypeError(f"{operation}() got an unexpected keyword argument {name!r}")
    return {key: encode(value) for key, value in fields.items()}


def _many(cls: type[models.T]) -> Callable[[Any], tuple[models.T, ...]]:
    return lambda data: tuple(cls.from_json(item) for item in data["results"])


def _inner(key: str, cls: type[models.T]) -> Callable[[Any], models.T]:
    return lambda data: cls.from_json(data[key])


def _nothing(_: Any) -> None:
    return None


REMEMBER_FIELDS = declared(RememberFields)
RECALL_FIELDS = declared(RecallFields)
FEED_FIELDS = declared(FeedFields)


# --- the operations, by operationId ----------------------------------------------------------------------------------

def remember(content: str, fields: Mapping[str, Any]) -> Call[models.RememberResult]:
    body = {"content": content, **checked("remember", fields, REMEMBER_FIELDS)}
    return Call("POST", "/memories", models.RememberResult.from_json, body=body)


def recall(query: str, fields: Mapping[str, Any]) -> Call[models.RecallResult]:
    body = {"query": query, **checked("recall", fields, RECALL_FIELDS)}
    return Call("POST", "/recall", models.RecallResult.from_json, body=body, idempotent=True)  # a read


def feed(cursor: str | None, fields: Mapping[str, Any]) -> Call[models.FeedPage]:
    params = checked("feed", fields, FEED_FIELDS)
    if cursor is not None:
        params["cursor"] = cursor
    return Call("GET", "/memories", models.FeedPage.from_json, params=params, idempotent=True)


def namespaces(prefix: Any, suffix: Any, max_depth: Any, limit: Any, offset: Any) -> Call[tuple[tuple[str, ...], ...]]:
    # prefix and suffix go as repeated query parameters, in order; a label "*" matches any one label.
    params = given(prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset)
    return Call("GET", "/namespaces", lambda data: tuple(tuple(labels) for labels in data["results"]),
                params=params, idempotent=True)


def memory_detail(memory_id: str) -> Call[models.MemoryDetail]:
    return Call("GET", f"/memories/{segment(memory_id)}", models.MemoryDetail.from_json, idempotent=True)


def memory_history(memory_id: str) -> Call[tuple[models.Memory, ...]]:
    return Call("GET", f"/memories/{segment(memory_id)}/history",
                lambda data: tuple(models.Memory.from_json(m) for m in data["chain"]), idempotent=True)


def memory_forget(memory_id: str, reason: Any) -> Call[models.Memory]:
    # A second forget answers 409 not_live: not idempotent in its answer, so never repeated after being sent.
    return Call("POST", f"/memories/{segment(memory_id)}/forget", _inner("memory", models.Memory),
                body=given(reason=reason))


def memory_restore(memory_id: str) -> Call[models.Memory]:
    return Call("POST", f"/memories/{segment(memory_id)}/restore", _inner("memory", models.Memory), body={})


def memory_purge(memory_id: str, reason: str, whole_chain: Any) -> Call[None]:
    return Call("POST", f"/memories/{segment(memory_id)}/purge", _nothing,
                body=given(reason=reason, whole_chain=whole_chain))


def link_create(src: str, dst: str, type: str, reason: Any) -> Call[models.Link]:
    return Call("POST", "/links", _inner("link", models.Link), body=given(src=src, dst=dst, type=type, reason=reason))


def memory_check(memory_id: str, outcome: str, detail: str, corrected_by: Any) -> Call[models.Check]:
    return Call("POST", f"/memories/{segment(memory_id)}/checks", _inner("check", models.Check),
                body=given(outcome=outcome, detail=detail, corrected_by=corrected_by))


def loops(project: Any, state: Any) -> Call[tuple[models.Memory, ...]]:
    return Call("GET", "/loops", _many(models.Memory), params=given(project=project, state=state), idempotent=True)


def source_put(source_id: str, content: str, version: Any, url: Any, kind: Any,
               project: Any) -> Call[models.SourceResult]:
    body = given(source_id=source_id, content=content, version=version, url=url, kind=kind, project=project)
    return Call("POST", "/sources", models.SourceResult.from_json, body=body)


def source_versions(source_id: str) -> Call[tuple[models.Memory, ...]]:
    return Call("GET", f"/sources/{segment(source_id)}/versions", _many(models.Memory), idempotent=True)


def conflicts_list(status: Any) -> Call[tuple[models.Conflict, ...]]:
    return Call("GET", "/conflicts", _many(models.Conflict), params=given(status=status), idempotent=True)


def conflicts_resolve(conflict_id: str, decision: str, winner: Any) -> Call[models.Conflict]:
    return Call("POST", f"/conflicts/{segment(conflict_id)}/resolve", _inner("conflict", models.Conflict),
                body=given(decision=decision, winner=winner))


def stats() -> Call[models.Stats]:
    return Call("GET", "/stats", models.Stats.from_json, idempotent=True)


def me() -> Call[models.Me]:
    return Call("GET", "/me", models.Me.from_json, idempotent=True)


def projects_list() -> Call[tuple[models.Project, ...]]:
    return Call("GET", "/projects", _many(models.Project), idempotent=True)


def projects_create(slug: str, name: Any) -> Call[models.Project]:
    return Call("POST", "/projects", models.Project.from_json, body=given(slug=slug, name=name))


def project_members_add(slug: str, user_id: str) -> Call[models.ProjectMember]:
    return Call("POST", f"/projects/{segment(slug)}/members", models.ProjectMember.from_json,
                body={"user_id": str(user_id)})


def project_members_remove(slug: str, user_id: str) -> Call[None]:
    # A second removal answers 404: not repeated once sent.
    return Call("DELETE", f"/projects/{segment(slug)}/members/{segment(user_id)}", _nothing)


def users_list() -> Call[tuple[models.User, ...]]:
    return Call("GET", "/users", _many(models.User), idempotent=True)


def users_add(email: str, role: Any) -> Call[models.User]:
    return Call("POST", "/users", models.User.from_json, body=given(email=email, role=role))


def tokens_list() -> Call[tuple[models.Token, ...]]:
    return Call("GET", "/tokens", _many(models.Token), idempotent=True)


def tokens_issue(name: str, writer: str, project: Any, user_id: Any) -> Call[models.IssuedToken]:
    return Call("POST", "/tokens", models.IssuedToken.from_json,
                body=given(name=name, writer=writer, project=project,
                           user_id=user_id if user_id is UNSET else str(user_id)))


def tokens_revoke(token_id: str) -> Call[None]:
    # Revocation is idempotent (API.md: a revoked token's DELETE answers 204 again).
    return Call("DELETE", f"/tokens/{segment(token_id)}", _nothing, idempotent=True)


def org_settings_get() -> Call[models.OrgSettings]:
    return Call("GET", "/org/settings", models.OrgSettings.from_json, idempotent=True)


def org_settings_update(require_supersede_reason: bool) -> Call[models.OrgSettings]:
    # Sets a value: sending it twice leaves the same setting.
    return Call("POST", "/org/settings", models.OrgSettings.from_json,
                body={"require_supersede_reason": require_supersede_reason}, idempotent=True)


def result(call: Call[R], response: httpx.Response) -> R:
    return call.parse(response.json() if response.content else None)
