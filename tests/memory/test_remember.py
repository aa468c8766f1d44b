"""remember: the object, the dedup cascade, declared supersedes with every guardrail, similar_existing."""
import random
import string

import django_rq
import pytest
from django.db import connection

from tests.support.memories import supersedes

MISSING_ID = "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"
MEMORY_KEYS = {
    "id", "content", "kind", "scope", "project", "owner", "status", "superseded_by", "invalidated_at",
    "invalidated_reason", "provenance", "valid_from", "valid_until", "expired", "loop", "closed_by", "source",
    "metadata", "created_at", "namespace", "key", "key_since",
}


def test_remember_stores_the_memory_object(remember, acme):
    body = remember(acme.member_token, "Deploys go through script deploy.sh", kind="fact", session_id="s1",
                    metadata={"ticket": "OPS-1"})
    memory = body["memory"]
    assert set(memory) == MEMORY_KEYS
    assert memory["id"].startswith("mem_") and len(memory["id"]) == 30
    assert (memory["kind"], memory["scope"], memory["project"], memory["status"]) == ("fact", "project", "web", "live")
    assert memory["owner"] == {"id": str(acme.member.id), "email": "member@acme.test"}
    assert memory["provenance"]["writer"] == "agent" and memory["provenance"]["authoritative"] is True
    assert memory["provenance"]["session_id"] == "s1" and memory["provenance"]["token"].startswith("tok_")
    assert memory["metadata"] == {"ticket": "OPS-1"} and memory["expired"] is False and memory["loop"] is None
    assert (body["created"], body["dedup"], body["absorbed_into"]) == (True, None, None)
    assert body["superseded"] == [] and body["skipped"] == [] and body["similar_existing"] == []


def test_scope_defaults_to_personal_without_any_project(remember, acme):
    memory = remember(acme.admin_token, "I prefer short answers", kind="preference")["memory"]
    assert (memory["scope"], memory["project"]) == ("personal", None)
    explicit = remember(acme.admin_token, "Ops runbook lives in the wiki", project="ops")["memory"]
    assert (explicit["scope"], explicit["project"]) == ("project", "ops")


def test_tasks_and_open_questions_start_as_open_loops(remember, acme):
    assert remember(acme.member_token, "Rotate the API keys", kind="task")["memory"]["loop"] == "open"
    assert remember(acme.member_token, "Who owns billing?", kind="open-question")["memory"]["loop"] == "open"


def test_exact_duplicate_is_absorbed_whatever_the_session_and_whitespace(remember, visible_count, acme):
    first = remember(acme.member_token, "The cache TTL is 300 seconds.", session_id="a")
    again = remember(acme.member_token, "  The cache   TTL is 300\nseconds. ", expect=200, session_id="b")
    assert (again["created"], again["dedup"]) == (False, "exact")
    assert again["absorbed_into"] == first["memory"]["id"] == again["memory"]["id"]
    assert visible_count(acme.member_token) == 1


def test_near_verbatim_restatement_is_absorbed_only_in_the_same_session(remember, visible_count, acme):
    first = remember(acme.member_token, "We use Postgres 16 for the main database.", session_id="s1")
    other_session = remember(acme.member_token, "We use Postgres 16 for our main database.", session_id="s2")
    assert other_session["created"] is True
    same_session = remember(acme.member_token, "We use Postgres 16 for our main database!", expect=200, session_id="s1")
    assert same_session["dedup"] == "near_verbatim" and same_session["absorbed_into"] == first["memory"]["id"]


def test_a_changed_number_is_never_absorbed_as_near_verbatim(remember, acme):
    remember(acme.member_token, "The deploy window is Friday 14:00 UTC.", session_id="s1")
    update = remember(acme.member_token, "The deploy window is Friday 15:00 UTC.", session_id="s1")
    assert update["created"] is True and update["dedup"] is None


def test_declared_supersede_retires_the_target_atomically(remember, api, acme):
    old = remember(acme.member_token, "Deploy window is Monday 10:00 UTC.")["memory"]
    new = remember(acme.member_token, "Deploy window is Friday 14:00 UTC (moved from Monday).",
                   links=supersedes(old["id"], reason="moved by release team"))
    assert new["superseded"] == [old["id"]] and new["skipped"] == []
    assert new["similar_existing"] is None and new["hint"] is None
    retired = api(acme.member_token).get(f"/api/v1/memories/{old['id']}").json()
    assert retired["memory"]["status"] == "superseded"
    assert retired["memory"]["superseded_by"] == new["memory"]["id"]
    assert retired["memory"]["invalidated_at"] and retired["memory"]["invalidated_reason"] == "moved by release team"
    link = retired["links"][0]
    assert (link["src"], link["dst"], link["type"], link["reason"]) == (
        new["memory"]["id"], old["id"], "supersedes", "moved by release team")
    assert [m["id"] for m in retired["chain"]] == [old["id"], new["memory"]["id"]]
    assert "superseded" in [e["action"] for e in retired["events"]]


def test_missing_dead_and_self_targets_are_skipped_and_the_write_succeeds(remember, acme):
    old = remember(acme.member_token, "Billing runs on Stripe.")["memory"]
    newer = remember(acme.member_token, "Billing runs on Adyen.", links=supersedes(old["id"]))["memory"]
    body = remember(acme.member_token, "Billing runs on Adyen since March.", links=supersedes(MISSING_ID, old["id"]))
    assert body["created"] is True and body["superseded"] == []
    assert body["skipped"] == [{"dst": MISSING_ID, "reason": "missing"}, {"dst": old["id"], "reason": "dead"}]
    absorbed = remember(acme.member_token, "Billing runs on Adyen.", expect=200, links=supersedes(newer["id"]))
    assert absorbed["skipped"] == [{"dst": newer["id"], "reason": "self"}]
    assert absorbed["memory"]["status"] == "live"


def test_dedup_composes_with_supersede_the_absorbing_memory_is_the_successor(remember, api, acme):
    old = remember(acme.member_token, "Staging runs on cluster eu-2.")["memory"]
    current = remember(acme.member_token, "Staging runs on cluster eu-3.")["memory"]
    # The writer saw similar_existing and re-sends the new fact with the declaration: it is absorbed, and applies.
    again = remember(acme.member_token, "Staging runs on cluster eu-3.", expect=200, links=supersedes(old["id"]))
    assert again["absorbed_into"] == current["id"] and again["superseded"] == [old["id"]]
    assert api(acme.member_token).get(f"/api/v1/memories/{old['id']}").json()["memory"]["superseded_by"] == current["id"]


def test_invisible_targets_fail_the_whole_write_with_403(remember, api, visible_count, acme, globex):
    admins_private = remember(acme.admin_token, "My personal API sandbox key rotates weekly", scope="personal")
    ops_memory = remember(acme.admin_token, "Ops pager rotation is weekly", project="ops")
    other_org = remember(globex.member_token, "Globex deploys on Tuesday")
    before = visible_count(acme.member_token)
    for target in (admins_private, ops_memory, other_org):
        response = remember(acme.member_token, "Something new", expect=403, links=supersedes(target["memory"]["id"]))
        assert response["error"]["code"] == "target_invisible"
    assert visible_count(acme.member_token) == before
    for token, target in ((acme.admin_token, admins_private), (acme.admin_token, ops_memory),
                          (globex.member_token, other_org)):
        assert api(token).get(f"/api/v1/memories/{target['memory']['id']}").json()["memory"]["status"] == "live"


def test_watchers_cannot_supersede_and_nothing_is_stored(remember, api, visible_count, acme):
    old = remember(acme.member_token, "The office opens at 9.")["memory"]
    watcher = api(acme.member_token).post("/api/v1/tokens", {"name": "w", "writer": "watcher", "project": "web"},
                                          format="json").json()["token"]
    provisional = remember(watcher, "Overheard: the office might open at 8.")["memory"]
    assert provisional["provenance"] == {**provisional["provenance"], "writer": "watcher", "authoritative": False}
    before = visible_count(acme.member_token)
    refused = remember(watcher, "The office opens at 8.", expect=403, links=supersedes(old["id"]))
    assert refused["error"]["code"] == "supersede_forbidden"
    assert visible_count(acme.member_token) == before


def test_more_than_ten_supersedes_is_refused(remember, visible_count, acme):
    ids = [remember(acme.member_token, f"Fact number {i} about the release train")["memory"]["id"] for i in range(11)]
    response = remember(acme.member_token, "All release facts in one", expect=400, links=supersedes(*ids))
    assert response["error"]["code"] == "too_many_supersedes"
    # The contract counts declared links: eleven naming one target are eleven.
    repeated = remember(acme.member_token, "One release fact, said eleven times", expect=400,
                        links=supersedes(*[ids[0]] * 11))
    assert repeated["error"]["code"] == "too_many_supersedes"
    assert visible_count(acme.member_token, "live") == 11


def test_reason_is_required_when_the_org_says_so(remember, api, visible_count, acme):
    old = remember(acme.member_token, "Lint with flake8.")["memory"]
    api(acme.admin_token).post("/api/v1/org/settings", {"require_supersede_reason": True}, format="json")
    refused = remember(acme.member_token, "Lint with ruff.", expect=400, links=supersedes(old["id"]))
    assert refused["error"]["code"] == "reason_required"
    assert visible_count(acme.member_token) == 1
    ok = remember(acme.member_token, "Lint with ruff.", links=supersedes(old["id"], reason="flake8 is too slow"))
    assert ok["superseded"] == [old["id"]]


@pytest.mark.parametrize("kind", ["task", "open-question"])
def test_superseding_a_loop_closes_it(remember, api, acme, kind):
    loop = remember(acme.member_token, "Decide the on-call tool", kind=kind)["memory"]
    done = remember(acme.member_token, "We picked PagerDuty for on-call", kind="decision", links=supersedes(loop["id"]))
    closed = api(acme.member_token).get(f"/api/v1/memories/{loop['id']}").json()["memory"]
    assert (closed["loop"], closed["closed_by"]) == ("closed", done["memory"]["id"])


def test_only_undeclared_writes_are_queued_for_review(remember, acme, django_capture_on_commit_callbacks):
    from memory.models import Review
    from tenants import rls

    queue = django_rq.get_queue("default")
    queue.empty()
    with django_capture_on_commit_callbacks(execute=True):
        old = remember(acme.member_token, "Logs are kept for 30 days.")["memory"]
    with rls.tenant_scope(acme.scope):
        review = Review.objects.get(memory_id=old["id"])
    assert [job.args for job in queue.get_jobs()] == [(review.id,)]
    with django_capture_on_commit_callbacks(execute=True):
        remember(acme.member_token, "Logs are kept for 90 days.", links=supersedes(old["id"]))
        remember(acme.member_token, "Logs are kept for 90 days.", expect=200)  # absorbed: nothing new to review
    assert queue.count == 1


def test_a_queue_outage_never_fails_the_write(remember, acme, monkeypatch, django_capture_on_commit_callbacks):
    from django_rq.connection_utils import get_redis_connection
    from rq import Queue

    # Connected the way the app connects (django_rq): a plain redis.Redis retries a refused connection for 4 s.
    dead = Queue("default", connection=get_redis_connection({"URL": "redis://127.0.0.1:1/0"}))
    monkeypatch.setattr("memory.outbox.review_queue", lambda: dead)
    with django_capture_on_commit_callbacks(execute=True):
        body = remember(acme.member_token, "Written while Redis is down.")
    assert body["created"] is True


def test_similar_existing_is_the_callers_own_nearest_live_memories(remember, acme):
    member = acme.member_token
    for i in range(12):
        remember(member, f"Deploy checklist step {i}: run the smoke tests on staging")
    remember(member, "Before any deploy, the smoke tests on staging must pass", scope="personal")
    remember(acme.admin_token, "Deploys need two approvals", project="web")  # a teammate's: never listed
    body = remember(member, "Before deploying, the staging smoke tests must pass")
    similar = body["similar_existing"]
    assert len(similar) == 10
    assert [s["distance"] for s in similar] == sorted(s["distance"] for s in similar)
    assert all("approvals" not in s["content_preview"] for s in similar)
    assert "personal" in {s["scope"] for s in similar}
    assert set(similar[0]) == {"id", "kind", "scope", "project", "content_preview", "distance", "age_seconds"}
    assert body["hint"] and "supersedes" in body["hint"]


def test_similar_existing_never_shows_another_project(remember, acme):
    remember(acme.admin_token, "The ops dashboard lives at grafana.internal", project="ops")
    body = remember(acme.admin_token, "The web dashboard lives at grafana.internal/web", project="web")
    assert body["similar_existing"] == [] and body["hint"] is None


def test_writing_into_a_project_you_do_not_belong_to_is_404(remember, visible_count, acme):
    response = remember(acme.member_token, "Sneaky", expect=404, project="ops")
    assert response["error"]["code"] == "not_found"
    assert remember(acme.member_token, "x", expect=404, project="no-such")["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({"content": "x" * 16001}, 413, "content_too_large"),
        ({"content": "ok", "metadata": {"blob": "y" * 9000}}, 413, "metadata_too_large"),
        ({"content": ""}, 400, "invalid"),
        ({"kind": "fact"}, 400, "invalid"),
        ({"content": "ok", "kind": "gossip"}, 400, "invalid"),
        ({"content": "ok", "links": [{"type": "replaces", "dst": MISSING_ID}]}, 400, "invalid"),
        ({"content": "ok", "links": [{"type": "supersedes", "dst": "not-an-id"}]}, 400, "invalid"),
        ({"content": "ok", "links": "nope"}, 400, "invalid"),
        ({"content": "ok", "valid_from": "2026-05-01T00:00:00Z", "valid_until": "2026-04-01T00:00:00Z"}, 400, "invalid"),
        ({"content": "ok", "valid_from": "yesterday"}, 400, "invalid"),
        ({"content": "ok", "metadata": [1, 2]}, 400, "invalid"),
        ({"content": "ok", "scope": "galaxy"}, 400, "invalid"),
    ],
)
def test_bad_input_is_refused_with_the_field_named_and_stores_nothing(api, visible_count, acme, body, status, code):
    response = api(acme.member_token).post("/api/v1/memories", body, format="json")
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    if code == "invalid":
        assert response.json()["error"]["details"]["fields"]
    assert visible_count(acme.member_token) == 0


def test_the_exact_16000_character_limit_is_accepted(remember, acme):
    assert remember(acme.member_token, "z" * 16000)["created"] is True


def test_the_largest_incompressible_write_fits_beside_its_inline_embedding(remember, acme):
    # The embedding is stored inline (PLAIN, memory migration 0005): the row must still fit with the largest content
    # and metadata the contract allows, in text that does not compress.
    rng = random.Random(5)
    words = ["".join(rng.choices(string.ascii_letters + string.digits, k=rng.randint(2, 12))) for _ in range(3000)]
    content = " ".join(words)[:16000]
    metadata = {"blob": "".join(rng.choices(string.ascii_letters, k=8000))}
    assert remember(acme.member_token, content, metadata=metadata)["created"] is True
    with connection.cursor() as cursor:
        cursor.execute("SELECT attstorage FROM pg_attribute WHERE attrelid = 'memory_memory'::regclass"
                       " AND attname = 'embedding'")
        assert cursor.fetchone()[0] == "p"


def test_a_forgotten_target_is_dead_too(remember, api, acme):
    old = remember(acme.member_token, "The wiki lives on Confluence.")["memory"]["id"]
    api(acme.member_token).post(f"/api/v1/memories/{old}/forget", {}, format="json")
    body = remember(acme.member_token, "The wiki lives on Notion.", links=supersedes(old))
    assert body["skipped"] == [{"dst": old, "reason": "dead"}] and body["superseded"] == []


def test_similar_existing_has_exactly_min_ten_candidates(remember, acme):
    for text in ("Lint with ruff.", "Format with black.", "Type-check with mypy."):
        remember(acme.member_token, text)
    body = remember(acme.member_token, "Run the test suite with pytest.")
    assert len(body["similar_existing"]) == 3
