"""The memory pages (memory/pages/): the feed, a memory's page, open loops and sources, through Django's test client
against the real stack. Each page shows what the API shows the same person, nothing more; each action goes through
the API's services and a refused one changes nothing."""
import re
from html import unescape
from urllib.parse import quote

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tenants import rls
from tenants.auth import SESSION_ORG_KEY


def signed_in(tenant, user) -> Client:
    client = Client()
    with rls.tenant_scope(rls.Scope(org_id=tenant.org.id, user_id=user.id)):
        client.force_login(user)
    session = client.session
    session[SESSION_ORG_KEY] = str(tenant.org.id)
    session.save()
    return client


@pytest.fixture
def admin_page(acme) -> Client:
    return signed_in(acme, acme.admin)


@pytest.fixture
def member_page(acme) -> Client:
    return signed_in(acme, acme.member)


def html(response) -> str:
    return unescape(response.content.decode())


def card_ids(response) -> list[str]:
    """The memory ids of the feed's cards, in order."""
    return re.findall(r'<a class="content" href="/memories/(mem_\w+)"', response.content.decode())


def one_h1(response) -> str:
    found = re.findall(r"<h1>(.*?)</h1>", response.content.decode(), re.S)
    assert len(found) == 1, found
    return unescape(found[0])


# --- The feed ---------------------------------------------------------------------------------------------------


def test_the_feed_shows_the_newest_live_memories_first(acme, remember, admin_page, member_page):
    old = remember(acme.admin_token, "The deploy window is Monday 10:00.", kind="fact", project="web")["memory"]
    new = remember(acme.member_token, "Use pnpm, not npm, in the web repo.", kind="preference")["memory"]
    for client in (admin_page, member_page):
        page = client.get("/")
        assert page.status_code == 200 and one_h1(page) == "Memories"
        ids = card_ids(page)
        assert ids.index(new["id"]) < ids.index(old["id"])
        body = html(page)
        assert 'type="search" name="q"' in body and '<label for="id_q">Search' in body
        assert '<span class="badge open_loop">' not in body
