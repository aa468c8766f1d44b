"""The concurrency gauntlet: every mutation of the API at once, on a few shared memories, keys and sources, while a
real RQ worker reviews the same memories; then the invariants, in SQL as the owner and over HTTP.

Threads with their own keep-alive connections drive the served stack (`make run`'s server, on the test database):
remember with and without declared supersedes and keys, forget, restore, purge (single and `whole_chain`), links,
checks with `corrected_by`, conflict resolutions, source versions, token issue and revocation. Seeded; bounded by
GAUNTLET_MUTATIONS (2,000). A deadlock or a serialization failure fails the test even though a client retrying the
503 would have passed: it is a lock-order defect (docs/API.md, "Under contention"). On failure the test prints what
Postgres logged about it (both statements of a deadlock)."""
import http.client
import json
import os
import random
import subprocess
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from bench.soak import check_invariants
from embedded_stack.launcher import WORKER_ARGS
from embedded_stack.processes import EmbeddedPostgres
from memory.outbox import review_queue
from tenants import rls
from tests.support.stack import MANAGE, call, served, stack_env
from tests.support.tenants import build_tenant

MUTATIONS = int(os.environ.get("GAUNTLET_MUTATIONS", "2000"))
THREADS = 8
SEED = int(os.environ.get("GAUNTLET_SEED", "40"))
SUBJECTS = ["The web deploy window", "The billing service owner", "The on-call phone", "The VPN endpoint",
            "The staging database", "The release train"]
VALUES = ["Monday 10:00", "Dana", "Ivan", "+1 555 0100", "vpn2.example.com", "Thursday 15:00", "Priya", "postgres 18"]
KEYS = [["team", "deploy"], ["team", "oncall"], ["billing"]]
SOURCES = ["wiki/deploys", "wiki/oncall"]
# What contention may rightly answer: the state moved under the request (409), or the memory is gone (404).
EXPECTED = {"not_live", "already_live", "successor_not_live", "not_found", "already_resolved", "key_taken"}
# Every column that names a memory, outside its event log (kept by design, redacted): none may name a missing one.
REFERENCES = [("hygiene_conflict", "a_id"), ("hygiene_conflict", "b_id"), ("hygiene_review", "memory_id"),
              ("hygiene_verdict", "memory_id"), ("hygiene_verdict", "other_id"), ("memory_check", "memory_id"),
              ("memory_check", "corrected_by_id"), ("memory_link", "src_id"), ("memory_link", "dst_id"),
              ("memory_memory", "superseded_by_id"), ("memory_memory", "closed_by_id"),
              ("memory_passage", "memory_id")]


class Shared:
    """What the threads know of the store: the ids they saw written, what was refused, every answer."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.memories: list[str] = []
        self.accepted: set[str] = set()
        self.refused_tags: list[str] = []
        self.statuses: Counter = Counter()
        self.failures: list[str] = []
        self.done = 0

    def pick(self, rng: random.Random) -> str | None:
        with self.lock:
            return rng.choice(self.memories[-40:]) if self.memories else None


class Driver:
    def __init__(self, port: int, admin: str, member: str, shared: Shared, seed: int) -> None:
        self.port, self.admin, self.member, self.shared, self.seed = port, admin, member, shared, seed
        self.rng = random.Random(seed)
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.serial = 0

    def call(self, operation: str, method: str, path: str, body: dict | None = None,
             token: str | None = None, expect: int | None = None) -> tuple[int, dict]:
        headers = {"Authorization": f"Bearer {token or self.admin}", "Content-Type": "application/json"}
        try:
            self.connection.request(method, path, body=json.dumps(body) if body is not None else None,
                                    headers=headers)
            response = self.connection.getresponse()
            status, raw = response.status, response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            status, raw = 0, json.dumps({"error": {"code": type(error).__name__}}).encode()
        reply = json.loads(raw) if raw else {}
        code = reply.get("error", {}).get("code", "") if isinstance(reply, dict) else ""
        with self.shared.lock:
            self.shared.statuses[f"{operation} {status} {code}".strip()] += 1
            if expect is not None and status != expect:
                self.shared.failures.append(f"{operation} {method} {path} -> {status}, not {expect}: {reply}")
            elif status == 0 or status >= 500 or (400 <= status < 500 and code not in EXPECTED and not expect):
                self.shared.failures.append(f"{operation} {method} {path} -> {status} {reply}")
        return status, reply

    def text(self) -> tuple[str, str]:
        self.serial += 1
        tag = f"g{self.seed}-{self.serial}"  # unique per write: a refused one must not be found stored
        return tag, f"{self.rng.choice(SUBJECTS)} is {self.rng.choice(VALUES)} ({tag})."

    def remember(self, **extra) -> None:
        tag, content = self.text()
        token = self.rng.choice([self.admin, self.member])
        status, reply = self.call("remember", "POST", "/api/v1/memories",
                                  {"content": content, "kind": "fact", "project": "web", **extra}, token)
        self.written(status, reply, tag)

    def written(self, status: int, reply: dict, tag: str) -> None:
        with self.shared.lock:
            if status in (200, 201):
                memory = reply["memory"]["id"]
                self.shared.memories.append(memory)
                self.shared.accepted.add(memory)
            elif status != 0:
                self.shared.refused_tags.append(tag)

    def step(self) -> None:
        rng, target = self.rng, self.shared.pick(self.rng)
        other = self.shared.pick(self.rng)
        roll = rng.random()
        if target is None or roll < 0.22:
            return self.remember()
        if roll < 0.32:
            return self.remember(links=[{"type": "supersedes", "dst": target, "reason": "gauntlet"}])
        if roll < 0.40:
            return self.remember(namespace=rng.choice(KEYS), key="current")
        if roll < 0.48:
            self.call("forget", "POST", f"/api/v1/memories/{target}/forget", {})
        elif roll < 0.56:
            self.call("restore", "POST", f"/api/v1/memories/{target}/restore", {})
        elif roll < 0.63:
            self.call("purge", "POST", f"/api/v1/memories/{target}/purge",
                      {"reason": "gauntlet", "whole_chain": rng.random() < 0.4})
        elif roll < 0.70 and other != target:
            self.call("link", "POST", "/api/v1/links", {"src": target, "dst": other,
                                                        "type": rng.choice(["relates_to", "supersedes", "depends_on"])})
        elif roll < 0.77:
            body = {"outcome": "fail", "detail": "gauntlet"}
            if other != target and rng.random() < 0.6:
                body["corrected_by"] = other
            self.call("check", "POST", f"/api/v1/memories/{target}/checks", body)
        elif roll < 0.84:
            status, listed = self.call("conflicts", "GET", "/api/v1/conflicts?status=open")
            if status == 200 and listed["results"]:
                conflict = rng.choice(listed["results"])
                body = ({"decision": "keep_both"} if rng.random() < 0.5 else
                        {"decision": "supersede", "winner": rng.choice([conflict["a"], conflict["b"]])})
                self.call("resolve", "POST", f"/api/v1/conflicts/{conflict['id']}/resolve", body)
        elif roll < 0.93:
            tag, content = self.text()
            status, reply = self.call("source", "POST", "/api/v1/sources",
                                      {"source_id": rng.choice(SOURCES), "content": content, "project": "web"})
            self.written(status, reply, tag)
        else:
            self.revoke_a_token()

    def revoke_a_token(self) -> None:
        status, issued = self.call("token", "POST", "/api/v1/tokens", {"name": "gauntlet", "writer": "agent",
                                                                         "project": "web"})
        if status != 201:
            return
        self.call("revoke", "DELETE", f"/api/v1/tokens/{issued['id']}")
        self.call("revoked use", "GET", "/api/v1/me", token=issued["token"], expect=401)

    def run(self, count: int) -> None:
        try:
            for _ in range(count):
                self.step()
                with self.shared.lock:
                    self.shared.done += 1
        finally:
            self.connection.close()


def lock_failures_logged(log: Path | None, since: int) -> list[str]:
    """Postgres's lines about deadlocks and serialization failures since byte ``since`` of its log (with DETAIL)."""
    if log is None or not log.exists():
        return []
    lines = log.read_bytes()[since:].decode(errors="replace").splitlines()
    found = []
    for i, line in enumerate(lines):
        if "deadlock detected" in line or "could not serialize" in line:
            found += lines[i:i + 8]
    return found


def deadlocks_counted() -> int:
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def dangling_references() -> dict[str, int]:
    counts = {}
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        for table, column in REFERENCES:
            cursor.execute(f"SELECT count(*) FROM {table} t WHERE t.{column} IS NOT NULL AND NOT EXISTS "
                           f"(SELECT 1 FROM memory_memory m WHERE m.id = t.{column})")
            counts[f"{table}.{column}"] = cursor.fetchone()[0]
    return counts


def live_key_holders_over_one() -> int:
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM (SELECT org_id, key_hash FROM memory_memory WHERE status = 'live' "
                       "AND key_hash IS NOT NULL GROUP BY org_id, key_hash HAVING count(*) > 1) k")
        return cursor.fetchone()[0]


def stored_tags(tags: list[str]) -> list[str]:
    if not tags:
        return []
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("SELECT content FROM memory_memory WHERE content ~ %s", ["\\((" + "|".join(tags) + ")\\)"])
        return [row[0] for row in cursor.fetchall()]


@contextmanager
def served_with_a_worker(tmp_path: Path):
    """`make run`'s server and an RQ worker on the test database; the port, and the worker's log after."""
    env = stack_env(WEB_THREADS="8", DB_POOL_MAX_SIZE="10", RATE_LIMIT_PER_MINUTE="0")
    review_queue().empty()
    with open(tmp_path / "worker.log", "w") as worker_log:
        worker = subprocess.Popen([*MANAGE, *WORKER_ARGS], env=env, cwd=settings.BASE_DIR, stdout=worker_log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with served(env, tmp_path / "server.log") as port:
            yield port
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        review_queue().empty()


def postgres_log() -> Path | None:
    return None if "DATABASE_URL" in os.environ else EmbeddedPostgres(settings.DATA_DIR,
                                                                      settings.EMBEDDED_PG_PORT).log_file


@pytest.mark.slow
def test_every_mutation_against_every_other_and_the_review(committed, tmp_path):
    acme = build_tenant("acme")
    log = postgres_log()
    log_start = log.stat().st_size if log and log.exists() else 0
    deadlocks_before = deadlocks_counted()
    shared = Shared()
    started = time.monotonic()
    with served_with_a_worker(tmp_path) as port:
        drivers = [Driver(port, acme.admin_token, acme.member_token, shared, SEED * 100 + n) for n in range(THREADS)]
        threads = [threading.Thread(target=d.run, args=(MUTATIONS // THREADS,)) for d in drivers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        readable = check_readable(port, acme.admin_token, shared)
    worker_lines = (tmp_path / "worker.log").read_text(errors="replace").splitlines()
    report = {
        "mutations": shared.done, "threads": THREADS, "seconds": round(elapsed, 1),
        "statuses": dict(sorted(shared.statuses.items())),
        "deadlocks (pg_stat_database)": deadlocks_counted() - deadlocks_before,
        "worker lock failures": [line for line in worker_lines
                                 if "deadlock detected" in line or "could not serialize" in line][:5],
        "invariants": check_invariants(), "dangling": dangling_references(),
        "live key holders over one": live_key_holders_over_one(),
        "refused writes stored": stored_tags(shared.refused_tags), "accepted writes unreadable": readable,
    }
    print("\ngauntlet:\n" + json.dumps(report, indent=1))
    logged = lock_failures_logged(log, log_start)
    assert report["deadlocks (pg_stat_database)"] == 0 and not report["worker lock failures"], \
        "deadlocks:\n" + "\n".join(logged)
    assert not shared.failures, "\n".join(shared.failures[:20]) + "\n" + "\n".join(logged)
    assert set(report["invariants"].values()) == {0}, report["invariants"]
    assert set(report["dangling"].values()) == {0}, report["dangling"]
    assert report["live key holders over one"] == 0
    assert report["refused writes stored"] == [] and report["accepted writes unreadable"] == []
    assert shared.done >= MUTATIONS - THREADS and shared.statuses  # every thread ran its share


@pytest.mark.slow
@pytest.mark.parametrize("wait", [0, 1.0])
def test_a_purge_right_after_its_write_answers_204_every_time(committed, tmp_path, wait):
    """A purge of a memory written a moment before meets that memory's review in the worker: it must wait for it (or
    the review find nothing to do), never deadlock with it (503)."""
    acme = build_tenant("acme")
    deadlocks_before = deadlocks_counted()
    answers = Counter()
    with served_with_a_worker(tmp_path) as port:
        for n in range(40):
            status, written = call(port, acme.admin_token, "POST", "/api/v1/memories",
                                   {"content": f"The deploy window is Monday 10:00 (try {n}).", "project": "web"})
            assert status == 201, written
            time.sleep(wait)
            status, reply = call(port, acme.admin_token, "POST",
                                 f"/api/v1/memories/{written['memory']['id']}/purge", {"reason": "privacy request"})
            answers[status] += 1
    assert answers == {204: 40}, (answers, deadlocks_counted() - deadlocks_before)
    assert deadlocks_counted() == deadlocks_before
    assert set(dangling_references().values()) == {0}


def check_readable(port: int, token: str, shared: Shared) -> list[str]:
    """Every accepted write is readable at the end, unless a purge took it (itself, or as a version of a chain
    purged whole): a purge leaves a `purged` event, the audit trail, for every id it took."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    unreadable = []
    try:
        for memory in sorted(shared.accepted):
            connection.request("GET", f"/api/v1/memories/{memory}", headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            if response.status != 200 and not (response.status == 404 and was_purged(memory)):
                unreadable.append(f"{memory}: {response.status}")
    finally:
        connection.close()
    return unreadable


def was_purged(memory_id: str) -> bool:
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("SELECT 1 FROM memory_event WHERE memory_id = %s AND action = 'purged'", [memory_id])
        return cursor.fetchone() is not None
