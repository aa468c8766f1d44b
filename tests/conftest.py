"""Test set-up: a real Postgres (migrated as the owner role, used as the app role) and real Redis."""
import pytest
from django.db import connections

from tests.support.openapi import ValidatingClient
from tests.support.tenants import Tenant, build_tenant, truncate_all_tables


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker):
    """Create and migrate the test database as the owner, then run every test as the app role.

    The app role is what production uses: no superuser, no BYPASSRLS, owns nothing, so RLS really runs.
    """
    owner, default = connections["owner"], connections["default"]
    with django_db_blocker.unblock():
        old_name = owner.settings_dict["NAME"]
        test_name = owner.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        default.close()
        default.close_pool()  # a pool opened before this point would still hand out connections to the old name
        default.creation.set_as_test_mirror(owner.settings_dict)
        owner.close()
    yield test_name
    with django_db_blocker.unblock():
        for alias in connections:
            connections[alias].close()
        default.close_pool()  # pooled connections to the test database would keep it from being dropped
        owner.creation.destroy_test_db(old_name, verbosity=0)


@pytest.fixture
def acme(db) -> Tenant:
    return build_tenant("acme")


@pytest.fixture
def globex(db) -> Tenant:
    return build_tenant("globex")


@pytest.fixture
def api_calls() -> list[tuple[str, int]]:
    """(operationId, status) of every documented request the test sent through `api` or `client`."""
    return []


@pytest.fixture
def api(api_calls):
    """A test client per token; every response it gets is checked against the OpenAPI document (tests/support/openapi.py)."""

    def client(token: str | None = None) -> ValidatingClient:
        api_client = ValidatingClient(calls=api_calls)
        if token:
            api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return api_client

    return client


@pytest.fixture
def client(api_calls) -> ValidatingClient:
    """pytest-django's `client`, checked against the OpenAPI document like `api`."""
    return ValidatingClient(calls=api_calls)


@pytest.fixture
def committed(django_db_setup, django_db_blocker):
    """Real transactions that commit, for what a test-wide transaction would hide (connection reuse, races).

    Every table is emptied afterwards.
    """
    with django_db_blocker.unblock():
        try:
            yield
        finally:
            for alias in connections:
                connections[alias].close()
            truncate_all_tables()


@pytest.fixture
def remember(api):
    """POST /api/v1/memories and check the status; returns the response body."""

    def call(token: str, content: str, expect: int = 201, **body) -> dict:
        response = api(token).post("/api/v1/memories", {"content": content, **body}, format="json")
        assert response.status_code == expect, response.content
        return response.json()

    return call


@pytest.fixture
def recall(api):
    """POST /api/v1/recall and check the status; returns the response body."""

    def call(token: str, query: str, expect: int = 200, **body) -> dict:
        response = api(token).post("/api/v1/recall", {"query": query, **body}, format="json")
        assert response.status_code == expect, response.content
        return response.json()

    return call


@pytest.fixture
def visible_count(api):
    """How many memories a token sees in the feed, for "nothing was stored" checks."""

    def count(token: str, lifecycle: str = "all") -> int:
        return len(api(token).get(f"/api/v1/memories?lifecycle={lifecycle}&limit=200").json()["results"])

    return count


@pytest.fixture(autouse=True)
def _no_oauth_endpoint_limit(settings):
    """The in-process OAuth flows all come from one address, many a second: the tests of the limit set it again
    (tests/oauth/test_throttle_and_cleanup.py)."""
    settings.OAUTH_REQUESTS_PER_WINDOW = 0
