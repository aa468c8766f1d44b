"""Supersedes that could loop a chain or hide a fact, the statement timeout, and a restore that must undo what the
restorer cannot see (issue 11, defects 1, 5 and 6)."""
import time

import pytest
from django.db import OperationalError, connection
from django.utils import timezone
from psycopg.errors import QueryCanceled

from hygiene import services as hygiene
from hygiene.judge import Verdict, get_judge
from hygiene.models import Conflict
from memory import selectors
from memory.models import Link, Memory
from tenants import rls
from tenants.auth import load_principal
from tests.memory.test_remember import supersedes


def post(api, token, path, body=None):
    return api(token).post(path, body or {}, format="json")


def error_of(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def member_scope(acme) -> rls.Scope:
    return rls.Scope(org_id=acme.org.id, user_id=acme.member.id)


def test_chain_walks_survive_a_cycle_in_the_store(remember, api, acme, settings):
    settings.STATEMENT_TIMEOUT_MS = 2000  # a walk that loops fails in 2 s instead of 5
    m1 = remember(acme.member_token, "The release train leaves on Wednesdays.")["memory"]["id"]
    m2 = remember(acme.member_token, "The release train leaves on Thursdays.", links=supersedes(m1))["memory"]["id"]
    # What defect 1 let a check write: m1 and m2 each other's successor, neither live. Written here directly.
    with rls.tenant_scope(acme.scope):
        Memory.objects.filter(pk=m2).update(status="superseded", superseded_by_id=m1, invalidated_at=timezone.now())
        Link.objects.create(org=acme.org, src_id=m1, dst_id=m2, type="supersedes", retired_dst=True, origin="check")
    started = time.monotonic()
    client = api(acme.member_token)
    for body in ({}, {"include_history": True}, {"as_of": timezone.now().isoformat()}):
        response = client.post("/api/v1/recall", {"query": "When does the release train leave?", **body}, format="json")
        assert response.status_code == 200, response.content
        if body.get("include_history"):
            assert {r["memory"]["id"] for r in response.json()["results"]} == {m1, m2}
        else:
            assert response.json()["results"] == []  # no live version: nothing current to return
    for memory_id in (m1, m2):
        assert [m["id"] for m in client.get(f"/api/v1/memories/{memory_id}/history").json()["chain"]] == [m1, m2]
        assert client.get(f"/api/v1/memories/{memory_id}").status_code == 200
    assert time.monotonic() - started < 5


def test_a_statement_past_the_timeout_is_cancelled(acme, settings):
    settings.STATEMENT_TIMEOUT_MS = 200
    started = time.monotonic()
    with pytest.raises(OperationalError) as raised:
        with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(3)")
    assert isinstance(raised.value.__cause__, QueryCanceled) and time.monotonic() - started < 2
    with connection.cursor() as cursor:  # the timeout ends with the scope
        cursor.execute("SELECT current_setting('statement_timeout')")
        assert cursor.fetchone()[0] == "0"


def test_a_request_whose_query_times_out_answers_503(api, acme, settings, monkeypatch):
    settings.STATEMENT_TIMEOUT_MS = 200

    def slow_feed(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(3)")

    monkeypatch.setattr(selectors, "memory_feed", slow_feed)
    started = time.monotonic()
    response = api(acme.member_token).get("/api/v1/memories")
    assert error_of(response) == (503, "statement_timeout") and time.monotonic() - started < 2
    assert response["Retry-After"] == "1"
    monkeypatch.undo()
    assert api(acme.member_token).get("/api/v1/memories").status_code == 200  # the connection serves the next one
