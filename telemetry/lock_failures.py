"""Deadlocks and serialization failures that Postgres reported, counted where they surfaced (a route, a job): each
is a lock-order defect, not a passing outage, although a client that retries a 503 gets through (docs/API.md,
"Under contention"). The alert ZeroMemoryLockFailures fires on the first one."""
from psycopg import errors

from telemetry import metrics

KINDS = ((errors.DeadlockDetected, "deadlock"), (errors.SerializationFailure, "serialization"))


def kind_of(exception: BaseException | None) -> str | None:
    """deadlock, serialization or None, looking through the chain of causes (Django wraps psycopg's errors)."""
    seen = set()
    while exception is not None and id(exception) not in seen:
        seen.add(id(exception))
        for error, kind in KINDS:
            if isinstance(exception, error):
                return kind
        exception = exception.__cause__ or exception.__context__
    return None


def count(exception: BaseException, where: str) -> str | None:
    kind = kind_of(exception)
    if kind:
        metrics.db_lock_failures.labels(where, kind).inc()
    return kind
