"""The privacy purge (docs/API.md, "Privacy purge"): the one deletion, for org admins, through HTTP.

Afterwards the memory and what derives from it are gone everywhere the API reads (detail, history, recall, feed,
stats, sources, conflicts), the audit rows stay redacted, and the app role still cannot DELETE a memory itself.
"""
import json
import threading

import pytest
from django.db import DatabaseError, connection, connections
from django.utils import timezone

from memory import purge as purge_service
from memory import services
from memory.models import Conflict, Link, Memory, Verdict
from tenants import rls
from tenants.auth import load_principal
from tests.support.tenants import build_tenant
from tests.support.memories import WRITERS, remember_in_process
from tests.support.memories import supersedes
from tests.support.watchers import mint_watcher, refused

SECRET = "The VPN pre-shared key is hunter2-alpha-7. Rotate it every quarter."  # two sentences: two passages


def purge(api, token: str, memory_id: str, **body):
    return api(token).post(f"/api/v1/memories/{memory_id}/purge", body, format="json")


def post(api, token: str, path: str, body: dict | None = None):
    response = api(token).post(path, body or {}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def owner_rows(sql: str, params: list | None = None) -> list[tuple]:
    """As the owner role, past RLS: what is really left in the tables (needs committed data)."""
    with connections["owner"].cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def recalled_ids(api, token: str, query: str, **body) -> list[str]:
    response = api(token).post("/api/v1/recall", {"query": query, "k": 50, **body}, format="json")
    assert response.status_code == 200, response.content
    return [hit["memory"]["id"] for hit in response.json()["results"]]


def stats(api, token: str) -> dict:
    return api(token).get("/api/v1/stats").json()


@pytest.mark.slow
def test_a_purged_memory_and_everything_derived_from_it_are_gone(committed, api, remember):
    acme = build_tenant("acme")
    member, admin = acme.member_token, acme.admin_token
    secret = remember(member, SECRET, session_id="s1")["memory"]["id"]
    absorbed = remember(member, SECRET, expect=200, session_id="s1")  # its 'absorbed' event holds the content
    assert absorbed["absorbed_into"] == secret
    other = remember(member, "The VPN gateway is vpn1.acme.test.")["memory"]["id"]
    post(api, member, "/api/v1/links", {"src": other, "dst": secret, "type": "relates_to", "reason": "hunter2 context"})
    post(api, member, f"/api/v1/memories/{secret}/checks", {"outcome": "fail", "detail": "hunter2-alpha-7 rejected"})
    # A predecessor retired by a check that names the secret as its correction.
    predecessor = remember(member, "The VPN key lives in the shared vault.")["memory"]["id"]
    post(api, member, f"/api/v1/memories/{predecessor}/checks",
         {"outcome": "fail", "detail": "the vault entry is gone", "corrected_by": secret})
    with rls.tenant_scope(acme.scope):
        Conflict.objects.create(org=acme.org, a_id=other, b_id=secret, relation="contradicts", confidence=0.8,
                                judge="local:test", rationale="hunter2 vs vpn1")
        Verdict.objects.create(org=acme.org, memory_id=secret, other_id=other, relation="contradicts", confidence=0.8,
                               rationale="hunter2", judge="local:test", prompt_version="t", latency_ms=1.0,
                               decision=Verdict.Decision.CONFLICT)
    before_purge = timezone.now()
    counted = stats(api, member)
    assert len(api(member).get("/api/v1/conflicts").json()["results"]) == 1
    assert secret in recalled_ids(api, member, "VPN pre-shared key")
    assert owner_rows("SELECT count(*) FROM memory_passage WHERE memory_id = %s", [secret]) == [(2,)]

    assert purge(api, admin, secret, reason="a leaked credential").status_code == 204

    for path in ("", "/history"):
        assert api(member).get(f"/api/v1/memories/{secret}{path}").status_code == 404
    for action in ("forget", "restore", "purge"):
        response = api(admin).post(f"/api/v1/memories/{secret}/{action}", {"reason": "again"}, format="json")
        assert response.status_code == 404, (action, response.content)
    for body in ({}, {"include_history": True}, {"as_of": before_purge.isoformat()}):
        assert secret not in recalled_ids(api, member, "VPN pre-shared key hunter2", **body)
    feed = api(admin).get("/api/v1/memories?lifecycle=all&limit=200").json()["results"]
    assert secret not in {m["id"] for m in feed} and {other, predecessor} <= {m["id"] for m in feed}
    after = stats(api, member)
    assert after["memories"] == {**counted["memories"], "live": counted["memories"]["live"] - 1}
    assert after["supersedes"]["check"] == counted["supersedes"]["check"] - 1  # the correction's link is gone
    assert after["conflicts"]["open"] == counted["conflicts"]["open"] - 1
    assert after["judge"]["calls"] == counted["judge"]["calls"] - 1
    assert api(member).get("/api/v1/conflicts").json()["results"] == []

    # What stays: the link's other end, without the link and with the event naming the secret redacted.
    kept = api(member).get(f"/api/v1/memories/{other}").json()
    assert kept["links"] == [] and kept["conflicts"] == []
    assert [(e["action"], e["payload"]) for e in kept["events"]] == [
        ("remembered", {"kind": "note"}), ("linked", {"redacted": True})]
    # The predecessor stays retired (a purge brings nothing back), no longer pointing at the purged successor.
    retired = api(member).get(f"/api/v1/memories/{predecessor}").json()
    assert retired["memory"]["status"] == "superseded" and retired["memory"]["superseded_by"] is None
    assert retired["memory"]["invalidated_reason"] == "Its successor was purged."
    assert [c["corrected_by"] for c in retired["checks"]] == [None] and retired["chain"] == [retired["memory"]]
    assert retired["events"][-1] == {**retired["events"][-1], "action": "superseded", "payload": {"redacted": True}}

    # At the SQL level, as the owner: no row of it and no copy of its content anywhere; its events redacted.
    assert owner_rows("SELECT count(*) FROM memory_memory WHERE id = %s", [secret]) == [(0,)]
    for table, columns in {"memory_event": "payload::text", "memory_link": "reason", "memory_check": "detail",
                           "hygiene_conflict": "rationale", "hygiene_verdict": "rationale",
                           "memory_memory": "content || coalesce(invalidated_reason, '')"}.items():
        assert owner_rows(f"SELECT count(*) FROM {table} WHERE {columns} LIKE '%%hunter2%%'") == [(0,)], table
    for table, column in {"memory_link": "src_id = %s OR dst_id", "memory_check": "memory_id",
                          "hygiene_conflict": "a_id = %s OR b_id", "hygiene_verdict": "memory_id = %s OR other_id",
                          "hygiene_review": "memory_id", "memory_passage": "memory_id"}.items():
        params = [secret] * (column.count("%s") + 1)
        assert owner_rows(f"SELECT count(*) FROM {table} WHERE {column} = %s", params) == [(0,)], table
    events = [(action, json.loads(payload), *who) for action, payload, *who in owner_rows(
        "SELECT action, payload::text, actor_id, token_id FROM memory_event WHERE memory_id = %s ORDER BY id", [secret])]
    assert [action for action, *_ in events] == ["remembered", "absorbed", "checked", "purged"]
    assert all(payload == {"redacted": True} for _, payload, _, _ in events[:-1])
    admin_token_id = api(admin).get("/api/v1/me").json()["token"]["id"]
    assert events[-1][1:] == ({"reason": "a leaked credential"}, acme.admin.id, admin_token_id)


def test_whole_chain_purges_every_version_of_a_source(api, acme):
    versions = [
        post(api, acme.member_token, "/api/v1/sources", {"source_id": "wifi", "content": f"The wifi password is v{n}."})
        ["memory"]["id"] for n in (1, 2, 3)
    ]
    assert len(api(acme.member_token).get("/api/v1/sources/wifi/versions").json()["results"]) == 3
    assert purge(api, acme.admin_token, versions[1], reason="passwords", whole_chain=True).status_code == 204
    for memory_id in versions:
        assert api(acme.member_token).get(f"/api/v1/memories/{memory_id}").status_code == 404
    assert api(acme.member_token).get("/api/v1/sources/wifi/versions").status_code == 404
    assert api(acme.member_token).get("/api/v1/memories?lifecycle=all").json()["results"] == []
    assert stats(api, acme.member_token)["memories"] == {"live": 0, "superseded": 0, "forgotten": 0}


def test_without_whole_chain_the_other_versions_stay(api, remember, acme):
    """The rule of docs/API.md: a purged version's successor stays live; its predecessor stays retired, its
    pointers to the purged one cleared (a closed loop stays closed); restore can bring it back by hand."""
    member = acme.member_token
    v1 = remember(member, "Task: rotate the API keys by Friday.", kind="task")["memory"]["id"]
    v2 = remember(member, "Task: rotate the API keys by Monday.", kind="task", links=supersedes(v1))["memory"]["id"]
    v3 = remember(member, "Task: rotate the API keys by Tuesday.", kind="task", links=supersedes(v2))["memory"]["id"]
    assert purge(api, acme.admin_token, v2, reason="wrong person's task").status_code == 204
    first = api(member).get(f"/api/v1/memories/{v1}").json()
    assert first["memory"] == {**first["memory"], "status": "superseded", "superseded_by": None, "loop": "closed",
                               "closed_by": None}
    assert [m["id"] for m in first["chain"]] == [v1]
    last = api(member).get(f"/api/v1/memories/{v3}").json()
    assert last["memory"]["status"] == "live" and [m["id"] for m in last["chain"]] == [v3] and last["links"] == []
    assert {m["id"] for m in api(member).get("/api/v1/loops?state=closed").json()["results"]} == {v1}
    restored = api(member).post(f"/api/v1/memories/{v1}/restore", {}, format="json")
    assert restored.status_code == 200
    assert (restored.json()["memory"]["status"], restored.json()["memory"]["loop"]) == ("live", "open")


def test_a_purge_that_takes_a_things_open_conflict_queues_the_one_shown_beside_it(api, remember, acme):
    member = acme.member_token
    dana, ivan, priya = (remember(member, f"Checkout is owned by {name}.", kind="fact")["memory"]["id"]
                         for name in ("Dana", "Ivan", "Priya"))
    with rls.tenant_scope(acme.scope):
        Conflict.objects.create(org=acme.org, a_id=dana, b_id=ivan, relation="contradicts", judge="local:test")
        shown = Conflict.objects.create(org=acme.org, a_id=ivan, b_id=priya, relation="contradicts",
                                        judge="local:test", status=Conflict.Status.SHOWN)
    assert purge(api, acme.admin_token, dana, reason="a leaked name").status_code == 204
    queued = api(member).get("/api/v1/conflicts?status=open").json()["results"]
    assert [c["id"] for c in queued] == [shown.id]


def test_only_an_org_admin_with_an_authoritative_token_may_purge(api, remember, acme, globex):
    memory_id = remember(acme.member_token, "The office door code is 4711.")["memory"]["id"]
    admin_watcher = mint_watcher(api, acme.admin_token)[0]
    member_watcher = mint_watcher(api, acme.member_token)[0]
    assert refused(purge(api, acme.member_token, memory_id, reason="mine"), "admin_only")
    assert refused(purge(api, member_watcher, memory_id, reason="x"), "admin_only")
    assert refused(purge(api, admin_watcher, memory_id, reason="x"), "watcher_forbidden")
    cross_org = purge(api, globex.admin_token, memory_id, reason="x")
    assert (cross_org.status_code, cross_org.json()["error"]["code"]) == (404, "not_found")
    for body in ({}, {"reason": "  "}, {"reason": None}, {"reason": "x", "whole_chain": "yes"}):
        response = purge(api, acme.admin_token, memory_id, **body)
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid"), body
    assert api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["memory"]["status"] == "live"


def test_an_admin_cannot_purge_a_memory_they_cannot_see(api, remember, acme):
    personal = remember(acme.member_token, "My own note: call the dentist.", scope="personal")["memory"]["id"]
    assert purge(api, acme.admin_token, personal, reason="x").status_code == 404
    assert api(acme.member_token).get(f"/api/v1/memories/{personal}").status_code == 200


def test_the_app_role_has_no_delete_and_the_function_refuses_all_but_admins_who_see_the_memory(
    api, remember, acme
):
    shared = remember(acme.member_token, "The build cache lives on nfs-3.")["memory"]["id"]
    personal = remember(acme.member_token, "My own note: water the plant.", scope="personal")["memory"]["id"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT has_table_privilege(current_user, 'memory_memory', 'DELETE'),"
                       " has_table_privilege(current_user, 'memory_event', 'UPDATE'),"
                       " has_table_privilege(current_user, 'memory_passage', 'DELETE'),"
                       " has_table_privilege(current_user, 'memory_passage', 'UPDATE')")
        assert cursor.fetchone() == (False, False, False, False)
        cursor.execute("SELECT prosecdef, proconfig, array_to_string(proacl, ',') FROM pg_proc"
                       " WHERE proname = 'zm_purge_memories'")
        definer, config, acl = cursor.fetchone()
    assert definer and config == ["search_path=pg_catalog, public"]
    assert not any(entry.startswith("=") for entry in acl.split(","))  # PUBLIC may not execute it

    def call(user_id, ids, reason="x") -> str:
        scope = rls.Scope(org_id=acme.org.id, user_id=user_id)
        with pytest.raises(DatabaseError) as refused_call, rls.tenant_scope(scope), connection.cursor() as cursor:
            cursor.execute("SELECT zm_purge_memories(%s, %s, NULL)", [ids, reason])
        return refused_call.value.__cause__.sqlstate

    assert call(acme.member.id, [shared]) == "42501"  # a member: insufficient_privilege
    assert call(acme.admin.id, [shared, personal]) == "P0002"  # one the admin cannot see: no_data_found
    assert call(acme.admin.id, [shared], reason=" ") == "22023"
    assert api(acme.member_token).get(f"/api/v1/memories/{shared}").status_code == 200


def test_every_reference_to_a_memory_is_one_the_purge_removes(db):
    """The function clears these columns (migration 0009); a new table that references memories must join them, or
    be deleted with its memory (passages: ON DELETE CASCADE)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.conrelid::regclass::text, a.attname, c.confdeltype FROM pg_constraint c
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
               WHERE c.contype = 'f' AND c.confrelid = 'memory_memory'::regclass AND c.conparentid = 0
                 AND a.attname <> 'org_id'"""  # composite (org_id, x_id) keys (migration 0010); not their clones
        )
        references = {(table, column) for table, column, on_delete in cursor.fetchall()
                      if (table, on_delete) != ("memory_passage", "c")}
    assert references == {
        ("memory_memory", "superseded_by_id"), ("memory_memory", "closed_by_id"),
        ("memory_link", "src_id"), ("memory_link", "dst_id"),
        ("memory_check", "memory_id"), ("memory_check", "corrected_by_id"),
        ("hygiene_conflict", "a_id"), ("hygiene_conflict", "b_id"), ("hygiene_review", "memory_id"),
        ("hygiene_verdict", "memory_id"), ("hygiene_verdict", "other_id"),
    }


def test_a_whole_chain_purge_racing_supersedes_of_its_memory_takes_every_winner_with_it(committed):
    """Writers that won the target before the purge got its lock are versions of its chain, and go with it; the
    rest find it dead or missing. No error either way (real threads and connections)."""
    acme = build_tenant("acme")
    member = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    with rls.tenant_scope(member):
        writer = load_principal(member, token_id=None)
        target = remember_in_process(writer, "The release branch is release-1.").memory.id
    vectors = [services.memory_embedding(f"The release branch is release-{n + 2}.") for n in range(WRITERS)]
    barrier = threading.Barrier(WRITERS + 1)
    results: list = [None] * (WRITERS + 1)

    def run(index: int) -> None:
        try:
            barrier.wait()
            if index == WRITERS:
                with rls.tenant_scope(acme.scope):
                    admin = load_principal(acme.scope, token_id=None)
                    results[index] = purge_service.memory_purge(principal=admin, memory_id=target, reason="race",
                                                                whole_chain=True)
                return
            with rls.tenant_scope(member):
                results[index] = remember_in_process(writer, f"The release branch is release-{index + 2}.", vectors[index],
                                           links=[services.LinkSpec("supersedes", target)])
        except Exception as error:  # noqa: BLE001 - reported below with its thread
            results[index] = error
        finally:
            connection.close()  # each thread had its own connection

    threads = [threading.Thread(target=run, args=(index,)) for index in range(WRITERS + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not [result for result in results if isinstance(result, Exception)], results
    writes, purged = results[:WRITERS], set(results[WRITERS])
    winners = {w.memory.id for w in writes if w.superseded == [target]}
    assert len(winners) <= 1 and purged == {target} | winners
    assert all(w.skipped in ([{"dst": target, "reason": "dead"}], [{"dst": target, "reason": "missing"}])
               for w in writes if w.memory.id not in winners)
    with rls.tenant_scope(member):
        assert set(Memory.objects.values_list("id", flat=True)) == {w.memory.id for w in writes} - winners
        assert not Memory.objects.exclude(status="live").exists() and not Link.objects.exists()


def test_a_link_written_while_its_end_is_purged_waits_for_it_instead_of_failing_at_commit(committed):
    """A link's ends are held FOR KEY SHARE from the moment they are read: a purge that comes in between waits, then
    removes the new link with the memory. (Unheld, the link's deferred foreign key failed at commit: a 500.)"""
    acme = build_tenant("acme")
    member = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    with rls.tenant_scope(member):
        writer = load_principal(member, token_id=None)
        doomed = remember_in_process(writer, "The staging root password is swordfish.").memory.id
        other = remember_in_process(writer, "Staging lives in eu-west-1.").memory.id
    linked, go = threading.Event(), threading.Event()
    errors: list[Exception] = []

    def link() -> None:
        try:
            with rls.tenant_scope(member):
                services.memory_link(principal=writer, src=other, dst=doomed, type="relates_to")
                linked.set()
                go.wait(10)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            linked.set()
            connection.close()

    def purge_it() -> None:
        try:
            with rls.tenant_scope(acme.scope):
                admin = load_principal(acme.scope, token_id=None)
                purge_service.memory_purge(principal=admin, memory_id=doomed, reason="a password")
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    linker = threading.Thread(target=link)
    linker.start()
    assert linked.wait(10)
    purger = threading.Thread(target=purge_it)
    purger.start()
    purger.join(0.5)
    assert purger.is_alive()  # waiting for the linker's transaction
    go.set()
    linker.join()
    purger.join()
    assert errors == []
    assert owner_rows("SELECT count(*) FROM memory_link") == [(0,)]
    assert owner_rows("SELECT id FROM memory_memory") == [(other,)]
