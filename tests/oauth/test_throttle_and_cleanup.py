"""The token, revocation and authorization endpoints limited per client address as
registration is, and what expires or is never used removed by `manage.py oauth_cleanup`."""
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant

from tests.support.oauth import register
from tests.support.tenants import build_tenant


def an_address() -> str:
    """Each test its own address: the windows are counted in the real Redis and outlive a test."""
    return f"198.51.100.{uuid.uuid4().int % 250 + 1}"


@pytest.mark.parametrize("path", ["/oauth/token", "/oauth/revoke"])
def test_the_token_and_revocation_endpoints_are_limited_per_address(db, settings, path):
    settings.OAUTH_REQUESTS_PER_WINDOW, settings.OAUTH_REQUEST_WINDOW_SECONDS = 3, 60
    address, body = an_address(), {"grant_type": "authorization_code", "code": "nope", "token": "nope"}
    answers = [Client(REMOTE_ADDR=address).post(path, body) for _ in range(4)]
    assert [a.status_code for a in answers[:3]] != [429] * 3 and answers[3].status_code == 429
    assert answers[3].json()["error"] == "rate_limited" and 1 <= int(answers[3]["Retry-After"]) <= 60
    assert answers[3]["Cache-Control"] == "no-store"
    assert Client(REMOTE_ADDR=an_address()).post(path, body).status_code != 429  # another address is not held back


def test_the_authorization_page_is_limited_per_address(db, settings):
    settings.OAUTH_REQUESTS_PER_WINDOW = 2
    address = an_address()
    answers = [Client(REMOTE_ADDR=address).get("/oauth/authorize?client_id=x") for _ in range(3)]
    assert [a.status_code for a in answers[:2]] == [302, 302]  # to the sign-in page
    assert answers[2].status_code == 429 and "Too many sign-in requests" in answers[2].content.decode()
    assert answers[2]["Retry-After"]


def test_no_limit_when_it_is_zero(db, settings):
    settings.OAUTH_REQUESTS_PER_WINDOW = 0
    address = an_address()
    assert {Client(REMOTE_ADDR=address).post("/oauth/token", {}).status_code for _ in range(5)} == {400}


def test_cleanup_removes_what_expired_and_clients_never_used(db, settings, capsys):
    settings.OAUTH_UNUSED_CLIENT_DAYS = 7
    person = build_tenant("acme").admin
    ids = [register(Client(), address=an_address())[1]["client_id"] for _ in range(3)]
    unused, used, recent = (Application.objects.get(client_id=i) for i in ids)
    old = timezone.now() - timedelta(days=8)
    Application.objects.filter(pk__in=[unused.pk, used.pk]).update(created=old)
    AccessToken.objects.create(application=used, token="live-token", expires=timezone.now() + timedelta(hours=1),
                               scope="memory:read")
    AccessToken.objects.create(application=used, token="expired-token", scope="memory:read",
                               expires=timezone.now() - timedelta(hours=1))
    Grant.objects.create(application=used, user=person, code="old-code", expires=timezone.now() - timedelta(minutes=5),
                         redirect_uri="http://127.0.0.1:8765/cb", scope="memory:read",
                         code_challenge="x" * 43, code_challenge_method="S256")
    call_command("oauth_cleanup")
    assert set(Application.objects.values_list("client_id", flat=True)) == {used.client_id, recent.client_id}
    assert list(AccessToken.objects.values_list("token", flat=True)) == ["live-token"]
    assert not Grant.objects.exists()
    assert "removed 1 expired codes, 1 access tokens, 0 refresh tokens and 1 unused clients" in capsys.readouterr().out
