"""The Python client (clients/python, package zero_memory_client) against the server of `make run` on the test
database: typed results of remember, recall, history and the feed; every error class from a real answer; 429 with
Retry-After waited out (or raised with retries=0); the asyncio client's main flow; every other operation once; and
the client's overhead over raw httpx, printed (not asserted: timings depend on the machine).
"""
import asyncio
import statistics
import time
from datetime import datetime

import httpx
import pytest
import redis
from django.conf import settings

from tests.support.stack import served, stack_env
from zero_memory_client import (
    AsyncZeroMemory, BadRequest, ConflictError, Forbidden, IssuedToken, Memory, NotFound, PayloadTooLarge,
    RateLimited, RecallResult, RememberResult, Unauthorized, ZeroMemory, ZeroMemoryError,
)

pytestmark = pytest.mark.slow


def test_remember_then_recall_gives_typed_results(stack):
    with stack.client() as zm:
        written = zm.remember("The staging database lives in eu-west-3.", kind="fact", project="web",
                              metadata={"from": "client test"}, valid_from=datetime(2026, 1, 1))
        assert isinstance(written, RememberResult) and written.created and written.dedup is None
        memory = written.memory
        assert isinstance(memory, Memory) and memory.id.startswith("mem_")
        assert (memory.kind, memory.scope, memory.project, memory.status) == ("fact", "project", "web", "live")
        assert isinstance(memory.created_at, datetime) and memory.created_at.tzinfo is not None
        assert memory.valid_from == datetime.fromisoformat("2026-01-01T00:00:00+00:00")
        assert memory.metadata == {"from": "client test"} and memory.owner.email == "admin@acme.test"
        assert memory.provenance.authoritative is True and written.similar_existing is not None

        again = zm.remember("The staging   database lives in eu-west-3.", kind="fact", project="web")
        assert (again.created, again.dedup, again.memory.id) == (False, "exact", memory.id)

        found = zm.recall("where is the staging database?", k=5, project="web")
        assert isinstance(found, RecallResult) and found.results
        top = found.results[0]
        assert top.memory.id == memory.id and top.rank == 1 and isinstance(top.score, float)
        assert isinstance(top.why.note, str) and isinstance(found.trace, dict)
        assert [hit.memory.id for hit in found] == [m.id for m in found.memories]


def test_a_declared_supersede_shows_in_the_history(stack):
    with stack.client() as zm:
        old = zm.remember("Deploys go out on Monday at 10:00.", kind="fact", project="web").memory
        new = zm.remember("Deploys go out on Friday at 14:00.", kind="fact", project="web",
                          links=[{"type": "supersedes", "dst": old.id, "reason": "moved by the release team"}])
        assert new.superseded == (old.id,) and new.similar_existing is None and new.skipped == ()
        chain = zm.memory_history(new.memory.id)
        assert [m.id for m in chain] == [old.id, new.memory.id]
        assert chain[0].status == "superseded" and chain[0].superseded_by == new.memory.id
        assert isinstance(chain[0].invalidated_at, datetime)
        detail = zm.memory_detail(old.id)
        assert [link.retired_dst for link in detail.links] == [True]
        assert detail.links[0].origin == "declared" and detail.links[0].reason == "moved by the release team"
        assert "superseded" in [event.action for event in detail.events]
        with_history = zm.recall("when do deploys go out?", include_history=True, project="web")
        flagged = {hit.memory.id: hit.flags for hit in with_history}
        assert "superseded" in flagged[old.id] and "superseded" not in flagged[new.memory.id]


def test_keyed_memories_their_filters_and_namespaces(stack):
    with stack.client() as zm:
        first = zm.remember("Theme: light.", namespace=["prefs", "u1"], key="theme")
        assert (first.memory.namespace, first.memory.key) == (("prefs", "u1"), "theme")
        second = zm.remember("Theme: dark.", namespace=("prefs", "u1"), key="theme")
        assert second.created and second.superseded == (first.memory.id,)
        language = zm.remember("Language: English.", namespace=["prefs", "u2"], key="language").memory
        zm.remember("Team lunch is on Fridays.", namespace=["team"], key="lunch")
        unkeyed = zm.remember("A note without a key.").memory
        assert (unkeyed.namespace, unkeyed.key) == (None, None)

        assert [m.id for m in zm.feed(namespace=["prefs", "u1"], key="theme").results] == [second.memory.id]
        versions = zm.feed(namespace=["prefs", "u1"], key="theme", lifecycle="all").results
        assert [m.id for m in versions] == [second.memory.id, first.memory.id]
        assert [m.id for m in zm.feed(namespace_prefix=["prefs"]).results] == [language.id, second.memory.id]
        assert zm.feed(namespace=["prefs"]).results == ()  # the exact namespace, not a prefix
        found = zm.recall("which theme does the user like?", namespace_prefix=["prefs"])
        assert found.results and all(hit.memory.namespace[0] == "prefs" for hit in found)

        assert zm.namespaces() == (("prefs", "u1"), ("prefs", "u2"), ("team",))
        assert zm.namespaces(prefix=["prefs"]) == (("prefs", "u1"), ("prefs", "u2"))
        assert zm.namespaces(prefix=["prefs"], max_depth=1) == (("prefs",),)
        assert zm.namespaces(suffix=["u2"]) == (("prefs", "u2"),)
        assert zm.namespaces(prefix=["*", "u1"]) == (("prefs", "u1"),)
        assert zm.namespaces(limit=1, offset=1) == (("prefs", "u2"),)

        with pytest.raises(ConflictError) as taken:  # its key is held by the live second version
            zm.memory_restore(first.memory.id)
        assert (taken.value.status, taken.value.code) == (409, "key_taken")


def test_iter_feed_follows_the_cursor_and_yields_each_memory_once(stack):
    with stack.client() as zm:
        zm.projects_create("feedwalk", name="Feed walk")
        ids = [zm.remember(f"Feed walk note number {i}: item {i * 7}", project="feedwalk").memory.id for i in range(7)]
        first = zm.feed(project="feedwalk", limit=2)
        assert len(first.results) == 2 and first.next_cursor is not None
        walked = [m.id for m in zm.iter_feed(project="feedwalk", limit=2)]
        assert sorted(walked) == sorted(ids) and len(walked) == len(set(walked)) == 7
        assert walked == list(reversed(ids))  # newest first


def test_every_error_class_maps_from_a_real_answer(stack):
    member = stack.client(stack.tenant.member_token)
    watcher = stack.client(stack.watcher)
    with stack.client() as zm, member, watcher:
        with pytest.raises(BadRequest) as bad:
            zm.recall("anything", k=0)
        assert (bad.value.status, bad.value.code) == (400, "invalid") and "k" in bad.value.details["fields"]

        with pytest.raises(Unauthorized) as unauthenticated, stack.client("zm_not_a_token") as stranger:
            stranger.me()
        assert (unauthenticated.value.status, unauthenticated.value.code) == (401, "unauthenticated")

        mine = zm.remember("A watcher may not take this away.", project="web").memory
        with pytest.raises(Forbidden) as watcher_refused:
            watcher.memory_forget(mine.id)
        assert watcher_refused.value.code == "watcher_forbidden"
        with pytest.raises(Forbidden) as member_refused:
            member.projects_create("not-allowed")
        assert (member_refused.value.status, member_refused.value.code) == (403, "admin_only")

        with pytest.raises(NotFound) as missing:
            zm.memory_detail("mem_" + "0" * 26)
        assert (missing.value.status, missing.value.code) == (404, "not_found")

        zm.memory_forget(mine.id, reason="done with it")
        with pytest.raises(ConflictError) as not_live:
            zm.memory_forget(mine.id)
        assert (not_live.value.status, not_live.value.code) == (409, "not_live")
        with pytest.raises(ConflictError) as duplicate:
            zm.projects_create("web")
        assert duplicate.value.code == "duplicate_slug"

        with pytest.raises(PayloadTooLarge) as too_long:
            zm.remember("x" * 16001)
        assert (too_long.value.status, too_long.value.code) == (413, "content_too_large")
        with pytest.raises(PayloadTooLarge) as too_big:
            zm.remember("big body", metadata={"blob": "y" * (1 << 20)})
        assert too_big.value.code == "body_too_large" and too_big.value.details["limit"] == 1048576
        assert all(isinstance(e.value, ZeroMemoryError) for e in (bad, unauthenticated, missing, too_long))


def test_every_other_operation_answers_typed(stack):
    tenant = stack.tenant
    with stack.client() as zm:
        me = zm.me()
        assert (me.org, me.role, me.user.email) == ("acme", "admin", "admin@acme.test") and "web" in me.projects
        project = zm.projects_create("billing", name="Billing")
        assert (project.slug, project.name) == ("billing", "Billing")
        assert "billing" in [p.slug for p in zm.projects_list()]
        user = zm.users_add("newcomer@acme.test", role="member")
        assert user.role == "member" and user.email in [u.email for u in zm.users_list()]
        assert zm.project_members_add("billing", user.id).user_id == user.id
        zm.project_members_remove("billing", user.id)

        issued = zm.tokens_issue("member's watcher", "watcher", project="web", user_id=str(tenant.member.id))
        assert isinstance(issued, IssuedToken) and issued.token.startswith("zm_") and issued.writer == "watcher"
        assert issued.id in [t.id for t in zm.tokens_list()]
        with stack.client(issued.token) as issued_client:
            assert issued_client.me().token.id == issued.id
            zm.tokens_revoke(issued.id)
            zm.tokens_revoke(issued.id)  # idempotent
            with pytest.raises(Unauthorized):
                issued_client.me()

        assert zm.org_settings_update(require_supersede_reason=True).require_supersede_reason is True
        assert zm.org_settings_get().require_supersede_reason is True
        zm.org_settings_update(require_supersede_reason=False)

        task = zm.remember("Rotate the Stripe key before Friday.", kind="task", project="web").memory
        assert task.loop == "open" and task.id in [m.id for m in zm.loops(project="web")]
        note = zm.remember("Stripe keys live in the vault under payments/.", kind="fact", project="web").memory
        link = zm.link_create(task.id, note.id, "relates_to", reason="where the key is")
        assert (link.src, link.dst, link.retired_dst, link.origin) == (task.id, note.id, False, None)
        check = zm.memory_check(note.id, "pass", "looked in the vault")
        assert (check.memory, check.outcome, check.corrected_by) == (note.id, "pass", None)

        zm.memory_forget(task.id)
        assert zm.memory_restore(task.id).status == "live"

        first = zm.source_put("wiki/runbook", "Restart the worker with systemctl.", project="web",
                              url="https://wiki.example/runbook")
        assert first.created and first.memory.source["source_id"] == "wiki/runbook"
        with stack.client(stack.watcher) as watcher:
            report = watcher.source_put("wiki/runbook", "Restart the worker with supervisorctl.", project="web")
        assert report.conflict is not None
        assert [m.id for m in zm.source_versions("wiki/runbook")][-1] == first.memory.id
        listed = {c.id: c for c in zm.conflicts_list(status="open")}
        assert listed[report.conflict].memories.b.id == report.memory.id
        resolved = zm.conflicts_resolve(report.conflict, "supersede", winner=report.memory.id)
        assert resolved.status == "resolved" and isinstance(resolved.resolved_at, datetime)

        stats = zm.stats()
        assert stats.memories.live >= 1 and stats.supersedes.review >= 1 and 0 <= stats.explicit_link_ratio <= 1

        zm.memory_purge(note.id, "test of the purge")
        with pytest.raises(NotFound):
            zm.memory_detail(note.id)


def test_the_async_client_does_the_main_flow(stack):
    async def flow() -> None:
        async with AsyncZeroMemory(stack.url, stack.tenant.admin_token, timeout=60) as zm:
            old = (await zm.remember("The on-call phone is with Dana.", kind="fact", project="web")).memory
            new = await zm.remember("The on-call phone is with Lee now.", kind="fact", project="web",
                                    links=[{"type": "supersedes", "dst": old.id}])
            assert new.superseded == (old.id,)
            found = await zm.recall("who has the on-call phone?", project="web")
            assert found.results[0].memory.id == new.memory.id
            assert [m.id for m in await zm.memory_history(new.memory.id)] == [old.id, new.memory.id]
            seen = [m.id async for m in zm.iter_feed(lifecycle="all", project="web", limit=3)]
            assert old.id in seen and new.memory.id in seen and len(seen) == len(set(seen))
            with pytest.raises(NotFound):
                await zm.memory_restore("mem_" + "1" * 26)
            assert (await zm.me()).org == "acme"
            await zm.remember("Kept under a key.", namespace=["async-keyed", "u1"], key="k")
            assert await zm.namespaces(prefix=["async-keyed"]) == (("async-keyed", "u1"),)

    asyncio.run(flow())


def test_429_retry_after_is_waited_out_or_raised(stack, tmp_path):
    """A server allowing 2 requests a minute per token. The window's remaining time is shortened in Redis to 2 s so
    that the test does not wait a minute: the server then answers Retry-After: 2, which the client waits out."""
    with stack.client() as zm:
        fresh = zm.tokens_issue("rate-limited agent", "agent", project="web")
    limiter = redis.Redis.from_url(settings.REDIS_URL)
    with served(stack_env(RATE_LIMIT_PER_MINUTE="2"), tmp_path / "server.log") as port:
        url = f"http://127.0.0.1:{port}"
        with ZeroMemory(url, fresh.token, timeout=60, retries=3) as zm:
            zm.me()
            zm.me()
            window = f"zm:rate:tok:{fresh.id}"  # tenants/ratelimit.py's key for this token
            assert int(limiter.get(window)) == 2
            limiter.pexpire(window, 2000)
            started = time.monotonic()
            assert zm.me().org == "acme"  # answered 429 with Retry-After: 2, then served
            waited = time.monotonic() - started
            assert waited >= 1.5, waited

        with ZeroMemory(url, fresh.token, timeout=60, retries=0) as zm:
            zm.me()  # the second of the new window
            with pytest.raises(RateLimited) as limited:
                zm.me()
        assert (limited.value.status, limited.value.code) == (429, "rate_limited")
        assert 1 <= limited.value.retry_after <= 60 and limited.value.details["limit"] == 2

        started = time.monotonic()
        with ZeroMemory(url, fresh.token, timeout=60, retries=3, max_retry_after=1) as zm:
            with pytest.raises(RateLimited):  # the server asks for longer than the client will wait: at once
                zm.me()
        assert time.monotonic() - started < 1


def _p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def test_overhead_over_raw_httpx(stack, capsys):
    """p50 of 200 recalls and 200 remembers each way, interleaved so that both see the same server load; then the
    client's own cost without the network, on a recorded answer (MockTransport)."""
    calls = 200
    headers = {"Authorization": f"Bearer {stack.tenant.admin_token}"}
    timings: dict[str, list[float]] = {"raw recall": [], "client recall": [], "raw remember": [],
                                       "client remember": []}
    with httpx.Client(base_url=stack.url, headers=headers, timeout=60) as raw, stack.client() as zm:
        for warm in range(5):
            raw.post("/api/v1/recall", json={"query": "warm up"}).json()
            zm.recall("warm up")
        for i in range(calls):
            started = time.perf_counter()
            response = raw.post("/api/v1/recall", json={"query": f"where does deploy {i % 10} go", "k": 10})
            assert response.status_code == 200
            response.json()
            timings["raw recall"].append(time.perf_counter() - started)
            started = time.perf_counter()
            zm.recall(f"where does deploy {i % 10} go", k=10)
            timings["client recall"].append(time.perf_counter() - started)
        for i in range(calls):
            started = time.perf_counter()
            response = raw.post("/api/v1/memories", json={"content": f"raw measure note {i}", "project": "web"})
            assert response.status_code == 201
            response.json()
            timings["raw remember"].append(time.perf_counter() - started)
            started = time.perf_counter()
            zm.remember(f"client measure note {i}", project="web")
            timings["client remember"].append(time.perf_counter() - started)
        recorded_recall = raw.post("/api/v1/recall", json={"query": "where does deploy go", "k": 10}).content
        recorded_remember = raw.post("/api/v1/memories", json={"content": "one more", "project": "web"}).content

    def replay(request: httpx.Request) -> httpx.Response:
        body = recorded_recall if request.url.path.endswith("/recall") else recorded_remember
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})

    offline: dict[str, list[float]] = {"raw recall": [], "client recall": [], "raw remember": [],
                                       "client remember": []}
    transport = httpx.MockTransport(replay)
    with httpx.Client(base_url="http://x", transport=transport) as raw, \
            ZeroMemory("http://x", "t", transport=transport) as zm:
        for _ in range(2000):
            for name, send in (("raw recall", lambda: raw.post("/api/v1/recall", json={"query": "q"}).json()),
                               ("client recall", lambda: zm.recall("q")),
                               ("raw remember", lambda: raw.post("/api/v1/memories", json={"content": "c"}).json()),
                               ("client remember", lambda: zm.remember("c"))):
                started = time.perf_counter()
                send()
                offline[name].append(time.perf_counter() - started)
    hits = len(RecallResult.from_json(httpx.Response(200, content=recorded_recall).json()).results)
    with capsys.disabled():
        print(f"\n[python client overhead] {calls} calls each way against the served stack, p50 ms:")
        for op in ("recall", "remember"):
            raw_ms, client_ms = _p50_ms(timings[f"raw {op}"]), _p50_ms(timings[f"client {op}"])
            print(f"  {op:8}  raw httpx {raw_ms:7.2f}  client {client_ms:7.2f}  difference {client_ms - raw_ms:+6.2f}")
        print(f"  without the network (MockTransport, recorded answers, recall of {hits} hits), 2000 calls, p50 ms:")
        for op in ("recall", "remember"):
            raw_ms, client_ms = _p50_ms(offline[f"raw {op}"]), _p50_ms(offline[f"client {op}"])
            print(f"  {op:8}  raw httpx {raw_ms:7.3f}  client {client_ms:7.3f}  difference {client_ms - raw_ms:+6.3f}")
