"""A deadlock or serialization failure is counted by route and kind (zm_db_lock_failures) and answered like any
passing database trouble (503 database_unavailable): made for real here, two connections taking two rows in
opposite orders, and handed to the server's error handling as Django hands it over."""
import threading

import psycopg
import pytest
from django.db import connections
from django.db.utils import DatabaseErrorWrapper, OperationalError
from django.test import RequestFactory
from django.urls import resolve

from plumbing.errors import database_unavailable
from telemetry import lock_failures, metrics
from tests.support.stack import database_url



@pytest.fixture
def probe(committed):
    """Two rows in a table of their own, dropped after."""
    url = database_url("owner")
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE lock_probe (id int PRIMARY KEY)")
        setup.execute("INSERT INTO lock_probe VALUES (1), (2)")
    yield url
    with psycopg.connect(url, autocommit=True) as cleanup:
        cleanup.execute("DROP TABLE lock_probe")


def real_deadlock(url: str) -> psycopg.Error:
    both_hold_one, errors = threading.Barrier(2), []

    def take(first: int, second: int) -> None:
        with psycopg.connect(url) as connection:
            try:
                connection.execute("SELECT 1 FROM lock_probe WHERE id = %s FOR UPDATE", [first])
                both_hold_one.wait()
                connection.execute("SELECT 1 FROM lock_probe WHERE id = %s FOR UPDATE", [second])
            except psycopg.Error as error:
                errors.append(error)

    threads = [threading.Thread(target=take, args=pair) for pair in ((1, 2), (2, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (error,) = errors  # Postgres breaks the cycle by failing one of the two
    return error


def as_django_raises(error: psycopg.Error) -> OperationalError:
    try:
        with DatabaseErrorWrapper(connections["default"]):
            raise error
    except OperationalError as wrapped:
        return wrapped


def counted(route: str, kind: str) -> float:
    return metrics.db_lock_failures.labels(route, kind)._value.get()


def test_a_real_deadlock_answers_503_and_is_counted_by_route(probe):
    error = real_deadlock(probe)
    assert isinstance(error, psycopg.errors.DeadlockDetected)
    request = RequestFactory().post("/api/v1/memories")
    request.resolver_match = resolve("/api/v1/memories")
    route = request.resolver_match.route
    before = counted(route, "deadlock")
    response = database_unavailable(as_django_raises(error), request)
    assert response.status_code == 503 and response["Retry-After"] == "1"
    assert counted(route, "deadlock") == before + 1


def test_only_deadlocks_and_serialization_failures_are_counted(committed):
    assert lock_failures.kind_of(as_django_raises(psycopg.errors.SerializationFailure("x"))) == "serialization"
    assert lock_failures.kind_of(as_django_raises(psycopg.OperationalError("connection refused"))) is None
    before = counted("unknown", "deadlock")
    database_unavailable(as_django_raises(psycopg.OperationalError("connection refused")))
    assert counted("unknown", "deadlock") == before
