"""Signing in to the web pages: one-time links, passwords, the failure throttle, sign-out, and the headers and cookie
flags of Django's deployment checklist (tenants/sign_in.py, tenants/sign_in_pages.py)."""
import json
import re
from io import StringIO

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from tenants import rls
from tenants.auth import SESSION_ORG_KEY
from tenants.sign_in import sign_in_link
from tests.support.pages import signed_in

GOOD_PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def fresh_sign_in_counters():
    """Failure counters live in Redis for minutes; every test starts from none."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    for key in client.scan_iter("zm:sign-in:*"):
        client.delete(key)


def link_path(tenant, user, *, may_reset: bool = False) -> str:
    with rls.tenant_scope(rls.Scope(org_id=tenant.org.id, user_id=user.id)):
        url = sign_in_link(user.id, tenant.org.id, may_reset=may_reset)
    assert url.startswith(settings.PUBLIC_URL + "/sign-in/")
    return url.removeprefix(settings.PUBLIC_URL)


def set_password_by_link(client, path: str, password: str = GOOD_PASSWORD):
    return client.post(path, {"password1": password, "password2": password})


def test_bootstrap_prints_a_one_time_sign_in_url(db):
    out = StringIO()
    call_command("bootstrap", "--org", "initech", "--admin", "boss@initech.test", stdout=out)
    line = json.loads(out.getvalue())
    assert line["sign_in_url"].startswith(f"{settings.PUBLIC_URL}/sign-in/")
    path = line["sign_in_url"].removeprefix(settings.PUBLIC_URL)
    client = Client()
    page = client.get(path)
    assert page.status_code == 200 and b"Welcome, boss@initech.test" in page.content
    assert b'name="password1"' in page.content
    answer = set_password_by_link(client, path)
    assert answer.status_code == 302 and answer["Location"] == "/"
    assert client.session["_auth_user_id"] == line["user_id"] and client.session[SESSION_ORG_KEY]
    # Spent: the same link neither shows the form nor signs in again.
    again = Client()
    assert again.get(path).status_code == 410
    assert set_password_by_link(again, path).status_code == 410
    assert SESSION_ORG_KEY not in again.session


def test_a_link_signs_in_to_its_organization_with_the_chosen_password(acme):
    client = Client()
    answer = set_password_by_link(client, link_path(acme, acme.member))
    assert answer.status_code == 302
    assert client.session[SESSION_ORG_KEY] == str(acme.org.id)
    # The password now works on the sign-in form.
    other = Client()
    signed_in = other.post("/sign-in", {"org": "acme", "email": "member@acme.test", "password": GOOD_PASSWORD,
                                        "next": "/memories/x"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/memories/x"
    assert other.session[SESSION_ORG_KEY] == str(acme.org.id)


def test_a_weak_password_is_refused_next_to_its_field_and_the_link_stays_valid(acme):
    client, path = Client(), link_path(acme, acme.member)
    weak = set_password_by_link(client, path, "12345678")
    assert weak.status_code == 400
    assert b'class="errorlist"' in weak.content and b"too short" in weak.content
    assert SESSION_ORG_KEY not in client.session
    mismatch = client.post(path, {"password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD + "x"})
    assert mismatch.status_code == 400 and b"The two passwords differ." in mismatch.content
    assert set_password_by_link(client, path).status_code == 302


@pytest.mark.slow
def test_a_user_with_a_password_may_keep_it(acme):
    first = link_path(acme, acme.member)
    assert set_password_by_link(Client(), first).status_code == 302
    second = link_path(acme, acme.member, may_reset=True)  # an operator's link after the first was spent
    client = Client()
    assert b"leave the fields empty" in client.get(second).content
    assert client.post(second, {"password1": "", "password2": ""}).status_code == 302
    assert Client().post("/sign-in", {"org": "acme", "email": "member@acme.test",
                                      "password": GOOD_PASSWORD}).status_code == 302


@pytest.mark.parametrize("spoil", ["tampered", "expired"])
def test_a_bad_link_is_refused(acme, settings, spoil):
    path = link_path(acme, acme.member)
    if spoil == "tampered":
        path = path[:-3] + ("AAA" if not path.endswith("AAA") else "BBB")
    else:
        settings.SIGN_IN_LINK_HOURS = -1
    client = Client()
    assert client.get(path).status_code == 410
    assert set_password_by_link(client, path).status_code == 410
    assert SESSION_ORG_KEY not in client.session


@pytest.mark.slow
def test_wrong_passwords_get_one_answer_and_then_the_throttle(acme, settings):
    set_password_by_link(Client(), link_path(acme, acme.member))
    client = Client()
    wrong = {"org": "acme", "email": "member@acme.test", "password": "not the password"}
    unknown = {"org": "no-such-org", "email": "member@acme.test", "password": GOOD_PASSWORD}
    for attempt in (wrong, unknown):
        answer = client.post("/sign-in", attempt)
        assert answer.status_code == 400
        assert b"do not match an account" in answer.content
    for _ in range(settings.SIGN_IN_FAILURES - 2):
        assert client.post("/sign-in", wrong).status_code == 400
    # Over the limit, even the right password is refused until the window ends.
    right = {**wrong, "password": GOOD_PASSWORD}
    refused = client.post("/sign-in", right)
    assert refused.status_code == 429 and b"Too many failed sign-ins" in refused.content
    assert SESSION_ORG_KEY not in client.session


def test_invalid_sign_in_input_is_shown_next_to_its_field(db):
    answer = Client().post("/sign-in", {"org": "not a slug!", "email": "nope", "password": "x\x00y"})
    assert answer.status_code == 400
    assert answer.content.count(b'class="errorlist"') >= 3


@pytest.mark.slow
def test_next_never_leaves_the_site(acme):
    set_password_by_link(Client(), link_path(acme, acme.member))
    answer = Client().post("/sign-in", {"org": "acme", "email": "member@acme.test", "password": GOOD_PASSWORD,
                                        "next": "https://evil.example/"})
    assert answer.status_code == 302 and answer["Location"] == "/"


def test_sign_out_needs_csrf_and_ends_the_session(acme):
    client = Client(enforce_csrf_checks=True)
    page = client.get(link_path(acme, acme.member))
    token = page.context["csrf_token"]
    client.post(page.wsgi_request.path, {"password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD,
                                         "csrfmiddlewaretoken": token})
    assert SESSION_ORG_KEY in client.session
    forged = client.post("/sign-out")
    assert forged.status_code == 403 and b"CSRF" in forged.content
    assert SESSION_ORG_KEY in client.session
    csrf = client.cookies[settings.CSRF_COOKIE_NAME].value
    assert client.post("/sign-out", {"csrfmiddlewaretoken": csrf}).status_code == 302
    assert SESSION_ORG_KEY not in client.session
    assert client.get("/sign-out").status_code == 405


def test_pages_carry_the_security_headers_and_cookie_flags(acme):
    client = Client()
    page = client.get("/sign-in")
    assert page["X-Frame-Options"] == "DENY"
    assert page["X-Content-Type-Options"] == "nosniff"
    assert page["Referrer-Policy"] == "same-origin"
    assert "default-src 'self'" in page["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"]
    assert client.cookies[settings.CSRF_COOKIE_NAME]["httponly"]
    set_password_by_link(client, link_path(acme, acme.member))
    session_cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    assert session_cookie["httponly"] and session_cookie["samesite"] == "Lax"


def test_the_stylesheet_and_icon_are_served_by_the_app_and_unknown_pages_are_pages(db):
    css = Client().get("/static/zm/zm.css")
    assert css.status_code == 200 and css["Content-Type"].startswith("text/css")
    # Every page names its icon, so that no browser asks for a /favicon.ico that is not there.
    assert '<link rel="icon" href="/static/zm/favicon.svg"' in Client().get("/sign-in").content.decode()
    icon = Client().get("/static/zm/favicon.svg")
    assert icon.status_code == 200 and icon["Content-Type"].startswith("image/svg+xml")
    missing = Client().get("/no/such/page")
    assert missing.status_code == 404 and missing["Content-Type"].startswith("text/html")
    api_missing = Client().get("/api/v1/no-such-thing")
    assert api_missing.status_code == 404 and api_missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("path", ["/org/tokens/tok_0/revoke", "/conflicts/cfl_0/resolve", "/sign-out"])
def test_opening_a_forms_target_shows_the_error_page_not_an_empty_405(acme, path):
    answer = signed_in(acme, acme.admin).get(path)
    assert (answer.status_code, answer["Allow"]) == (405, "POST")
    html = answer.content.decode()
    assert html.count("<h1>") == 1 and "use the button" in html and 'href="/"' in html


def test_a_form_sent_after_the_session_ended_signs_in_back_to_the_page_it_was_on(acme):
    host = settings.ALLOWED_HOSTS[0] if settings.ALLOWED_HOSTS[0] != "*" else "testserver"
    answer = Client().post("/org/tokens/tok_0/revoke", HTTP_HOST=host, HTTP_REFERER=f"http://{host}/org/tokens?x=1")
    assert (answer.status_code, answer["Location"]) == (302, "/sign-in?next=/org/tokens%3Fx%3D1")
    # A referer from elsewhere is not followed: the start page.
    elsewhere = Client().post("/org/tokens/tok_0/revoke", HTTP_HOST=host, HTTP_REFERER="https://evil.test/org/tokens")
    assert elsewhere["Location"] == "/sign-in?next=/"


@pytest.mark.slow
def test_an_admin_of_another_organization_cannot_take_over_an_account(acme, globex):
    """One password serves every organization of a person: globex's admin adds acme's member and gets a sign-in
    link for them, which must not set a new password (it would open acme too). Only an operator's link resets."""
    set_password_by_link(Client(), link_path(acme, acme.member))
    admin = signed_in(globex, globex.admin)
    added = admin.post("/org/users", {"email": "member@acme.test", "role": "member"})
    assert added.status_code == 200, added.content
    link = re.search(r"/sign-in/[\w:.-]+", added.content.decode()).group(0)
    taken = set_password_by_link(Client(), link, password="Pwned-By-Globex-2026!")
    assert taken.status_code == 409 and b"You already have a password" in taken.content
    assert Client().post("/sign-in", {"org": "acme", "email": "member@acme.test",
                                      "password": "Pwned-By-Globex-2026!"}).status_code != 302
    assert Client().post("/sign-in", {"org": "acme", "email": "member@acme.test",
                                      "password": GOOD_PASSWORD}).status_code == 302
    # An operator's link (manage.py sign_in_link) still resets a forgotten password.
    reset = set_password_by_link(Client(), link_path(acme, acme.member, may_reset=True), "Another-Good-One-2026")
    assert reset.status_code == 302
