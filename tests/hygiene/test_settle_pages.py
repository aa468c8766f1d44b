"""A disagreement shown on a search result is settled where it is seen (hygiene/pages.DisagreementSettlePage): "the
newer replaces it" or "both hold", recorded as a person's review (a resolved conflict naming who and when)."""
import pytest
from django.test import Client

from memory.models import Conflict, Link
from tenants import rls
from tests.hygiene.test_conflict_pages import make_conflict, remember, status_of
from tests.support.pages import signed_in

SEARCH = "/?q=When+is+the+launch%3F"


@pytest.fixture
def pair(api, acme) -> tuple[str, str]:
    old = remember(api, acme.member_token, "Can you check the script? The launch is on March 3, ads are booked.")
    new = remember(api, acme.member_token, "Thanks, it works. We launch on March 17 with the partners.")
    return old, new


def settle(client, old: str, new: str, decision: str):
    return client.post("/disagreements/settle", {"memory": old, "other": new, "decision": decision,
                                                 "next": SEARCH})


def test_the_older_ones_card_offers_both_answers(acme, pair):
    old, new = pair
    html = signed_in(acme, acme.member).get(SEARCH).content.decode()
    assert html.count('action="/disagreements/settle"') == 1  # on the older one's card only
    assert f'name="memory" value="{old}"' in html and f'name="other" value="{new}"' in html
    assert ">The newer replaces it</button>" in html and ">Both hold</button>" in html


def test_the_newer_replaces_it_retires_the_older_as_a_persons_review(api, acme, pair):
    old, new = pair
    client = signed_in(acme, acme.member)
    response = settle(client, old, new, "supersede")
    assert response.status_code == 302 and response["Location"] == SEARCH
    assert status_of(api, acme, old) == "superseded" and status_of(api, acme, new) == "live"
    with rls.tenant_scope(acme.scope):
        link = Link.objects.get(src_id=new, dst_id=old)
        conflict = Conflict.objects.get(a_id=old, b_id=new)
    assert link.origin == "review" and link.reason == f"review by {acme.member.email}"
    assert (conflict.status, conflict.resolution, conflict.resolved_by_id, conflict.judge) == (
        "resolved", "supersede", acme.member.id, "reader")
    assert "Settled: the newer replaces the older." in client.get(SEARCH).content.decode()


def test_both_hold_keeps_both_and_recall_stops_flagging_the_pair(api, acme, pair, recall):
    old, new = pair
    assert "disagrees" in next(r for r in recall(acme.member_token, "When is the launch?")["results"]
                               if r["memory"]["id"] == old)["flags"]
    assert settle(signed_in(acme, acme.member), old, new, "keep_both").status_code == 302
    assert status_of(api, acme, old) == status_of(api, acme, new) == "live"
    body = recall(acme.member_token, "When is the launch?")
    assert all("disagrees" not in r["flags"] for r in body["results"])
    assert body["trace"]["disagreements"]["pairs"] == []


def test_bad_input_changes_nothing_and_says_why(api, acme, pair):
    old, new = pair
    client = signed_in(acme, acme.member)
    for decision, message in (("merge", "Choose “The newer replaces it” or “Both hold”."),
                              ("supersede", "No such pair of memories.")):
        other = new if decision == "merge" else "mem_01NOSUCHMEMORY000000000000"
        response = client.post("/disagreements/settle", {"memory": old, "other": other, "decision": decision,
                                                         "next": "https://elsewhere.example/"})
        assert response.status_code == 302 and response["Location"] == "/"  # never off the site
        assert message in client.get("/").content.decode()
    assert status_of(api, acme, old) == status_of(api, acme, new) == "live"
    with rls.tenant_scope(acme.scope):
        assert not Conflict.objects.exists()
    anonymous = Client().post("/disagreements/settle", {"memory": old, "other": new, "decision": "supersede"})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/sign-in?next=")
    assert status_of(api, acme, old) == "live"


def test_hostile_input_changes_nothing_and_never_fails(api, acme, globex, pair):
    old, new = pair
    theirs = remember(api, globex.member_token, "The launch is on April 2.")
    client = signed_in(acme, acme.member)
    for fields in ({"memory": old + "\x00", "other": new, "decision": "supersede"},
                   {"memory": old, "other": "m" * 100_000, "decision": "supersede"},
                   {"memory": [old, new], "other": new, "decision": ["supersede", "keep_both"]},
                   {"memory": old, "other": theirs, "decision": "supersede"},  # another organization's memory
                   {"memory": old, "other": old, "decision": "supersede"},
                   {"memory": "", "other": "", "decision": ""}):
        response = client.post("/disagreements/settle", fields)
        assert response.status_code == 302 and response["Location"] == "/"
    body = client.post("/disagreements/settle", '{"memory": {"$ne": null}}', content_type="application/json")
    assert body.status_code == 302
    assert status_of(api, acme, old) == status_of(api, acme, new) == "live"
    assert status_of(api, globex, theirs) == "live"
    with rls.tenant_scope(acme.scope):
        assert not Conflict.objects.exists()


def test_said_many_times_it_is_recorded_once(api, acme, pair):
    old, new = pair
    client = signed_in(acme, acme.member)
    assert all(settle(client, old, new, "keep_both").status_code == 302 for _ in range(50))
    with rls.tenant_scope(acme.scope):
        assert Conflict.objects.filter(resolution="keep_both").count() == 1
    assert settle(client, old, new, "supersede").status_code == 302  # a person may still change their mind
    assert settle(client, old, new, "supersede").status_code == 302  # and a second click is refused, not a 500
    assert status_of(api, acme, old) == "superseded"
    assert "Both memories must be live" in client.get(SEARCH).content.decode()


def test_a_memorys_page_settles_its_open_conflicts_in_one_click(api, acme, pair):
    old, new = pair
    conflict = make_conflict(acme, old, new)
    client = signed_in(acme, acme.member)
    html = client.get(f"/memories/{old}").content.decode()
    assert html.count('action="/disagreements/settle"') == 1
    assert ">The newer replaces it</button>" in html and ">Both hold</button>" in html
    response = client.post("/disagreements/settle", {"memory": old, "other": new, "decision": "supersede",
                                                     "next": f"/memories/{old}"})
    assert response.status_code == 302 and response["Location"] == f"/memories/{old}"
    assert status_of(api, acme, old) == "superseded"
    with rls.tenant_scope(acme.scope):
        conflict.refresh_from_db()
    assert (conflict.status, conflict.resolution, conflict.resolved_by_id) == ("resolved", "supersede", acme.member.id)
    assert 'action="/disagreements/settle"' not in client.get(f"/memories/{old}").content.decode()


def test_a_shown_conflict_is_settled_from_the_memorys_page_like_an_open_one(api, acme, pair):
    old, new = pair
    conflict = make_conflict(acme, old, new, status=Conflict.Status.SHOWN)
    client = signed_in(acme, acme.member)
    html = client.get(f"/memories/{old}").content.decode()
    assert "shown at read time, queued when the conflict before it is settled" in html
    assert html.count('action="/disagreements/settle"') == 1
    response = client.post("/disagreements/settle", {"memory": old, "other": new, "decision": "keep_both",
                                                     "next": f"/memories/{old}"})
    assert response.status_code == 302
    with rls.tenant_scope(acme.scope):
        conflict.refresh_from_db()
        assert Conflict.objects.count() == 1  # the shown one was resolved, not a second one recorded
    assert (conflict.status, conflict.resolution) == ("resolved", "keep_both")
    assert status_of(api, acme, old) == "live" and status_of(api, acme, new) == "live"
