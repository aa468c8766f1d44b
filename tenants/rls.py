"""The one place that tells Postgres who is asking.

Row-level security policies read ``app.org_id`` and ``app.user_id``. They are always set transaction-locally
(``set_config(..., true)``), so an identity ends with its transaction and can never leak into the next request
that reuses a pooled or persistent connection. HTTP requests, RQ jobs, management commands and tests all go
through ``activate`` (directly or via ``tenant_scope`` / ``tenant_job``).
"""
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from functools import wraps
from uuid import UUID

from django.db import connection, transaction


@dataclass(frozen=True)
class Scope:
    org_id: UUID
    user_id: UUID | None = None


class TenantScopeMissing(RuntimeError):
    """Tenant data was touched with no identity set: a bug, caught before Postgres returns zero rows."""


# The database alias for cross-tenant maintenance (the owner role, BYPASSRLS). Code that uses it is named unsafe_*.
UNSAFE_ALL_TENANTS = "owner"

_scope: ContextVar[Scope | None] = ContextVar("tenant_scope", default=None)


def _set_identity(scope: Scope | None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('app.org_id', %s, true), set_config('app.user_id', %s, true)",
            [str(scope.org_id) if scope else "", str(scope.user_id or "") if scope else ""],
        )


def activate(scope: Scope) -> Token:
    if not connection.in_atomic_block:
        raise RuntimeError("RLS identity needs an open transaction: it is set transaction-locally.")
    _set_identity(scope)
    return _scope.set(scope)


def deactivate(token: Token, *, restore_database: bool = True) -> None:
    """Return to the identity that was active before (none at the top level).

    At the end of a transaction Postgres drops the settings anyway; restoring them here also covers a scope
    nested in a longer transaction (a savepoint), so an inner identity never outlives its block. After an error
    there is nothing to restore: the rollback to the savepoint or of the transaction undoes the settings too.
    """
    _scope.reset(token)
    if restore_database and connection.in_atomic_block and not connection.needs_rollback:
        _set_identity(_scope.get())


def current_scope() -> Scope | None:
    return _scope.get()


def require_scope() -> Scope:
    scope = _scope.get()
    if scope is None:
        raise TenantScopeMissing("No tenant scope is active.")
    return scope


@contextmanager
def tenant_scope(scope: Scope) -> Iterator[None]:
    """Run a block in its own transaction as ``scope``: for jobs, commands, the shell and tests."""
    with transaction.atomic(durable=True):
        token = activate(scope)
        try:
            yield
        except BaseException:
            deactivate(token, restore_database=False)
            raise
        deactivate(token)


def tenant_job(func: Callable) -> Callable:
    """Decorate an RQ job that takes ``org_id`` and ``user_id`` keywords: it runs under that identity."""

    @wraps(func)
    def run(*args, org_id: str, user_id: str | None = None, **kwargs):
        scope = Scope(org_id=UUID(str(org_id)), user_id=UUID(str(user_id)) if user_id else None)
        with tenant_scope(scope):
            return func(*args, **kwargs)

    return run
