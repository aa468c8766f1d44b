"""A watcher token adds, it never takes away: its memory powers (docs/API.md, "Watcher tokens"), through HTTP."""
import pytest

from tests.support.memories import supersedes
from tests.support.watchers import mint_watcher, refused


@pytest.fixture
def watcher(api, acme) -> str:
    """A watcher token of the member, with the member's project `web` as its default."""
    return mint_watcher(api, acme.member_token)[0]


def status_of(api, token: str, memory_id: str) -> str:
    return api(token).get(f"/api/v1/memories/{memory_id}").json()["memory"]["status"]


def test_a_watcher_adds_provisional_memories_links_and_plain_checks(api, remember, acme, watcher):
    fact = remember(acme.member_token, "The staging database is db-stage-2.")["memory"]["id"]
    seen = remember(watcher, "Overheard: staging may move to db-stage-3.", links=[{"type": "relates_to", "dst": fact}])
    assert seen["memory"]["provenance"]["authoritative"] is False and seen["skipped"] == []
    link = api(watcher).post("/api/v1/links", {"src": seen["memory"]["id"], "dst": fact, "type": "supersedes"},
                             format="json")
    assert link.status_code == 201
    check = api(watcher).post(f"/api/v1/memories/{fact}/checks", {"outcome": "fail", "detail": "db-stage-2 is down"},
                              format="json")
    assert check.status_code == 201 and check.json()["check"]["corrected_by"] is None
    assert status_of(api, acme.member_token, fact) == "live"  # a plain edge and a check retire nothing


def test_a_watcher_cannot_name_a_correction_in_a_check(api, remember, acme, watcher):
    fact = remember(acme.member_token, "The VPN gateway is vpn1.acme.test.")["memory"]["id"]
    correction = remember(acme.member_token, "The VPN gateway is vpn2.acme.test.")["memory"]["id"]
    response = api(watcher).post(f"/api/v1/memories/{fact}/checks",
                                 {"outcome": "fail", "detail": "moved", "corrected_by": correction}, format="json")
    assert refused(response, "supersede_forbidden")
    assert status_of(api, acme.member_token, fact) == "live"
    assert api(acme.member_token).get(f"/api/v1/memories/{fact}").json()["checks"] == []


def test_a_watcher_cannot_forget_anything_not_even_its_own_memory(api, remember, acme, watcher):
    agents = remember(acme.member_token, "Deploys happen on Tuesdays.")["memory"]["id"]
    own = remember(watcher, "Overheard: deploys might move to Wednesdays.")["memory"]["id"]
    for memory_id in (agents, own):
        response = api(watcher).post(f"/api/v1/memories/{memory_id}/forget", {"reason": "stale"}, format="json")
        assert refused(response), response.content
        assert status_of(api, acme.member_token, memory_id) == "live"
    assert api(acme.member_token).post(f"/api/v1/memories/{own}/forget", {}, format="json").status_code == 200
    # Refused before any lookup: a missing memory answers the same, so nothing is learnt about what exists.
    missing = "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"
    assert refused(api(watcher).post(f"/api/v1/memories/{missing}/forget", {}, format="json"))


def test_a_watcher_cannot_restore_a_humans_supersede_or_a_forget(api, remember, acme, watcher):
    old = remember(acme.member_token, "The on-call rota changes on Mondays.")["memory"]["id"]
    new = remember(acme.admin_token, "The on-call rota changes on Fridays.", project="web",
                   links=supersedes(old, reason="moved"))["memory"]["id"]
    gone = remember(acme.member_token, "The office plant needs water daily.")["memory"]["id"]
    assert api(acme.member_token).post(f"/api/v1/memories/{gone}/forget", {}, format="json").status_code == 200
    for memory_id, status in ((old, "superseded"), (gone, "forgotten")):
        response = api(watcher).post(f"/api/v1/memories/{memory_id}/restore", {}, format="json")
        assert refused(response), response.content
        assert status_of(api, acme.member_token, memory_id) == status
    assert api(acme.member_token).get(f"/api/v1/memories/{new}").json()["memory"]["status"] == "live"


def _put(api, token: str, content: str, expect: int, **body) -> dict:
    response = api(token).post("/api/v1/sources", {"source_id": "status-page", "content": content, **body},
                               format="json")
    assert response.status_code == expect, response.content
    return response.json()


def test_a_watchers_source_version_is_provisional_and_retires_nothing(api, acme, watcher):
    v1 = _put(api, acme.member_token, "All systems operational.", 201)["memory"]
    seen = _put(api, watcher, "Degraded performance on the EU cluster.", 201)
    v2 = seen["memory"]
    assert v2["provenance"] == {**v2["provenance"], "writer": "source", "authoritative": False}
    assert v2["source"]["version"] == "2" and seen["superseded"] is None
    assert status_of(api, acme.member_token, v1["id"]) == "live"
    # The disagreement is an open conflict for an authoritative writer to settle; recall shows both, flagged.
    conflict = api(acme.member_token).get("/api/v1/conflicts?status=open").json()["results"]
    pairs = [(c["a"], c["b"], c["relation"], c["judge"]) for c in conflict]
    assert pairs == [(v1["id"], v2["id"], "supersedes", "source")]
    assert seen["conflict"] == conflict[0]["id"]
    hits = api(acme.member_token).post("/api/v1/recall", {"query": "EU cluster degraded performance"},
                                       format="json").json()["results"]
    flags = {r["memory"]["id"]: r["flags"] for r in hits}
    assert "provisional" in flags[v2["id"]] and "in_conflict" in flags[v2["id"]] and "in_conflict" in flags[v1["id"]]
    # The same report again, or the authoritative content, changes nothing; the current version is still v1.
    assert _put(api, watcher, "Degraded performance on the EU cluster.", 200)["memory"]["id"] == v2["id"]
    assert _put(api, watcher, "All systems operational.", 200)["memory"]["id"] == v1["id"]
    assert _put(api, acme.member_token, "All systems operational.", 200)["memory"]["id"] == v1["id"]
    versions = api(acme.member_token).get("/api/v1/sources/status-page/versions").json()["results"]
    assert [v["id"] for v in versions] == [v2["id"], v1["id"]]  # the current version last


def test_an_authoritative_source_version_retires_the_provisional_ones_too(api, acme, watcher):
    v1 = _put(api, acme.member_token, "All systems operational.", 201)["memory"]
    v2 = _put(api, watcher, "Degraded performance on the EU cluster.", 201)["memory"]
    v3 = _put(api, acme.member_token, "Degraded performance on the EU cluster.", 201)
    assert v3["memory"]["provenance"]["authoritative"] is True and v3["superseded"] == v1["id"]
    versions = api(acme.member_token).get("/api/v1/sources/status-page/versions").json()["results"]
    assert [(v["id"], v["status"], v["superseded_by"]) for v in versions] == [
        (v1["id"], "superseded", v3["memory"]["id"]), (v2["id"], "superseded", v3["memory"]["id"]),
        (v3["memory"]["id"], "live", None),
    ]


def test_a_watchers_first_version_is_provisional_until_an_authoritative_writer_confirms_it(api, acme, watcher):
    first = _put(api, watcher, "The changelog lists 4.2 as latest.", 201)
    assert first["memory"]["provenance"]["authoritative"] is False and first["conflict"] is None
    confirmed = _put(api, acme.member_token, "The changelog lists 4.2 as latest.", 201)
    assert confirmed["memory"]["provenance"]["authoritative"] is True
    assert confirmed["superseded"] == first["memory"]["id"]
