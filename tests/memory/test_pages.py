"""The memory pages (memory/pages/): the feed, a memory's page, open loops and sources, through Django's test client
against the real stack. Each page shows what the API shows the same person, nothing more; each action goes through
the API's services and a refused one changes nothing."""
import re
from html import unescape

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tenants import rls
from tests.support.pages import signed_in


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


def test_signed_out_pages_redirect_to_sign_in(acme, remember):
    memory_id = remember(acme.admin_token, "A fact nobody signed in may read.")["memory"]["id"]
    for path in ["/", "/?q=fact", f"/memories/{memory_id}", "/loops", "/sources", "/sources/docs/a.md"]:
        answer = Client().get(path)
        assert answer.status_code == 302 and answer["Location"].startswith("/sign-in?next="), path
    answer = Client().post(f"/memories/{memory_id}", {"action": "forget"})
    assert answer.status_code == 302 and answer["Location"].startswith("/sign-in?next=")


def test_feed_filters_by_lifecycle_kind_project_and_scope(acme, api, remember, admin_page, member_page):
    old = remember(acme.admin_token, "Standup is at 9:15.", kind="fact", project="web")["memory"]
    new = remember(acme.admin_token, "Standup is at 9:30.", kind="fact", project="web",
                   links=[{"type": "supersedes", "dst": old["id"], "reason": "moved"}])["memory"]
    decision = remember(acme.admin_token, "We ship on Thursdays.", kind="decision", project="ops")["memory"]
    personal = remember(acme.admin_token, "I prefer tabs.", kind="preference", scope="personal")["memory"]
    forgotten = remember(acme.admin_token, "An outdated note.", project="web")["memory"]
    forget = api(acme.admin_token).post(f"/api/v1/memories/{forgotten['id']}/forget", {}, format="json")
    assert forget.status_code == 200

    default = card_ids(admin_page.get("/"))
    assert set(default) == {new["id"], decision["id"], personal["id"]}  # live only by default
    superseded = admin_page.get("/?lifecycle=superseded")
    assert card_ids(superseded) == [old["id"]]
    assert '<span class="badge superseded">superseded</span>' in html(superseded)
    assert card_ids(admin_page.get("/?lifecycle=forgotten")) == [forgotten["id"]]
    assert set(card_ids(admin_page.get("/?lifecycle=all"))) == {old["id"], new["id"], decision["id"], personal["id"],
                                                                forgotten["id"]}
    assert card_ids(admin_page.get("/?kind=decision")) == [decision["id"]]
    assert card_ids(admin_page.get("/?project=ops")) == [decision["id"]]
    assert card_ids(admin_page.get("/?scope=personal")) == [personal["id"]]
    assert card_ids(admin_page.get("/?project=web&kind=fact&lifecycle=all")) == [new["id"], old["id"]]
    # The member is in web only: the admin's ops memory and personal memory are not theirs to see, as in the API.
    api_ids = {m["id"] for m in api(acme.member_token).get("/api/v1/memories?lifecycle=all").json()["results"]}
    assert set(card_ids(member_page.get("/?lifecycle=all"))) == api_ids == {old["id"], new["id"], forgotten["id"]}


@pytest.mark.parametrize("query, field", [
    ("lifecycle=bogus", "lifecycle"), ("kind=thought", "kind"), ("scope=team", "scope"), ("limit=0", "limit"),
    ("limit=abc", "limit"), ("project=nope", "project"), ("q=x&lifecycle=forgotten", "lifecycle"),
    (f"q={'x' * 16001}", "q"),
])
def test_feed_answers_a_bad_filter_with_the_form_and_400(acme, admin_page, query, field):
    answer = admin_page.get(f"/?{query}")
    assert answer.status_code == 400
    assert 'class="errorlist' in html(answer)
    if field == "limit":  # not a visible field: its error sits above the form
        assert "Page size:" in html(answer)
    else:
        assert f'id="id_{field}_error"' in html(answer)
    assert one_h1(answer) in {"Memories", "Search results"}


def test_feed_project_filter_offers_only_the_members_projects(acme, member_page):
    body = html(member_page.get("/"))
    assert '<option value="web">' in body and '<option value="ops">' not in body
    answer = member_page.get("/?project=ops")  # a project the member is not in: the API says 404; the form refuses it
    assert answer.status_code == 400 and "Select a valid choice" in html(answer)


def test_a_cursor_the_feed_did_not_write_is_400(acme, admin_page):
    answer = admin_page.get("/?cursor=bm90IGEgY3Vyc29y")
    assert answer.status_code == 400 and "cursor" in html(answer)


@pytest.mark.slow
def test_feed_pages_walk_every_memory_once(acme, remember, admin_page):
    written = {remember(acme.admin_token, f"Numbered fact {i}: the value is {i * 7}.", project="web")["memory"]["id"]
               for i in range(23)}
    seen, path, pages = [], "/?limit=5&project=web", 0
    while path:
        page = admin_page.get(path)
        assert page.status_code == 200
        seen += card_ids(page)
        pages += 1
        found = re.search(r'<a href="(\?[^"]+)" rel="next">Older</a>', page.content.decode())
        path = "/" + unescape(found.group(1)) if found else None
        assert pages <= 6
    assert pages == 5 and len(seen) == 23 and set(seen) == written


@pytest.mark.slow
def test_feed_query_count_does_not_grow_with_the_page(acme, remember, admin_page):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_page.get("/?limit=100&lifecycle=all").status_code == 200
        return len(captured)

    for i in range(5):
        remember(acme.admin_token, f"Small tenant fact {i}.", project="web")
    five = queries()
    for i in range(45):
        remember(acme.admin_token, f"Bigger tenant fact {i}.", project="web" if i % 2 else "ops")
    assert len(card_ids(admin_page.get("/?limit=100"))) == 50
    assert queries() == five


def test_search_runs_recall_and_puts_the_superseding_version_first(acme, remember, member_page):
    old = remember(acme.member_token, "The staging database lives on host db-staging-1.", kind="fact")["memory"]
    remember(acme.member_token, "Coffee machine on floor 3 is broken.", kind="fact")
    new = remember(acme.member_token, "The staging database moved to host db-staging-2.", kind="fact",
                   links=[{"type": "supersedes", "dst": old["id"], "reason": "migrated in March"}])["memory"]
    live = member_page.get("/?q=staging+database+host")
    assert live.status_code == 200 and one_h1(live) == "Search results"
    ids = card_ids(live)
    assert ids[0] == new["id"] and old["id"] not in ids
    assert "<details><summary>Recall trace</summary>" in live.content.decode() and '"channels"' in html(live)
    history = member_page.get("/?q=staging+database+host+db-staging-1&lifecycle=all")
    ids = card_ids(history)
    assert ids.index(new["id"]) < ids.index(old["id"])  # the current version first, its predecessor after it
    assert '<span class="badge superseded">superseded</span>' in html(history)
    assert f"superseded by {new['id']}: migrated in March" in html(history)


def test_search_shows_recall_flags_as_badges(acme, api, remember, member_page):
    task = remember(acme.member_token, "Rotate the signing keys before Friday.", kind="task")["memory"]
    check = {"outcome": "fail", "detail": "keys still old"}
    assert api(acme.member_token).post(f"/api/v1/memories/{task['id']}/checks", check, format="json").status_code == 201
    page = member_page.get("/?q=rotate+signing+keys")
    body = html(page)
    assert card_ids(page)[0] == task["id"]
    assert '<span class="badge open_loop">open_loop</span>' in body
    assert '<span class="badge failed_check">failed_check</span>' in body and "keys still old" in body


# --- A memory's page --------------------------------------------------------------------------------------------


def memory_of(api, token: str, memory_id: str) -> dict:
    return api(token).get(f"/api/v1/memories/{memory_id}").json()["memory"]


def test_memory_page_shows_content_provenance_and_sections(acme, remember, admin_page, member_page):
    memory = remember(acme.member_token, "Deploys need two approvals.\nSince the March incident.", kind="decision",
                      project="web", session_id="sess-42", valid_until="2099-01-01T00:00:00Z")["memory"]
    for client in (admin_page, member_page):
        page = client.get(f"/memories/{memory['id']}")
        assert page.status_code == 200
        assert one_h1(page) == "Decision: Deploys need two approvals."
        body = html(page)
        assert '<div class="content card">Deploys need two approvals.\nSince the March incident.</div>' in body
        for heading in ("Version history", "Links", "Checks", "Events"):
            assert f"<h2>{heading}</h2>" in body
        assert "member@acme.test" in body and "sess-42" in body and "until 2099-01-01" in body
        assert "agent (authoritative)" in body
        for button in ("Forget", "Add check", "Write correction"):
            assert f">{button}</button>" in body
        assert ">Restore</button>" not in body
    # The token's name for its owner; for the admin too (admins see every token); its id at least, always.
    assert "member agent" in html(member_page.get(f"/memories/{memory['id']}"))


def test_memory_page_404_for_what_the_caller_cannot_see(acme, globex, remember, member_page):
    other_org = remember(globex.admin_token, "Globex secret.", project="web")["memory"]["id"]
    other_project = remember(acme.admin_token, "Ops only.", project="ops")["memory"]["id"]
    personal = remember(acme.admin_token, "The admin's own note.", scope="personal")["memory"]["id"]
    for memory_id in (other_org, other_project, personal, "mem_01HZZZZZZZZZZZZZZZZZZZZZZZ", "nonsense"):
        for answer in (member_page.get(f"/memories/{memory_id}"),
                       member_page.post(f"/memories/{memory_id}", {"action": "forget"}),
                       member_page.post(f"/memories/{memory_id}", {"action": "correct", "content": "Mine now."})):
            assert answer.status_code == 404 and one_h1(answer) == "Not found", memory_id
    # Nothing changed: the admin still sees both of theirs live.
    admin = signed_in(acme, acme.admin)
    # An admin has no power over a member's personal memory either (as in the API).
    members_own = remember(acme.member_token, "The member's own note.", scope="personal")["memory"]["id"]
    assert admin.get(f"/memories/{members_own}").status_code == 404
    assert admin.post(f"/memories/{members_own}", {"action": "forget"}).status_code == 404
    assert member_page.get(f"/memories/{members_own}").status_code == 200
    assert '<span class="badge live">live</span>' in html(admin.get(f"/memories/{other_project}"))


@pytest.mark.slow
def test_a_long_chain_and_long_content_render_in_order(acme, remember, member_page):
    ids = [remember(acme.member_token, "Version 0 of the release checklist.")["memory"]["id"]]
    for i in range(1, 20):
        ids.append(remember(acme.member_token, f"Version {i} of the release checklist.", links=[
            {"type": "supersedes", "dst": ids[-1], "reason": f"step {i}"}])["memory"]["id"])
    long = remember(acme.member_token, "word " * 2000 + "x" * 3000, links=[
        {"type": "supersedes", "dst": ids[-1], "reason": "the long one"}])["memory"]
    page = member_page.get(f"/memories/{ids[5]}")
    assert page.status_code == 200
    timeline = page.content.decode().split('<ol class="timeline">')[1].split("</ol>")[0]
    assert re.findall(r'<li class="[^"]*">\s*<a class="id" href="/memories/(mem_\w+)"', timeline) == [*ids, long["id"]]
    assert '<li class=" this">' in timeline and timeline.count('class="current"') == 1
    assert "declared by its writer (member@acme.test): <span class=\"content\">step 6</span>" in unescape(timeline)
    full = member_page.get(f"/memories/{long['id']}")
    assert full.status_code == 200 and len(long["content"]) == 13000
    assert f'<div class="content card">{long["content"]}</div>' in html(full)
    assert len(one_h1(full)) < 80


def test_the_timeline_says_what_retired_each_version(acme, api, remember, member_page):
    from memory import lifecycle
    from memory.models import Link, Verdict
    from tenants.auth import load_principal

    # judge: the hygiene job's supersede with its verdict (hygiene/services.py), written as the member
    old = remember(acme.member_token, "The API rate limit is 100 requests per minute.")["memory"]["id"]
    judged = remember(acme.member_token, "The API rate limit is 300 requests per minute.")["memory"]["id"]
    scope = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=None)
        locked = lifecycle.lock_memories([old, judged])
        lifecycle.supersede(locked[old], successor=locked[judged], reason="judge: updates", origin=Link.Origin.JUDGE,
                            principal=principal)
        Verdict.objects.create(org_id=acme.org.id, memory_id=judged, other_id=old, relation="updates",
                               confidence=0.93, rationale="newer number", judge="test-judge", prompt_version="v1",
                               latency_ms=1.0, decision=Verdict.Decision.AUTO_RETIRED)
    # check: a failed check names its correction
    checked = remember(acme.member_token, "The API rate limit is 300 requests per minute; bursts allowed.",
                       links=[{"type": "relates_to", "dst": judged}])["memory"]["id"]
    fixed = remember(acme.member_token, "The API rate limit is 300 per minute, bursts of 50.")["memory"]["id"]
    check = {"outcome": "fail", "detail": "bursts are capped at 50", "corrected_by": fixed}
    assert api(acme.member_token).post(f"/api/v1/memories/{checked}/checks", check, format="json").status_code == 201
    # source: two versions of a document
    for content in ("Runbook v1: restart the worker.", "Runbook v2: restart the worker, then flush the queue."):
        assert api(acme.member_token).post("/api/v1/sources", {"source_id": "runbook-worker", "content": content,
                                                              "project": "web"}, format="json").status_code == 201
    # forgotten
    gone = remember(acme.member_token, "A note to forget.")["memory"]["id"]
    api(acme.member_token).post(f"/api/v1/memories/{gone}/forget", {"reason": "obsolete"}, format="json")

    body = re.sub(r"<[^>]+>", "", html(member_page.get(f"/memories/{old}")))
    assert f"Replaced by {judged}, by the judge test-judge with confidence 0.93 (updates)" in body
    body = re.sub(r"<[^>]+>", "", html(member_page.get(f"/memories/{checked}")))
    assert f"Replaced by {fixed} after a failed check by member@acme.test: bursts are capped at 50" in body
    versions = api(acme.member_token).get("/api/v1/sources/runbook-worker/versions").json()["results"]
    body = re.sub(r"<[^>]+>", "", html(member_page.get(f"/memories/{versions[0]['id']}")))
    assert f"Replaced by {versions[1]['id']}, a new source version (1 → 2)" in body
    body = re.sub(r"<[^>]+>", "", html(member_page.get(f"/memories/{gone}")))
    assert "Forgotten by member@acme.test: obsolete" in body
    assert ">Restore</button>" in html(member_page.get(f"/memories/{gone}"))


def test_a_keyed_memory_shows_its_key_and_every_value_written_under_it(acme, api, remember, member_page):
    body = {"namespace": ["users", "u-1"], "key": "theme"}
    old = remember(acme.member_token, "Prefers light mode.", **body)["memory"]["id"]
    new = remember(acme.member_token, "Prefers dark mode.", **body)["memory"]["id"]
    page = re.sub(r"<[^>]+>", "", html(member_page.get(f"/memories/{old}")))
    assert "theme in namespace users / u-1: writing this key again replaces this memory" in page
    assert f"Replaced by {new}, a new value written under its key by member@acme.test" in page
    assert page.index("Prefers light mode.") < page.index("Prefers dark mode.")  # the timeline, oldest first
    assert "key users / u-1 / theme" in html(member_page.get("/"))
    # Restoring the old value while the new one holds the key would make two: refused, nothing changed.
    refused = member_page.post(f"/memories/{old}", {"action": "restore"})
    assert refused.status_code == 409 and "Another live memory holds this key now" in html(refused)
    assert memory_of(api, acme.member_token, old)["status"] == "superseded"
    # A correction written on the page is the key's next value: the key keeps a live holder.
    answer = member_page.post(f"/memories/{new}", {"action": "correct", "content": "Prefers high contrast.",
                                                   "reason": "asked again"})
    assert answer.status_code == 303
    corrected = memory_of(api, acme.member_token, answer["Location"].rsplit("/", 1)[1])
    assert (corrected["namespace"], corrected["key"], corrected["status"]) == (["users", "u-1"], "theme", "live")
    assert memory_of(api, acme.member_token, new)["superseded_by"] == corrected["id"]


def test_review_retirement_names_the_reviewer(acme, api, remember, admin_page):
    from memory.models import Conflict

    a = remember(acme.admin_token, "The office opens at 8.", project="web")["memory"]["id"]
    b = remember(acme.admin_token, "The office opens at 9.", project="web")["memory"]["id"]
    with rls.tenant_scope(acme.scope):
        conflict = Conflict.objects.create(org_id=acme.org.id, a_id=a, b_id=b, relation="contradicts",
                                           confidence=0.6, judge="test-judge", rationale="different hours")
    assert api(acme.admin_token).post(f"/api/v1/conflicts/{conflict.id}/resolve",
                                      {"decision": "supersede", "winner": b}, format="json").status_code == 200
    body = re.sub(r"<[^>]+>", "", html(admin_page.get(f"/memories/{a}")))
    assert f"Replaced by {b} in a review of a conflict by admin@acme.test" in body
    assert "contradicts" in body and "different hours" in body  # the (resolved) conflict is listed


# --- Actions ----------------------------------------------------------------------------------------------------


def messages_of(response) -> list[str]:
    return [unescape(m) for m in re.findall(r'<ul class="messages" role="status">\s*<li class="[^"]*">(.*?)</li>',
                                             response.content.decode(), re.S)]


def test_forget_then_restore(acme, api, remember, member_page):
    memory_id = remember(acme.member_token, "The wiki moved to Notion.", project="web")["memory"]["id"]
    answer = member_page.post(f"/memories/{memory_id}", {"action": "forget", "forget-reason": "we left Notion"})
    assert answer.status_code == 303 and answer["Location"] == f"/memories/{memory_id}"
    memory = memory_of(api, acme.member_token, memory_id)
    assert (memory["status"], memory["invalidated_reason"]) == ("forgotten", "we left Notion")
    page = member_page.get(answer["Location"])
    assert messages_of(page) == ["Forgotten. Restore brings it back."] and ">Restore</button>" in html(page)
    # Forgetting again is refused by the service: a message and 409, nothing changed.
    again = member_page.post(f"/memories/{memory_id}", {"action": "forget", "forget-reason": "twice"})
    assert again.status_code == 409 and "Only a live memory can be forgotten" in html(again)
    assert memory_of(api, acme.member_token, memory_id)["invalidated_reason"] == "we left Notion"
    answer = member_page.post(f"/memories/{memory_id}", {"action": "restore"})
    assert answer.status_code == 303 and memory_of(api, acme.member_token, memory_id)["status"] == "live"
    refused = member_page.post(f"/memories/{memory_id}", {"action": "restore"})
    assert refused.status_code == 409 and "already live" in html(refused)


def test_add_check_and_bad_check_input(acme, api, remember, member_page):
    memory_id = remember(acme.member_token, "make test runs in under 5 minutes.", project="web")["memory"]["id"]
    ops_memory = remember(acme.admin_token, "Ops runbook lives in the ops repo.", project="ops")["memory"]["id"]
    answer = member_page.post(f"/memories/{memory_id}", {
        "action": "check", "check-outcome": "pass", "check-detail": "ran it: 4m12s"})
    assert answer.status_code == 303
    checks = api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["checks"]
    assert [(c["outcome"], c["detail"]) for c in checks] == [("pass", "ran it: 4m12s")]
    assert "ran it: 4m12s" in html(member_page.get(f"/memories/{memory_id}"))
    for data, status, text in [
        ({"check-outcome": "maybe", "check-detail": "x"}, 400, "Select a valid choice"),
        ({"check-outcome": "fail", "check-detail": ""}, 400, "This field is required"),
        ({"check-outcome": "fail", "check-detail": "x", "check-corrected_by": "mem_nope"}, 400, "Not a memory id"),
        ({"check-outcome": "pass", "check-detail": "x", "check-corrected_by": ops_memory}, 400,
         "only a failed check names a correction"),
        # A correction the member cannot see: a mistake in the form, shown beside its field, like one that is missing.
        ({"check-outcome": "fail", "check-detail": "x", "check-corrected_by": ops_memory}, 400, "No such memory"),
    ]:
        answer = member_page.post(f"/memories/{memory_id}", {"action": "check", **data})
        assert answer.status_code == status and text in html(answer), data
        field_errors = html(answer).split('id="id_check-corrected_by_error"')
        if "check-corrected_by" in data:
            assert len(field_errors) == 2 and text in field_errors[1].split("</ul>")[0], data
    checks = api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["checks"]
    assert len(checks) == 1 and memory_of(api, acme.member_token, memory_id)["status"] == "live"


def test_write_correction_supersedes_through_remember(acme, api, remember, member_page):
    old = remember(acme.member_token, "The VPN endpoint is vpn1.acme.test.", kind="fact", project="web")["memory"]
    answer = member_page.post(f"/memories/{old['id']}", {
        "action": "correct", "content": "The VPN endpoint is vpn2.acme.test.", "reason": "vpn1 was retired"})
    assert answer.status_code == 303
    new_id = answer["Location"].removeprefix("/memories/")
    new = memory_of(api, acme.member_token, new_id)
    assert (new["content"], new["kind"], new["project"], new["provenance"]["writer"]) == (
        "The VPN endpoint is vpn2.acme.test.", "fact", "web", "human")
    retired = memory_of(api, acme.member_token, old["id"])
    assert (retired["status"], retired["superseded_by"]) == ("superseded", new_id)
    links = api(acme.member_token).get(f"/api/v1/memories/{new_id}").json()["links"]
    assert [(l["type"], l["dst"], l["reason"], l["origin"]) for l in links] == [
        ("supersedes", old["id"], "vpn1 was retired", "declared")]
    page = member_page.get(answer["Location"])
    assert messages_of(page) == [f"Correction stored; it replaces {old['id']}."]
    # The old version is no longer live: no correction form, and a forged POST is refused with nothing stored.
    assert ">Write correction</button>" not in html(member_page.get(f"/memories/{old['id']}"))
    before = len(api(acme.member_token).get("/api/v1/memories?lifecycle=all").json()["results"])
    forged = member_page.post(f"/memories/{old['id']}", {"action": "correct", "content": "Yet another endpoint."})
    assert forged.status_code == 409 and "only a live memory can be corrected" in html(forged)
    assert len(api(acme.member_token).get("/api/v1/memories?lifecycle=all").json()["results"]) == before


@pytest.mark.slow
def test_bad_corrections_change_nothing(acme, api, remember, member_page, visible_count):
    memory_id = remember(acme.member_token, "Lunch is at noon.", project="web")["memory"]["id"]
    before = visible_count(acme.member_token)
    blank = member_page.post(f"/memories/{memory_id}", {"action": "correct", "content": "   "})
    assert blank.status_code == 400 and 'id="id_content_error"' in html(blank)
    too_long = member_page.post(f"/memories/{memory_id}", {"action": "correct", "content": "x" * 16001})
    assert too_long.status_code == 400 and 'id="id_content_error"' in html(too_long)
    same = member_page.post(f"/memories/{memory_id}", {"action": "correct", "content": "Lunch is at noon."})
    assert same.status_code == 409 and "already says" in html(same)
    # The org requires a reason on every supersede: the reason field says so, and nothing is stored.
    assert api(acme.admin_token).post("/api/v1/org/settings", {"require_supersede_reason": True},
                                      format="json").status_code == 200
    no_reason = member_page.post(f"/memories/{memory_id}", {"action": "correct", "content": "Lunch is at 12:30."})
    assert no_reason.status_code == 400 and 'id="id_reason_error"' in html(no_reason)
    assert "requires a reason" in html(no_reason)
    unknown = member_page.post(f"/memories/{memory_id}", {"action": "purge"})
    assert unknown.status_code == 400
    assert visible_count(acme.member_token) == before
    assert memory_of(api, acme.member_token, memory_id)["status"] == "live"
    ok = member_page.post(f"/memories/{memory_id}", {"action": "correct", "content": "Lunch is at 12:30.",
                                                     "reason": "new canteen hours"})
    assert ok.status_code == 303 and visible_count(acme.member_token) == before + 1


def test_every_action_needs_the_csrf_token(acme, api, remember):
    memory_id = remember(acme.member_token, "CSRF matters.", project="web")["memory"]["id"]
    client = signed_in(acme, acme.member)
    client.handler.enforce_csrf_checks = True
    for data in ({"action": "forget"}, {"action": "correct", "content": "Changed."},
                 {"action": "check", "check-outcome": "pass", "check-detail": "x"}):
        assert client.post(f"/memories/{memory_id}", data).status_code == 403
    page = client.get(f"/memories/{memory_id}")
    assert page.content.decode().count('name="csrfmiddlewaretoken"') >= 4  # forget, check, correction, sign out
    assert memory_of(api, acme.member_token, memory_id)["status"] == "live"
    assert api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["checks"] == []


# --- Open loops and sources -------------------------------------------------------------------------------------


def test_loops_per_project_with_state_filter(acme, api, remember, admin_page, member_page):
    web_task = remember(acme.admin_token, "Write the web release notes.", kind="task", project="web")["memory"]["id"]
    ops_task = remember(acme.admin_token, "Renew the ops certificates.", kind="task", project="ops")["memory"]["id"]
    question = remember(acme.member_token, "Which CDN do we keep?", kind="open-question", project="web")["memory"]["id"]
    done = remember(acme.member_token, "Release notes written.", kind="task", project="web",
                    links=[{"type": "supersedes", "dst": web_task}])["memory"]["id"]
    page = admin_page.get("/loops")
    assert page.status_code == 200 and one_h1(page) == "Open loops"
    body = html(page)
    assert "<h2>Project ops</h2>" in body and "<h2>Project web</h2>" in body
    assert set(card_ids(page)) == {ops_task, question, done}
    assert set(card_ids(member_page.get("/loops"))) == {question, done}  # the member is not in ops
    assert card_ids(admin_page.get("/loops?project=ops")) == [ops_task]
    closed = admin_page.get("/loops?state=closed")
    assert one_h1(closed) == "Closed loops" and card_ids(closed) == [web_task]
    assert f'Closed by <a class="id" href="/memories/{done}">' in html(closed)
    api_ids = [m["id"] for m in api(acme.member_token).get("/api/v1/loops").json()["results"]]
    assert card_ids(member_page.get("/loops")) == api_ids
    for query in ("state=stuck", "project=ops"):  # ops: not the member's project
        answer = member_page.get(f"/loops?{query}")
        assert answer.status_code == 400 and 'class="errorlist' in html(answer)


def test_sources_list_and_a_sources_versions(acme, api, remember, admin_page, member_page):
    def put(token, source_id, content, project="web"):
        answer = api(token).post("/api/v1/sources", {"source_id": source_id, "content": content, "project": project},
                                 format="json")
        assert answer.status_code in (200, 201), answer.content
        return answer.json()["memory"]["id"]

    v1 = put(acme.member_token, "docs/deploy.md", "Deploy with make deploy.")
    v2 = put(acme.member_token, "docs/deploy.md", "Deploy with make release, then make deploy.")
    derived = remember(acme.member_token, "Release before deploying.", project="web",
                       links=[{"type": "derived_from", "dst": v2}])["memory"]["id"]
    put(acme.admin_token, "ops/pager.md", "Pager rota is weekly.", project="ops")
    listing = admin_page.get("/sources")
    assert listing.status_code == 200 and one_h1(listing) == "Sources"
    assert '<a href="/sources/docs%2Fdeploy.md">docs/deploy.md</a></td><td>2</td><td>1</td>' in listing.content.decode()
    assert "ops/pager.md" in html(listing)
    assert "ops/pager.md" not in html(member_page.get("/sources"))
    for client in (admin_page, member_page):
        page = client.get("/sources/docs%2Fdeploy.md")
        assert page.status_code == 200 and one_h1(page) == 'Source <span class="content">docs/deploy.md</span>'
        body = page.content.decode()
        assert body.index(v1) < body.index(v2) and "Version 1" in body and "Version 2" in body
        assert f'<a class="id" href="/memories/{derived}">' in body
        assert f'Superseded by <a class="id" href="/memories/{v2}">' in body
    assert member_page.get("/sources/docs/deploy.md").status_code == 200  # a plain slash works too
    for missing in ("/sources/ops%2Fpager.md", "/sources/no-such-source"):
        answer = member_page.get(missing)
        assert answer.status_code == 404 and one_h1(answer) == "Not found"
    globex = signed_in(*_globex_admin(acme))
    assert globex.get("/sources/docs%2Fdeploy.md").status_code == 404 and "docs/deploy.md" not in html(
        globex.get("/sources"))


def _globex_admin(acme):
    from tests.support.tenants import build_tenant

    globex = build_tenant("globex")
    return globex, globex.admin


def test_every_page_renders_for_admin_and_member_with_one_h1(acme, remember, admin_page, member_page):
    memory_id = remember(acme.member_token, "A page for everyone.", project="web")["memory"]["id"]
    for client in (admin_page, member_page):
        for path in ("/", "/?q=page", f"/memories/{memory_id}", "/loops", "/sources"):
            page = client.get(path)
            assert page.status_code == 200, path
            one_h1(page)
            assert 'style="' not in page.content.decode() and "<script" not in page.content.decode()
    nav = html(admin_page.get("/loops"))
    assert '<a href="/loops" aria-current="page">' in nav


@pytest.mark.slow
def test_memory_page_query_count_does_not_grow_with_the_chain(acme, api, remember, member_page):
    def chain(length: int, label: str) -> list[str]:
        ids = [remember(acme.member_token, f"{label} version 0.")["memory"]["id"]]
        for i in range(1, length):
            ids.append(remember(acme.member_token, f"{label} version {i}.", links=[
                {"type": "supersedes", "dst": ids[-1], "reason": f"step {i}"}])["memory"]["id"])
        api(acme.member_token).post(f"/api/v1/memories/{ids[0]}/checks", {"outcome": "pass", "detail": "ok"},
                                    format="json")
        return ids

    def queries(memory_id: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert member_page.get(f"/memories/{memory_id}").status_code == 200
        return len(captured)

    short, long = chain(2, "Short chain"), chain(12, "Long chain")
    assert queries(short[0]) == queries(long[0])
