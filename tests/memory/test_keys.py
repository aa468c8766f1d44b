"""Keyed memories (docs/API.md "Keyed memories"): a write of a namespace and key replaces the key's live holder as a
declared supersede, with every guardrail; the feed, recall and the namespace listing read by namespace."""
import pytest

from hygiene.judge import Judgement, get_judge
from hygiene.services import Candidate, decide_pair
from memory import services
from memory.models import Link, Memory, Review
from tenants import rls
from tenants.auth import load_principal
from tests.support.memories import at_once, remember_in_process
from tests.support.tenants import build_tenant
from tests.support.watchers import mint_watcher

PREFS = ["users", "u-1", "prefs"]


def put(remember, token, content, key="food", namespace=PREFS, expect=201, **body):
    return remember(token, content, expect=expect, namespace=namespace, key=key, **body)


def feed(api, token, query: str) -> list[dict]:
    response = api(token).get(f"/api/v1/memories?{query}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_keyed_memory_carries_its_namespace_and_key(remember, acme):
    memory = put(remember, acme.member_token, "Likes pizza", metadata={"value": {"likes": "pizza"}})["memory"]
    assert (memory["namespace"], memory["key"], memory["metadata"]) == (PREFS, "food", {"value": {"likes": "pizza"}})
    assert memory["key_since"] == memory["created_at"]
    plain = remember(acme.member_token, "An ordinary note")["memory"]
    assert (plain["namespace"], plain["key"], plain["key_since"]) == (None, None, None)


def test_writing_a_key_again_supersedes_its_holder_with_origin_key(api, remember, acme):
    first = put(remember, acme.member_token, "Likes pizza")
    second = put(remember, acme.member_token, "Likes sushi now")
    old, new = first["memory"]["id"], second["memory"]["id"]
    assert second["superseded"] == [old] and second["similar_existing"] is None and second["hint"] is None
    # The item's creation time travels with the chain, so a key-value client dates it from the live version alone.
    assert second["memory"]["key_since"] == first["memory"]["created_at"] < second["memory"]["created_at"]
    detail = api(acme.member_token).get(f"/api/v1/memories/{new}").json()
    assert [m["id"] for m in detail["chain"]] == [old, new]
    link = next(link for link in detail["links"] if link["dst"] == old)
    assert (link["type"], link["origin"], link["retired_dst"]) == ("supersedes", "key", True)
    retired = api(acme.member_token).get(f"/api/v1/memories/{old}").json()["memory"]
    assert (retired["status"], retired["superseded_by"]) == ("superseded", new)
    # The writer declared what it replaces by the key itself: nothing for the judge to review.
    with rls.tenant_scope(acme.scope):
        assert not Review.objects.filter(memory_id__in=[old, new]).exists()


def test_the_same_value_again_is_absorbed_and_a_new_value_elsewhere_is_a_new_version(remember, acme):
    first = put(remember, acme.member_token, "Likes pizza", metadata={"value": {"likes": "pizza", "n": 1}})
    again = put(remember, acme.member_token, "Likes  pizza", expect=200, metadata={"value": {"likes": "pizza", "n": 1}})
    assert (again["created"], again["dedup"], again["superseded"]) == (False, "exact", [])
    assert again["memory"]["id"] == first["memory"]["id"] and again["memory"]["status"] == "live"
    # Same content, another value in a field the content leaves out: a new version, not a lost write.
    changed = put(remember, acme.member_token, "Likes pizza", metadata={"value": {"likes": "pizza", "n": 2}})
    assert changed["created"] is True and changed["superseded"] == [first["memory"]["id"]]


def test_keys_and_namespaces_are_separate_facts_even_with_the_same_content(api, remember, acme):
    a = put(remember, acme.member_token, "Likes pizza", key="food")
    b = put(remember, acme.member_token, "Likes pizza", key="snack")
    c = put(remember, acme.member_token, "Likes pizza", key="food", namespace=["users", "u-2", "prefs"])
    plain = remember(acme.member_token, "Likes pizza")
    ids = {a["memory"]["id"], b["memory"]["id"], c["memory"]["id"], plain["memory"]["id"]}
    assert len(ids) == 4 and all(r["superseded"] == [] for r in (a, b, c, plain))
    assert len(feed(api, acme.member_token, "limit=50")) == 4


def test_a_watcher_writes_a_new_key_but_cannot_replace_a_holder(api, remember, visible_count, acme):
    watcher = mint_watcher(api, acme.member_token)[0]
    provisional = put(remember, watcher, "Likes tea", key="drink")["memory"]
    assert provisional["provenance"]["authoritative"] is False
    put(remember, acme.member_token, "Likes pizza")
    before = visible_count(acme.member_token)
    refused = api(watcher).post("/api/v1/memories", {"content": "Likes sushi", "namespace": PREFS, "key": "food"},
                                format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "supersede_forbidden"
    assert visible_count(acme.member_token) == before
    # An authoritative writer replaces the watcher's provisional holder like any other.
    assert put(remember, acme.member_token, "Likes coffee", key="drink")["superseded"] == [provisional["id"]]


def test_a_key_held_by_a_memory_the_caller_cannot_see_is_refused_without_its_id(api, remember, visible_count, acme):
    hidden = put(remember, acme.admin_token, "Admin's private preference", scope="personal")["memory"]
    before = visible_count(acme.member_token)
    refused = api(acme.member_token).post(
        "/api/v1/memories", {"content": "Likes sushi", "namespace": PREFS, "key": "food"}, format="json")
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["code"] == "target_invisible" and error["details"] == {"namespace": PREFS, "key": "food"}
    assert hidden["id"] not in refused.content.decode()
    assert visible_count(acme.member_token) == before
    assert api(acme.admin_token).get(f"/api/v1/memories/{hidden['id']}").json()["memory"]["status"] == "live"


def test_a_key_is_not_shared_across_organizations(remember, acme, globex):
    put(remember, acme.member_token, "Acme likes pizza")
    other = put(remember, globex.member_token, "Globex likes sushi")
    assert other["created"] is True and other["superseded"] == []


def test_a_project_holder_is_not_replaced_by_a_personal_memory(api, remember, visible_count, acme):
    put(remember, acme.member_token, "The team likes pizza", project="web")
    before = visible_count(acme.member_token)
    refused = api(acme.member_token).post("/api/v1/memories", {
        "content": "I like sushi", "namespace": PREFS, "key": "food", "scope": "personal"}, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "successor_less_visible"
    assert visible_count(acme.member_token) == before


def test_an_org_that_requires_reasons_requires_one_for_a_key_too(api, remember, acme):
    old = put(remember, acme.member_token, "Likes pizza")["memory"]["id"]
    api(acme.admin_token).post("/api/v1/org/settings", {"require_supersede_reason": True}, format="json")
    refused = api(acme.member_token).post(
        "/api/v1/memories", {"content": "Likes sushi", "namespace": PREFS, "key": "food"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "reason_required" and refused.json()["error"]["details"]["dst"] == [old]
    # Declaring the holder with a reason is the way through: that link is the writer's own declaration.
    written = put(remember, acme.member_token, "Likes sushi",
                  links=[{"type": "supersedes", "dst": old, "reason": "tried it"}])
    assert written["superseded"] == [old]
    with rls.tenant_scope(acme.scope):
        link = Link.objects.get(dst_id=old, retired_dst=True)
    assert (link.origin, link.reason) == ("declared", "tried it")


def test_restoring_an_older_version_while_the_key_is_held_is_refused(api, remember, acme):
    old = put(remember, acme.member_token, "Likes pizza")["memory"]["id"]
    new = put(remember, acme.member_token, "Likes sushi")["memory"]["id"]
    refused = api(acme.member_token).post(f"/api/v1/memories/{old}/restore", {}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "key_taken"
    assert api(acme.member_token).get(f"/api/v1/memories/{old}").json()["memory"]["status"] == "superseded"
    assert api(acme.member_token).post(f"/api/v1/memories/{new}/forget", {}, format="json").status_code == 200
    restored = api(acme.member_token).post(f"/api/v1/memories/{old}/restore", {}, format="json")
    assert restored.status_code == 200 and restored.json()["memory"]["status"] == "live"
    # Forgotten and written again, a key starts a new chain.
    api(acme.member_token).post(f"/api/v1/memories/{old}/forget", {}, format="json")
    fresh = put(remember, acme.member_token, "Likes ramen")
    assert fresh["superseded"] == [] and fresh["memory"]["key_since"] == fresh["memory"]["created_at"]


def test_the_feed_filters_by_exact_namespace_key_and_prefix(api, remember, acme):
    v1 = put(remember, acme.member_token, "Likes pizza")["memory"]["id"]
    v2 = put(remember, acme.member_token, "Likes sushi")["memory"]["id"]
    other = put(remember, acme.member_token, "Tea", key="drink", namespace=["users", "u-1", "prefs", "old"])
    put(remember, acme.member_token, "Elsewhere", key="food", namespace=["teams", "t-1"])
    remember(acme.member_token, "No namespace")
    exact = "namespace=users&namespace=u-1&namespace=prefs"
    assert [m["id"] for m in feed(api, acme.member_token, f"{exact}&key=food")] == [v2]
    assert [m["id"] for m in feed(api, acme.member_token, f"{exact}&key=food&lifecycle=all")] == [v2, v1]
    assert [m["id"] for m in feed(api, acme.member_token, exact)] == [v2]
    under = feed(api, acme.member_token, "namespace_prefix=users&namespace_prefix=u-1")
    assert [m["id"] for m in under] == [other["memory"]["id"], v2]
    assert len(feed(api, acme.member_token, "key=food")) == 2  # a key alone: in any namespace
    bad = api(acme.member_token).get("/api/v1/memories?namespace_prefix=" + "x" * 201)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"


def test_recall_stays_inside_a_namespace_prefix(remember, recall, acme):
    inside = put(remember, acme.member_token, "The user prefers dark mode in the editor.", key="theme")["memory"]
    remember(acme.member_token, "The user prefers light mode in the editor.")
    put(remember, acme.member_token, "Prefers dark mode too.", key="theme", namespace=["users", "u-2", "prefs"])
    results = recall(acme.member_token, "editor colour mode", namespace_prefix=["users", "u-1"])["results"]
    assert [r["memory"]["id"] for r in results] == [inside["id"]]
    assert recall(acme.member_token, "editor", namespace_prefix=["nobody"])["results"] == []


def test_namespaces_lists_live_visible_namespaces_with_prefix_suffix_depth_and_paging(api, remember, acme):
    for index, namespace in enumerate((["a", "b", "c"], ["a", "b", "d"], ["a", "x"], ["b", "b"], ["a", "b", "c"])):
        remember(acme.member_token, f"note {index}", namespace=namespace)
    gone = remember(acme.member_token, "retired", namespace=["z"])["memory"]["id"]
    api(acme.member_token).post(f"/api/v1/memories/{gone}/forget", {}, format="json")
    remember(acme.admin_token, "admin's own", namespace=["secret"], scope="personal")

    def listing(query: str = "") -> list:
        response = api(acme.member_token).get(f"/api/v1/namespaces?{query}")
        assert response.status_code == 200, response.content
        return response.json()["results"]

    assert listing() == [["a", "b", "c"], ["a", "b", "d"], ["a", "x"], ["b", "b"]]
    assert listing("prefix=a&prefix=b") == [["a", "b", "c"], ["a", "b", "d"]]
    assert listing("prefix=*&prefix=b") == [["a", "b", "c"], ["a", "b", "d"], ["b", "b"]]
    assert listing("suffix=b") == [["b", "b"]]
    assert listing("suffix=*&suffix=d") == [["a", "b", "d"]]
    assert listing("max_depth=2") == [["a", "b"], ["a", "x"], ["b", "b"]]
    assert listing("max_depth=1") == [["a"], ["b"]]
    assert listing("limit=2&offset=1") == [["a", "b", "d"], ["a", "x"]]
    assert listing("max_depth=1000&offset=3") == [["b", "b"]]
    for bad in ("limit=0", "limit=1001", "offset=-1", "max_depth=0", "limit=x", "offset=" + "9" * 20,
                "max_depth=" + "9" * 20, "prefix=" + "x" * 201):
        response = api(acme.member_token).get(f"/api/v1/namespaces?{bad}")
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid", bad


@pytest.mark.parametrize("body, field", [
    ({"namespace": []}, "namespace"),
    ({"namespace": [""]}, "namespace"),
    ({"namespace": ["x"] * 11}, "namespace"),
    ({"namespace": ["x" * 201]}, "namespace"),
    ({"namespace": "users"}, "namespace"),
    ({"namespace": ["users", 5]}, "namespace"),
    ({"key": ""}, "key"),
    ({"key": "k" * 513}, "key"),
    ({"key": 7}, "key"),
])
def test_a_bad_namespace_or_key_is_refused_and_stores_nothing(api, visible_count, acme, body, field):
    response = api(acme.member_token).post("/api/v1/memories", {"content": "x", **body}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["message"].startswith(field), error
    assert visible_count(acme.member_token) == 0


def test_the_judge_never_retires_a_memory_that_holds_a_key(remember, acme):
    keyed = put(remember, acme.member_token, "The deploy window is Friday 14:00.", key="deploy", kind="fact")
    newer = remember(acme.member_token, "The deploy window is now Friday 15:00.", kind="fact")["memory"]["id"]
    candidate = Candidate(keyed["memory"]["id"], keyed["memory"]["content"], "fact", authoritative=True)
    with rls.tenant_scope(acme.scope):
        principal = load_principal(acme.scope, token_id=None)
        decision = decide_pair(newer, candidate, Judgement("supersedes", 0.99, "an update"), get_judge(), 5.0,
                               principal)
        assert decision == "conflict"  # only a write of its key replaces it; a human decides the pair
        assert Memory.objects.get(pk=candidate.id).status == "live"


def test_fifty_parallel_writers_of_one_key_leave_one_chain(committed):
    writers = 50
    acme = build_tenant("acme")
    scope = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=None)
    contents = [f"The build server is ci-{index}." for index in range(writers)]
    vectors = [services.memory_embedding(content) for content in contents]

    def write(index: int):
        with rls.tenant_scope(scope):
            return remember_in_process(principal, contents[index], vectors[index], namespace=["ci"], key="build-server")

    results = at_once(writers, write)
    assert not [r for r in results if isinstance(r, Exception)], results
    with rls.tenant_scope(scope):
        versions = {m.id: m for m in Memory.objects.filter(key="build-server")}
        live = [m for m in versions.values() if m.status == "live"]
        assert len(versions) == writers and len(live) == 1
        # One linear chain: every write but the first replaced exactly the version before it.
        assert sorted(len(r.superseded) for r in results) == [0] + [1] * (writers - 1)
        successors = [m.superseded_by_id for m in versions.values() if m.status == "superseded"]
        assert len(set(successors)) == writers - 1 and live[0].id in successors
        assert Link.objects.filter(origin="key", retired_dst=True).count() == writers - 1
