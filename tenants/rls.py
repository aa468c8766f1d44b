"""The one place that tells Postgres who is asking, and the one rule for transactions.

Row-level security policies read ``app.org_id`` and ``app.user_id``. They are always set transaction-locally
(``set_config(..., true)``), so an identity ends with its transaction and can never reach the next request that
reuses a pooled connection.

The rule, for every way in (HTTP, RQ jobs, management commands, tests):

1. The entry point opens the transaction and sets the identity, once, with ``tenant_scope``: ``TenantAPIView``
   around each request, the review job around each of its two steps, a command or a test around its work. Services
   and selectors never open a scope: they run inside the caller's, so they compose (remember calls supersede, a
   review calls supersede) without nested or durable-transaction tricks.
2. Slow work that must not hold a transaction open, embedding text and calling the judge, happens before the scope
   is entered (a view's ``prepare_<method>``) or between two scopes (the review job).
3. A service that changes a memory's lifecycle says so in its signature: it takes ``Locked`` memories, which only
   ``memory.lifecycle.lock_memories`` hands out (``FOR UPDATE``, in id order).

Fail closed: tenant-owned managers raise ``TenantScopeMissing`` when no scope is active, instead of letting RLS
quietly return nothing.
"""
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from uuid import UUID

from django.conf import settings
from django.db import connection, models, transaction


@dataclass(frozen=True)
class Scope:
    org_id: UUID
    user_id: UUID | None = None


class TenantScopeMissing(RuntimeError):
    """Tenant data was touched with no identity set: a bug, caught before Postgres returns zero rows."""


# The database alias for cross-tenant maintenance (the owner role, BYPASSRLS). Code that uses it is named unsafe_*.
UNSAFE_ALL_TENANTS = "owner"

_scope: ContextVar[Scope | None] = ContextVar("tenant_scope", default=None)


def current_scope() -> Scope | None:
    return _scope.get()


def require_scope() -> Scope:
    scope = _scope.get()
    if scope is None:
        raise TenantScopeMissing("Tenant data needs an identity: enter rls.tenant_scope() at the entry point.")
    return scope


@contextmanager
def tenant_scope(scope: Scope) -> Iterator[None]:
    """One transaction as ``scope``. Durable: an identity cannot be swapped inside someone else's transaction."""
    with transaction.atomic(durable=True):
        _set_identity(str(scope.org_id), str(scope.user_id or ""), f"{settings.STATEMENT_TIMEOUT_MS}ms")
        token = _scope.set(scope)
        try:
            yield
        finally:
            # Postgres forgets the settings when the transaction ends; the ContextVar must forget with it.
            _scope.reset(token)
    if connection.in_atomic_block:
        # Only a test's own transaction can enclose a durable block (Django lets it); the settings would outlive
        # the scope there, so clear them. (After an error the rollback to the savepoint has undone them already.)
        _set_identity("", "", None)


def _set_identity(org_id: str, user_id: str, statement_timeout: str | None) -> None:
    """The identity, and a statement timeout so that no query holds a pooled connection for ever: one round trip.

    ``None`` puts the timeout back to the session's own value (clearing a scope inside a test's transaction).
    """
    timeout = "%s" if statement_timeout else "(SELECT reset_val FROM pg_settings WHERE name = 'statement_timeout')"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('app.org_id', %s, true), set_config('app.user_id', %s, true),"
            f" set_config('statement_timeout', {timeout}, true)",
            [org_id, user_id, *([statement_timeout] if statement_timeout else [])],
        )


def tenant_job(func: Callable) -> Callable:
    """An RQ job that takes ``org_id`` and ``user_id`` keywords and runs in one scope as that identity."""

    @wraps(func)
    def run(*args, org_id: str, user_id: str | None = None, **kwargs):
        with tenant_scope(Scope(org_id=UUID(str(org_id)), user_id=UUID(str(user_id)) if user_id else None)):
            return func(*args, **kwargs)

    return run


class TenantManager(models.Manager):
    """The default manager of every tenant-owned model: no identity, no query (rule above, 'fail closed')."""

    def get_queryset(self) -> models.QuerySet:
        require_scope()
        return super().get_queryset()


class OrgPartitionedManager(TenantManager):
    """For a table partitioned by organization (memory_memory): every query names the scope's organization.

    RLS implies it, but the policy's zm_current_org() is only known when the query runs, so Postgres would plan every
    partition for each query; a parameter lets it plan the tenant's partition only.
    """

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(org_id=require_scope().org_id)
