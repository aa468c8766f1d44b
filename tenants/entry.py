"""How every call enters the tenant world, in one order: REST (tenants/views.py), the web pages (tenants/pages.py),
MCP tool calls (mcp_server/) and the in-process benches all come through ``enter``.

1. The rate limit counts the call against its caller: after authentication (a bad token counts against nobody),
   before any work.
2. The entry point's own check of what it was sent (a path and query, an MCP call's arguments).
3. ``prepare``: slow work outside any transaction, such as embedding.
4. One transaction as the caller (tenants/rls.py), in which the caller is loaded again: its membership or token may
   have changed since it authenticated.

The handler runs inside. An exception rolls the transaction back; so does an answer of 400 or more that a handler
returns instead of raising (``roll_back_on_error``), so an error never leaves half a write behind.
"""
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from plumbing.timing import StepTimer
from telemetry import context
from tenants import rls
from tenants.auth import Identity, Principal, principal_for
from tenants.ratelimit import rate_limit_check


@dataclass(frozen=True)
class Entered:
    principal: Principal
    prepared: Any  # what ``prepare`` returned, None without one


@contextmanager
def enter(identity: Identity, steps: StepTimer | None = None, *, check: Callable[[], None] | None = None,
          prepare: Callable[[], Any] | None = None) -> Iterator[Entered]:
    steps = steps or StepTimer()
    context.note_caller(org_id=identity.scope.org_id, token_id=identity.token_id)
    rate_limit_check(identity)
    steps.lap("rate_limit")
    if check is not None:
        check()
    prepared = prepare() if prepare is not None else None
    steps.lap("prepare")
    with rls.tenant_scope(identity.scope):
        principal = principal_for(identity)
        steps.lap("identity")
        yield Entered(principal, prepared)


def roll_back_on_error(status: int) -> None:
    """Inside ``enter``: an answer of 400 or more keeps nothing the handler wrote."""
    if status >= 400:
        transaction.set_rollback(True)
