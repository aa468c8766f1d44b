"""Per-token rate limits (tenants/ratelimit.py) against the real Redis: 429 with Retry-After, per token, windows
that reset, failing open when Redis is gone, and documented on every operation."""
import logging
import time

import pytest

from tests.support.openapi import concrete, documented, operations


@pytest.fixture
def limit(settings):
    """Set the limit (and optionally the window) for this test; every test's tokens are new, so counts start at 0."""

    def set_limit(requests: int, window: int = 60) -> None:
        settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = requests, window

    return set_limit


def test_over_the_limit_is_429_with_retry_after_and_nothing_is_done(api, acme, limit, visible_count):
    limit(3)
    member = api(acme.member_token)
    assert [member.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 200]
    response = member.post("/api/v1/memories", {"content": "over the limit", "project": "web"}, format="json")
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["details"]["limit"] == 3 and error["details"]["window_seconds"] == 60
    assert 1 <= int(response["Retry-After"]) <= 60
    assert int(response["Retry-After"]) == error["details"]["retry_after"]
    assert visible_count(acme.admin_token) == 0  # the refused write stored nothing (another token looks)


def test_another_token_is_unaffected(api, acme, globex, limit):
    limit(2)
    for _ in range(3):
        api(acme.member_token).get("/api/v1/me")
    assert api(acme.member_token).get("/api/v1/me").status_code == 429
    assert api(acme.admin_token).get("/api/v1/me").status_code == 200  # same org, another token
    assert api(globex.member_token).get("/api/v1/me").status_code == 200


def test_bad_tokens_are_not_counted(api, acme, limit):
    limit(2)
    assert {api("no-such-token").get("/api/v1/me").status_code for _ in range(4)} == {401}
    assert api(acme.member_token).get("/api/v1/me").status_code == 200


@pytest.mark.slow
def test_the_window_resets(api, acme, limit):
    limit(2, window=2)
    member = api(acme.member_token)
    assert [member.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 429]
    retry_after = int(member.get("/api/v1/me")["Retry-After"])
    assert 1 <= retry_after <= 2
    time.sleep(retry_after)
    assert [member.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 429]


def test_every_operation_answers_429_over_the_limit(api, acme, limit, api_calls):
    """The limit is checked right after authentication, before validation or lookups: every documented operation
    answers 429 once its token is over, and the test client checks each answer against the document."""
    limit(1)
    admin = api(acme.admin_token)
    assert admin.get("/api/v1/me").status_code == 200
    for method, path, _ in operations():
        response = getattr(admin, method.lower())(concrete(path), {}, format="json")
        assert response.status_code == 429, (method, path, response.content)
    assert {operation_id for operation_id, status in documented(range(429, 430))} == {
        operation["operationId"] for _, _, operation in operations()
    }
    assert documented(range(429, 430)) - set(api_calls) == set()


def test_without_redis_the_limiter_fails_open(api, acme, limit, settings, caplog):
    limit(1)
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    member = api(acme.member_token)
    with caplog.at_level(logging.WARNING, logger="tenants.ratelimit"):
        statuses = [member.get("/api/v1/me").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    warnings = [record for record in caplog.records if record.name == "tenants.ratelimit"]
    assert len(warnings) == 1 and "Redis unavailable" in warnings[0].getMessage()  # once per outage, not per request


def test_zero_disables_the_limit(api, acme, limit):
    limit(0)
    member = api(acme.member_token)
    assert {member.get("/api/v1/me").status_code for _ in range(5)} == {200}
