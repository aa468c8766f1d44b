"""The synchronous client, over one `httpx.Client` (connection reuse: one TCP connection for many calls)."""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import httpx

from . import _core as ops
from . import models
from ._core import UNSET, Call, R, RetryPolicy
from .errors import error_from_response, error_from_transport

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .params import FeedFields, RecallFields, RememberFields


class ZeroMemory:
    """A zero-memory server, as one token sees it.

    >>> with ZeroMemory("http://127.0.0.1:8000", token) as zm:
    ...     zm.remember("Deploys go out on Monday.", kind="fact", project="web")
    ...     zm.recall("when do deploys go out?").results[0].memory.content

    `timeout` (seconds, or an `httpx.Timeout`) applies to each attempt; `retries`, `backoff`, `max_backoff` and
    `max_retry_after` make the `RetryPolicy` (see there for what is retried); `transport` is handed to httpx (a
    `MockTransport` in tests, a custom one for proxies or mTLS). A non-2xx answer raises a `ZeroMemoryError`
    subclass; no answer raises `ConnectionFailed`.
    """

    def __init__(self, base_url: str, token: str, *, timeout: float | httpx.Timeout = 10.0, retries: int = 3,
                 backoff: float = 0.5, max_backoff: float = 8.0, max_retry_after: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.retry_policy = RetryPolicy(retries=retries, backoff=backoff, max_backoff=max_backoff,
                                        max_retry_after=max_retry_after)
        self._http = httpx.Client(base_url=ops.base_url(base_url), headers=ops.headers(token), timeout=timeout,
                                  transport=transport)

    # --- plumbing ------------------------------------------------------------------------------------------------

    def __enter__(self) -> ZeroMemory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def send(self, call: Call[R]) -> R:
        """Send one Call, retrying as `retry_policy` allows; the parsed answer or the error."""
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, ops.API_PREFIX + call.path, params=call.params,
                                              json=call.body)
            except httpx.TransportError as exc:
                wait = self.retry_policy.after_transport_error(call, exc, attempt)
                if wait is None:
                    raise error_from_transport(exc) from exc
            else:
                if response.is_success:
                    return ops.result(call, response)
                error = error_from_response(response)
                wait = self.retry_policy.after_response(call, error, attempt)
                if wait is None:
                    raise error
            self._sleep(wait)
            attempt += 1

    # --- memories ------------------------------------------------------------------------------------------------

    def remember(self, content: str, **fields: Unpack[RememberFields]) -> models.RememberResult:
        """Store a memory (`201`) or have it absorbed by dedup (`200`, `created` False). Declare what it replaces
        with `links=[{"type": "supersedes", "dst": old_id, "reason": ...}]`."""
        return self.send(ops.remember(content, fields))

    def recall(self, query: str, **fields: Unpack[RecallFields]) -> models.RecallResult:
        """The memories that answer `query`, ranked; iterate over the result for the hits."""
        return self.send(ops.recall(query, fields))

    def feed(self, *, cursor: str | None = None, **fields: Unpack[FeedFields]) -> models.FeedPage:
        """One page of the feed, newest first; pass `next_cursor` back as `cursor` for the next (or use iter_feed)."""
        return self.send(ops.feed(cursor, fields))

    def iter_feed(self, **fields: Unpack[FeedFields]) -> Iterator[models.Memory]:
        """Every memory of the feed, page after page until `next_cursor` is null (keyset pages: stable while new
        memories arrive)."""
        cursor: str | None = None
        while True:
            page = self.feed(cursor=cursor, **fields)
            yield from page.results
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def namespaces(self, *, prefix: Sequence[str] = UNSET, suffix: Sequence[str] = UNSET, max_depth: int = UNSET,
                   limit: int = UNSET, offset: int = UNSET) -> tuple[tuple[str, ...], ...]:
        """The distinct namespaces of the live memories this token sees, ascending; a label "*" in `prefix` or
        `suffix` matches any one label; `max_depth` truncates each before deduplication; `limit` 1..1000 (default
        100)."""
        return self.send(ops.namespaces(prefix, suffix, max_depth, limit, offset))

    def memory_detail(self, memory_id: str) -> models.MemoryDetail:
        return self.send(ops.memory_detail(memory_id))

    def memory_history(self, memory_id: str) -> tuple[models.Memory, ...]:
        """The version chain through supersedes links, oldest first."""
        return self.send(ops.memory_history(memory_id))

    def memory_forget(self, memory_id: str, *, reason: str | None = UNSET) -> models.Memory:
        return self.send(ops.memory_forget(memory_id, reason))

    def memory_restore(self, memory_id: str) -> models.Memory:
        return self.send(ops.memory_restore(memory_id))

    def memory_purge(self, memory_id: str, reason: str, *, whole_chain: bool = UNSET) -> None:
        """The one deletion (org admins): the memory, or with `whole_chain` every version, is gone for good."""
        self.send(ops.memory_purge(memory_id, reason, whole_chain))

    def link_create(self, src: str, dst: str, type: str, *, reason: str | None = UNSET) -> models.Link:
        """A graph edge; even `type="supersedes"` retires nothing here (declare it in remember to retire)."""
        return self.send(ops.link_create(src, dst, type, reason))

    def memory_check(self, memory_id: str, outcome: str, detail: str, *,
                     corrected_by: str | None = UNSET) -> models.Check:
        return self.send(ops.memory_check(memory_id, outcome, detail, corrected_by))

    def loops(self, *, project: str = UNSET, state: str = UNSET) -> tuple[models.Memory, ...]:
        return self.send(ops.loops(project, state))

    def source_put(self, source_id: str, content: str, *, version: str | None = UNSET, url: str | None = UNSET,
                   kind: str = UNSET, project: str | None = UNSET) -> models.SourceResult:
        return self.send(ops.source_put(source_id, content, version, url, kind, project))

    def source_versions(self, source_id: str) -> tuple[models.Memory, ...]:
        return self.send(ops.source_versions(source_id))

    def conflicts_list(self, *, status: str = UNSET) -> tuple[models.Conflict, ...]:
        return self.send(ops.conflicts_list(status))

    def conflicts_resolve(self, conflict_id: str, decision: str, *, winner: str | None = UNSET) -> models.Conflict:
        return self.send(ops.conflicts_resolve(conflict_id, decision, winner))

    def stats(self) -> models.Stats:
        return self.send(ops.stats())

    # --- tenancy -------------------------------------------------------------------------------------------------

    def me(self) -> models.Me:
        return self.send(ops.me())

    def projects_list(self) -> tuple[models.Project, ...]:
        return self.send(ops.projects_list())

    def projects_create(self, slug: str, *, name: str = UNSET) -> models.Project:
        return self.send(ops.projects_create(slug, name))

    def project_members_add(self, slug: str, user_id: str) -> models.ProjectMember:
        return self.send(ops.project_members_add(slug, user_id))

    def project_members_remove(self, slug: str, user_id: str) -> None:
        self.send(ops.project_members_remove(slug, user_id))

    def users_list(self) -> tuple[models.User, ...]:
        return self.send(ops.users_list())

    def users_add(self, email: str, *, role: str = UNSET) -> models.User:
        return self.send(ops.users_add(email, role))

    def tokens_list(self) -> tuple[models.Token, ...]:
        return self.send(ops.tokens_list())

    def tokens_issue(self, name: str, writer: str, *, project: str | None = UNSET,
                     user_id: str = UNSET) -> models.IssuedToken:
        """A new token; its secret (`.token`) is shown this once."""
        return self.send(ops.tokens_issue(name, writer, project, user_id))

    def tokens_revoke(self, token_id: str) -> None:
        self.send(ops.tokens_revoke(token_id))

    def org_settings_get(self) -> models.OrgSettings:
        return self.send(ops.org_settings_get())

    def org_settings_update(self, *, require_supersede_reason: bool) -> models.OrgSettings:
        return self.send(ops.org_settings_update(require_supersede_reason))
