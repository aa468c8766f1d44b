"""Seeds 003 and 004 through the API: checks, sources, validity, loops, and "what changed"."""
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.memories import supersedes


def post(api, token, path, body):
    return api(token).post(path, body, format="json")


@pytest.fixture
def recall(api):
    def call(token, query, **body):
        response = api(token).post("/api/v1/recall", {"query": query, **body}, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    return call


def test_a_failed_check_is_shown_above_results_even_on_a_fresh_memory(remember, api, recall, acme):
    lesson = remember(acme.member_token, "Deploys go through script deploy.sh.", kind="lesson")["memory"]["id"]
    check = post(api, acme.member_token, f"/api/v1/memories/{lesson}/checks",
                 {"outcome": "fail", "detail": "deploy.sh was deleted last week"})
    assert check.status_code == 201 and check.json()["check"]["outcome"] == "fail"
    body = recall(acme.member_token, "How do I deploy?")
    assert body["warnings"][0]["memory"]["id"] == lesson
    assert body["warnings"][0]["check"]["detail"] == "deploy.sh was deleted last week"


def test_a_failed_check_naming_its_correction_retires_the_memory(remember, api, recall, acme):
    old = remember(acme.member_token, "Deploys go through script deploy.sh.", kind="lesson")["memory"]["id"]
    fix = remember(acme.member_token, "Deploys go through the GitHub Actions deploy workflow.", kind="lesson")
    fix_id = fix["memory"]["id"]
    check = post(api, acme.member_token, f"/api/v1/memories/{old}/checks",
                 {"outcome": "fail", "detail": "deploy.sh is gone; use the workflow", "corrected_by": fix_id})
    assert check.status_code == 201
    detail = api(acme.member_token).get(f"/api/v1/memories/{old}").json()
    assert detail["memory"]["status"] == "superseded" and detail["memory"]["superseded_by"] == fix_id
    link = next(link for link in detail["links"] if link["type"] == "supersedes")
    assert (link["origin"], link["reason"]) == ("check", "deploy.sh is gone; use the workflow")
    assert detail["checks"][0]["corrected_by"] == fix_id
    assert api(acme.member_token).get("/api/v1/stats").json()["supersedes"]["check"] == 1


def test_passing_checks_are_recorded_and_shown_on_the_detail(remember, api, acme):
    memory = remember(acme.member_token, "The cache warms in 30 seconds.")["memory"]["id"]
    assert post(api, acme.member_token, f"/api/v1/memories/{memory}/checks",
                {"outcome": "pass", "detail": "warmed in 28 s"}).status_code == 201
    checks = api(acme.member_token).get(f"/api/v1/memories/{memory}").json()["checks"]
    assert [(c["outcome"], c["detail"]) for c in checks] == [("pass", "warmed in 28 s")]


@pytest.mark.parametrize("body", [
    {"outcome": "maybe", "detail": "x"}, {"outcome": "fail"},
    {"outcome": "pass", "detail": "x", "corrected_by": "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"},
])
def test_bad_checks_are_400(remember, api, acme, body):
    memory = remember(acme.member_token, "Something to check")["memory"]["id"]
    assert post(api, acme.member_token, f"/api/v1/memories/{memory}/checks", body).status_code == 400


def test_checks_on_invisible_memories_are_404(remember, api, acme, globex):
    theirs = remember(globex.member_token, "Globex fact")["memory"]["id"]
    response = post(api, acme.member_token, f"/api/v1/memories/{theirs}/checks", {"outcome": "pass", "detail": "x"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(("url", "status"), [
    ("s3://acme-docs/pricing.md", 201), ("http://wiki/pricing", 201), ("https://acme.test/pricing?v=2", 201),
    ("not a url", 400), ("pricing.md", 400), (17, 400),
])
def test_a_source_url_is_any_absolute_uri(api, acme, url, status):
    response = post(api, acme.member_token, "/api/v1/sources", {"source_id": "pricing", "url": url, "content": "x"})
    assert response.status_code == status, response.content
    if status == 201:
        assert response.json()["memory"]["source"]["url"] == url
    else:
        assert "url" in response.json()["error"]["details"]["fields"]


def test_sources_version_by_content_hash(api, recall, acme):
    token = acme.member_token
    first = post(api, token, "/api/v1/sources", {"source_id": "pricing-page", "url": "https://acme.test/pricing",
                                                 "content": "Pro plan: $29 per month. Includes the old credit grant."})
    assert first.status_code == 201 and first.json()["memory"]["source"]["version"] == "1"
    assert first.json()["memory"]["provenance"]["writer"] == "source"
    same = post(api, token, "/api/v1/sources", {"source_id": "pricing-page",
                                                "content": "Pro plan: $29 per month. Includes the old credit grant."})
    assert same.status_code == 200 and same.json()["created"] is False
    changed = post(api, token, "/api/v1/sources", {"source_id": "pricing-page", "version": "2026-06",
                                                   "content": "Pro plan: $30 per month. Includes the current credit grant."})
    assert changed.status_code == 201 and changed.json()["superseded"] == first.json()["memory"]["id"]
    versions = api(token).get("/api/v1/sources/pricing-page/versions").json()["results"]
    assert [v["source"]["version"] for v in versions] == ["1", "2026-06"]
    assert [v["status"] for v in versions] == ["superseded", "live"]
    current = recall(token, "What is the Pro price?")
    assert current["results"][0]["memory"]["id"] == changed.json()["memory"]["id"]
    history = recall(token, "What is the Pro price?", include_history=True)
    old = next(r for r in history["results"] if r["memory"]["id"] == first.json()["memory"]["id"])
    assert old["flags"] == ["superseded"] and "source pricing-page changed" in old["why"]["note"]
    assert api(token).get("/api/v1/sources/unknown/versions").status_code == 404
    # A source id that is a path (a file in a repository) reads back like any other.
    post(api, token, "/api/v1/sources", {"source_id": "docs/deploy.md", "content": "Deploys run on Thursdays."})
    path_versions = api(token).get("/api/v1/sources/docs/deploy.md/versions")
    assert path_versions.status_code == 200 and path_versions.json()["results"][0]["source"]["source_id"] == "docs/deploy.md"
    # Into a project the caller is not a member of: like a project that does not exist.
    elsewhere = post(api, token, "/api/v1/sources", {"source_id": "ops-page", "content": "x", "project": "ops"})
    assert elsewhere.status_code == 404 and elsewhere.json()["error"]["code"] == "not_found"


def test_expired_facts_stay_readable_and_as_of_inside_the_window_is_valid(remember, recall, acme):
    start, end = timezone.now() - timedelta(days=30), timezone.now() - timedelta(days=1)
    memory = remember(acme.member_token, "The summer sale code SUMMER10 gives 10% off.",
                      valid_from=start.isoformat(), valid_until=end.isoformat())["memory"]
    assert memory["expired"] is True
    now = recall(acme.member_token, "summer sale code")
    assert now["results"][0]["flags"] == ["expired"]
    # The flag is computed at as_of: asked as of now, the fact has expired; the memory is never dropped.
    later = recall(acme.member_token, "summer sale code", as_of=(timezone.now() + timedelta(days=1)).isoformat())
    assert later["results"][0]["flags"] == ["expired"]


def test_loops_close_when_superseded_never_by_a_bare_link_and_reopen_on_restore(remember, api, acme):
    task = remember(acme.member_token, "Rotate the Stripe keys", kind="task")["memory"]["id"]
    question = remember(acme.member_token, "Who owns the status page?", kind="open-question")["memory"]["id"]
    answer = remember(acme.member_token, "The status page is owned by the SRE team.")["memory"]["id"]
    post(api, acme.member_token, "/api/v1/links", {"src": answer, "dst": question, "type": "supersedes"})
    open_loops = {m["id"] for m in api(acme.member_token).get("/api/v1/loops").json()["results"]}
    assert open_loops == {task, question}
    done = remember(acme.member_token, "Stripe keys rotated on Monday.", links=supersedes(task))["memory"]["id"]
    assert {m["id"] for m in api(acme.member_token).get("/api/v1/loops").json()["results"]} == {question}
    closed = api(acme.member_token).get("/api/v1/loops?state=closed").json()["results"]
    assert [(m["id"], m["closed_by"]) for m in closed] == [(task, done)]
    post(api, acme.member_token, f"/api/v1/memories/{task}/restore", {})
    assert {m["id"] for m in api(acme.member_token).get("/api/v1/loops").json()["results"]} == {task, question}
    assert api(acme.member_token).get("/api/v1/loops?project=ops").status_code == 404
    assert api(acme.member_token).get("/api/v1/loops?state=maybe").status_code == 400


def test_an_agent_can_answer_when_x_changed_and_what_it_was_before(remember, api, recall, acme):
    old = remember(acme.member_token, "The deploy window is Monday 10:00 UTC.", kind="fact")["memory"]
    new = remember(acme.member_token, "The deploy window is Friday 14:00 UTC.", kind="fact",
                   links=supersedes(old["id"], reason="release team moved it"))["memory"]
    body = recall(acme.member_token, "When is the deploy window?", include_history=True)
    current = next(r for r in body["results"] if "superseded" not in r["flags"])
    assert current["memory"]["id"] == new["id"]
    before = next(r for r in body["results"] if r["memory"]["id"] == old["id"])
    assert before["superseded_by"] == new["id"] and "release team moved it" in before["why"]["note"]
    chain = api(acme.member_token).get(f"/api/v1/memories/{new['id']}/history").json()["chain"]
    assert [m["content"] for m in chain] == [old["content"], new["content"]]
    assert chain[0]["invalidated_at"] is not None  # when it changed
    assert chain[0]["invalidated_reason"] == "release team moved it"  # and why


def test_as_of_inside_the_validity_window_treats_the_fact_as_valid(remember, recall, acme):
    until = timezone.now() + timedelta(days=10)
    remember(acme.member_token, "The office is closed for renovation; work from home.", valid_until=until.isoformat())
    inside = recall(acme.member_token, "Is the office open?", as_of=(timezone.now() + timedelta(days=1)).isoformat())
    assert inside["results"][0]["flags"] == []
    after = recall(acme.member_token, "Is the office open?", as_of=(until + timedelta(days=1)).isoformat())
    assert after["results"][0]["flags"] == ["expired"]
