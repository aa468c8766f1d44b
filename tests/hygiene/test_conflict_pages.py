"""The conflict review queue page /conflicts (hygiene/pages.py): the same selectors and resolve service as the API."""
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from memory.models import Conflict
from tenants import rls
from tests.support.pages import signed_in


def remember(api, token: str, content: str, **body) -> str:
    response = api(token).post("/api/v1/memories", {"content": content, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["memory"]["id"]


def make_conflict(tenant, a: str, b: str, **fields) -> Conflict:
    # As the judge's review job records one (hygiene/services.py _decide), without running the judge.
    with rls.tenant_scope(tenant.scope):
        return Conflict.objects.create(org=tenant.org, a_id=a, b_id=b, **{
            "relation": "contradicts", "confidence": 0.7, "judge": "local:test", "rationale": "two owners", **fields})


@pytest.fixture
def conflict(api, acme) -> Conflict:
    a = remember(api, acme.member_token, "Dana owns checkout.")
    b = remember(api, acme.member_token, "Ivan owns checkout.")
    return make_conflict(acme, a, b)


def status_of(api, tenant, memory_id: str) -> str:
    return api(tenant.admin_token).get(f"/api/v1/memories/{memory_id}").json()["memory"]["status"]


def open_ids(api, tenant) -> list[str]:
    return [c["id"] for c in api(tenant.admin_token).get("/api/v1/conflicts?status=open").json()["results"]]


def open_ids_of(tenant) -> list[str]:
    with rls.tenant_scope(tenant.scope):
        return list(Conflict.objects.filter(status=Conflict.Status.OPEN).values_list("id", flat=True))


def articles(page) -> int:
    return page.content.count(b'<article class="conflict')


@pytest.mark.parametrize("who", ["member", "admin"])
def test_the_queue_shows_both_memories_the_verdict_and_the_numbers(api, acme, conflict, who):
    page = signed_in(acme, getattr(acme, who)).get("/conflicts")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count("<h1>") == 1 and articles(page) == 1
    assert f'href="/memories/{conflict.a_id}"' in html and f'href="/memories/{conflict.b_id}"' in html
    assert "Dana owns checkout." in html and "Ivan owns checkout." in html
    assert "contradicts" in html and "0.70" in html and "two owners" in html
    for button in ("Left replaces right", "Right replaces left", "Keep both"):
        assert f">{button}</button>" in html
    assert 'name="csrfmiddlewaretoken"' in html
    # The numbers are /stats's, as this user sees them.
    stats = page.context["stats"]
    assert stats["conflicts"]["open"] == 1 and stats["memories"]["live"] == 2
    assert re.search(r"<dt>Open conflicts</dt><dd>1</dd>", html)


def test_signing_in_is_required(acme, conflict):
    for answer in (Client().get("/conflicts"), Client().post(f"/conflicts/{conflict.id}/resolve", {"decision": "a"})):
        assert answer.status_code == 302 and answer["Location"].startswith("/sign-in?next=")
    assert open_ids_of(acme) == [conflict.id]


@pytest.mark.parametrize("decision, loser_side", [("a", "b"), ("b", "a")])
def test_resolving_either_way_retires_the_other_memory(api, acme, conflict, decision, loser_side):
    client = signed_in(acme, acme.member)
    answer = client.post(f"/conflicts/{conflict.id}/resolve", {"decision": decision})
    assert answer.status_code == 302 and answer["Location"] == "/conflicts"
    winner, loser = getattr(conflict, f"{decision}_id"), getattr(conflict, f"{loser_side}_id")
    body = api(acme.admin_token).get(f"/api/v1/memories/{loser}").json()
    assert body["memory"]["status"] == "superseded" and body["memory"]["superseded_by"] == winner
    assert body["links"][0]["origin"] == "review"
    assert status_of(api, acme, winner) == "live"
    assert open_ids(api, acme) == []
    after = client.get("/conflicts")  # the notice, and the conflict left the open list
    assert articles(after) == 0 and f"Conflict {conflict.id} resolved" in after.content.decode()


def test_keep_both_retires_nothing(api, acme, conflict):
    answer = signed_in(acme, acme.admin).post(f"/conflicts/{conflict.id}/resolve", {"decision": "keep_both"})
    assert answer.status_code == 302
    assert status_of(api, acme, conflict.a_id) == status_of(api, acme, conflict.b_id) == "live"
    resolved = api(acme.admin_token).get("/api/v1/conflicts?status=resolved").json()["results"]
    assert [(c["id"], c["resolution"]) for c in resolved] == [(conflict.id, "keep_both")]


def test_an_already_resolved_conflict_is_a_409_message_and_changes_nothing(api, acme, conflict):
    client = signed_in(acme, acme.member)
    assert client.post(f"/conflicts/{conflict.id}/resolve", {"decision": "keep_both"}).status_code == 302
    again = client.post(f"/conflicts/{conflict.id}/resolve", {"decision": "a"})
    assert again.status_code == 409 and b"already been resolved" in again.content
    assert again.content.decode().count("<h1>") == 1 and b"<h1>Conflicts</h1>" in again.content
    assert status_of(api, acme, conflict.a_id) == status_of(api, acme, conflict.b_id) == "live"


def test_a_winner_that_is_no_longer_live_is_a_409_and_the_conflict_stays_open(api, acme, conflict):
    assert api(acme.member_token).post(f"/api/v1/memories/{conflict.a_id}/forget", {},
                                       format="json").status_code == 200
    answer = signed_in(acme, acme.member).post(f"/conflicts/{conflict.id}/resolve", {"decision": "a"})
    assert answer.status_code == 409 and b"only a live memory can replace another" in answer.content
    assert open_ids(api, acme) == [conflict.id]
    assert status_of(api, acme, conflict.b_id) == "live"


@pytest.mark.parametrize("body", [{}, {"decision": "flip_a_coin"}])
def test_a_bad_decision_is_400_and_changes_nothing(api, acme, conflict, body):
    answer = signed_in(acme, acme.member).post(f"/conflicts/{conflict.id}/resolve", body)
    assert answer.status_code == 400 and b"Choose one of the three decisions." in answer.content
    assert open_ids(api, acme) == [conflict.id]


def test_another_orgs_conflicts_are_not_found(api, acme, globex, conflict):
    client = signed_in(globex, globex.admin)
    assert articles(client.get("/conflicts")) == 0
    for decision in ("a", "keep_both"):
        answer = client.post(f"/conflicts/{conflict.id}/resolve", {"decision": decision})
        assert answer.status_code == 404 and answer["Content-Type"].startswith("text/html")
    assert client.post("/conflicts/cfl_nosuch/resolve", {"decision": "a"}).status_code == 404
    assert open_ids(api, acme) == [conflict.id]


def test_conflicts_of_a_project_or_personal_memories_the_user_cannot_see_are_not_found(api, acme, conflict):
    ops = make_conflict(acme, remember(api, acme.admin_token, "Ops deploys on Mondays.", project="ops"),
                        remember(api, acme.admin_token, "Ops deploys on Fridays.", project="ops"))
    mine = make_conflict(acme, remember(api, acme.admin_token, "My desk is 4.", scope="personal"),
                         remember(api, acme.admin_token, "My desk is 5.", scope="personal"))
    member = signed_in(acme, acme.member)  # in project web only
    page = member.get("/conflicts")
    assert articles(page) == 1 and conflict.id in page.content.decode()
    for hidden in (ops, mine):
        assert member.post(f"/conflicts/{hidden.id}/resolve", {"decision": "keep_both"}).status_code == 404
    assert set(open_ids(api, acme)) == {conflict.id, ops.id, mine.id}
    assert articles(signed_in(acme, acme.admin).get("/conflicts")) == 3


@pytest.mark.slow
def test_a_long_queue_is_paged_and_the_query_count_does_not_grow(api, acme):
    ids = [remember(api, acme.member_token, f"Fact number {i} about the checkout service.") for i in range(22)]
    client = signed_in(acme, acme.member)
    make_conflict(acme, ids[0], ids[1])
    with CaptureQueriesContext(connection) as one:
        assert articles(client.get("/conflicts")) == 1
    for i in range(1, 21):
        make_conflict(acme, ids[i], ids[i + 1])
    with CaptureQueriesContext(connection) as many:
        first = client.get("/conflicts")
    assert articles(first) == 20 and b'rel="next">Older</a>' in first.content
    assert len(many) == len(one)
    second = client.get("/conflicts?page=2")
    assert articles(second) == 1 and b'rel="prev"' in second.content
    assert articles(client.get("/conflicts?page=nonsense")) == 20  # a bad page number shows the first


def test_a_long_memory_is_shortened_in_the_queue_with_a_link_to_all_of_it(api, acme):
    long_text = "The retention policy keeps audit logs for seven years. " * 200
    older = remember(api, acme.member_token, long_text, project="web")
    newer = remember(api, acme.member_token, "Audit logs are kept for ten years now.", project="web")
    make_conflict(acme, older, newer)
    page = signed_in(acme, acme.admin).get("/conflicts")
    assert page.status_code == 200
    assert long_text.encode() not in page.content
    assert f"Read all {len(long_text)} characters".encode() in page.content
