"""`make bench ARGS="load --memories N --tenants T"`: a store of N memories in T organizations, loaded fast, then
remember and recall latency per tenant, throughput, sizes, RSS and query plans.

The store lives in its own database (``zero_memory_load``, made afresh each run, migrated as the owner), so that a run
at one size never mixes with another or with `make run`'s data.

Tenants: a 1k, a 10k and a 100k tenant, each only where it fits in half the store (at 10k memories the 1k tenant, at
100k the 1k and 10k ones, at 1M all three), so the same tenant is measured at every store size it fits in; the rest of
the store is filler tenants of equal size, T in all. Each tenant has an admin (in projects p1, p2, p3) and a member
(p1, p2); one memory in five is personal, one in five a superseded older version, as in bench/recall.py.

How the rows are made without embedding a million texts: a pool of distinct synthetic texts (bench/texts.py) is
embedded once with the real model. Each row is a pool text with unique details appended (a reference number and a
name, as real notes carry) and, for its vector, the pool text's vector plus Gaussian noise (sigma NOISE per dimension),
renormalised. Measured on this model, appending such details moves a text to cosine 0.92-0.99 of the original (median
0.968); NOISE = 0.013 gives a median of about 0.97, so a row sits where its text's own embedding would, near its pool
text and its siblings. Rows go in with one binary COPY per tenant straight into the tenant's partition, as the owner;
the HNSW and full-text indexes are dropped during the load and built afterwards (building is several times faster than
inserting into a graph).

Measured, for each of the three tenants: recall p50/p95/p99 through the real selector under RLS for every filter of
bench/recall.py (query embedding included, as an entry point does it), remember p50/p95/p99 through the real service
(embedding included), throughput of recall and remember with 1 and 2 worker processes calling the services in process
(no HTTP), table and index sizes per partition, the RSS of the `make run` web server (uvicorn, its workers) and of an
RQ worker after traffic over HTTP, and EXPLAIN ANALYZE of recall's vector query and of similar_existing's query as the
app role under RLS. `load --plot-only` draws latency against store size from the saved results of every size.
"""
import argparse
import json
import multiprocessing
import os
import random
import re
import runpy
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

DATABASE = "zero_memory_load"
NAMED = (1_000, 10_000, 100_000)
POOL = 4096
NOISE = 0.013
COPY_BATCH = 20_000
PROJECTS = ["p1", "p2", "p3"]
WRITES = 100  # remember calls per tenant
THROUGHPUT_SECONDS = 15.0
TEXT_INDEX = "memory_search_gin"  # built after the load, with the HNSW indexes (the whole graph and one per kind)


def use_bench_database() -> None:
    """Point both roles at the bench's own database: DATABASE_URL and DATABASE_OWNER_URL (what config/settings.py
    reads) as they are, or as the settings default them, with DATABASE for the database. Call before django.setup();
    the server, the RQ worker and the worker processes that the bench starts inherit them."""
    current = runpy.run_module("config.settings")  # its URLs, without importing it before Django does
    for name in ("DATABASE_URL", "DATABASE_OWNER_URL"):
        os.environ[name] = urlsplit(current[name])._replace(path=f"/{DATABASE}").geturl()


def _fresh_database(say: Callable[[str], None]) -> None:
    import psycopg
    from django.conf import settings
    from django.core.management import call_command

    owner = settings.DATABASES["owner"]
    with psycopg.connect(host=owner["HOST"], port=owner["PORT"], user=owner["USER"], password=owner["PASSWORD"],
                         dbname="postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DATABASE}"')
    say(f"  fresh database {DATABASE}: migrating as the owner")
    call_command("migrate", database="owner", verbosity=0, interactive=False)


def plan_tenants(memories: int, tenants: int) -> list[tuple[str, int]]:
    """(slug, size) of every tenant: the named ones that fit in half the store, then fillers sharing the rest."""
    named, total = [], 0
    for size in NAMED:
        if total + size <= memories // 2:
            named.append((f"t{size // 1000}k", size))
            total += size
    fillers = max(1, tenants - len(named))
    rest = memories - total
    shares = [rest // fillers + (1 if i < rest % fillers else 0) for i in range(fillers)]
    return named + [(f"filler-{i:03d}", share) for i, share in enumerate(shares) if share > 0]


def _pool(rng: random.Random, say: Callable[[str], None]) -> tuple[list[tuple[str, str]], np.ndarray]:
    from bench.texts import synthetic_memory
    from memory.embeddings import embed

    texts: dict[str, str] = {}
    while len(texts) < POOL:
        _, kind, content = synthetic_memory(rng)
        texts.setdefault(content, kind)
    pool = [(kind, content) for content, kind in texts.items()]
    started = time.perf_counter()
    vectors = np.vstack([embed([c for _, c in pool[i:i + 256]]) for i in range(0, len(pool), 256)])
    say(f"  embedded a pool of {len(pool)} distinct texts in {time.perf_counter() - started:.0f} s")
    return pool, vectors.astype(np.float32)


def _vector_bytes(vectors: np.ndarray) -> list[bytes]:
    """pgvector's binary format: dimensions and a reserved field (int16 each), then big-endian float32s."""
    header = np.array([vectors.shape[1], 0], dtype=">i2").tobytes()
    body = vectors.astype(">f4")
    return [header + row.tobytes() for row in body]


class Tenant:
    def __init__(self, slug: str, size: int, org_id, admin_id, member_id, projects: dict, token_secret: str):
        self.slug, self.size, self.org_id = slug, size, org_id
        self.admin_id, self.member_id, self.projects, self.token_secret = admin_id, member_id, projects, token_secret


def _make_tenant(slug: str, size: int) -> Tenant:
    from tenants import rls
    from tenants.auth import load_principal
    from tenants.services import org_bootstrap, project_member_add, user_add

    boot = org_bootstrap(org_slug=slug, admin_email=f"admin@{slug}.load", project_slugs=PROJECTS)
    scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    with rls.tenant_scope(scope):
        admin = load_principal(scope, token_id=None)
        member = user_add(principal=admin, email=f"member@{slug}.load", role="member")
        for project in ("p1", "p2"):
            project_member_add(principal=admin, project_slug=project, user_id=member.user_id)
    return Tenant(slug, size, boot.org.id, boot.user.id, member.user_id, {p.slug: p.id for p in boot.projects},
                  boot.secret)


COLUMNS = ["id", "org_id", "scope", "owner_id", "project_id", "kind", "content", "content_hash", "embedding", "status",
           "writer", "authoritative", "metadata", "created_at"]
TYPES = ["text", "uuid", "text", "uuid", "uuid", "text", "text", "text", "bytea", "text", "text", "bool", "jsonb",
         "timestamptz"]


def _copy_tenant(cursor, tenant: Tenant, pool: list[tuple[str, str]], vectors: np.ndarray, rng: random.Random,
                 np_rng: np.random.Generator) -> None:
    from django.utils import timezone
    from psycopg.types.json import Jsonb

    from bench.texts import PEOPLE
    from memory.normalize import content_hash
    from tenants.ids import new_id

    cursor.execute("SELECT zm_memory_partition(%s)", [tenant.org_id])
    partition = cursor.fetchone()[0]
    now = timezone.now()
    empty = Jsonb({})
    with cursor.copy(f"COPY {partition} ({', '.join(COLUMNS)}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(TYPES)
        for start in range(0, tenant.size, COPY_BATCH):
            count = min(COPY_BATCH, tenant.size - start)
            picks = np_rng.integers(0, len(pool), count)
            noisy = vectors[picks] + np_rng.normal(0.0, NOISE, (count, vectors.shape[1])).astype(np.float32)
            noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
            for i, (pick, vector) in enumerate(zip(picks.tolist(), _vector_bytes(noisy))):
                kind, text = pool[pick]
                content = f"{text} (ref {tenant.slug}-{start + i}, {rng.choice(PEOPLE)})"
                owner = tenant.admin_id if rng.random() < 0.5 else tenant.member_id
                personal = rng.random() < 0.2
                project = None if personal else tenant.projects[
                    rng.choice(PROJECTS) if owner == tenant.admin_id else rng.choice(["p1", "p2"])]
                copy.write_row((
                    new_id("mem"), tenant.org_id, "personal" if personal else "project", owner, project, kind,
                    content, content_hash(content), vector, "superseded" if rng.random() < 0.2 else "live",
                    "agent", True, empty, now - timedelta(seconds=tenant.size - start - i),
                ))


def load_store(memories: int, tenants: int, seed: int, say: Callable[[str], None]) -> tuple[list[Tenant], dict]:
    from django.db import connections
    from pgvector.django import HnswIndex

    from memory.models import Memory
    from tenants import rls

    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    _fresh_database(say)
    plan = plan_tenants(memories, tenants)
    made = [_make_tenant(slug, size) for slug, size in plan]
    pool, vectors = _pool(rng, say)
    owner = connections[rls.UNSAFE_ALL_TENANTS]
    hnsw = [i for i in Memory._meta.indexes if isinstance(i, HnswIndex)]
    timings = {}
    with owner.cursor() as cursor:
        for name in [TEXT_INDEX, *(i.name for i in hnsw)]:
            cursor.execute(f"DROP INDEX {name}")
    started = time.perf_counter()
    owner.ensure_connection()
    with owner.connection.cursor() as cursor:  # psycopg's own cursor, for COPY
        for n, tenant in enumerate(made, start=1):
            _copy_tenant(cursor, tenant, pool, vectors, rng, np_rng)
            if n in (1, 2, 3) or n % 10 == 0 or n == len(made):
                say(f"  {n}/{len(made)} tenants copied ({time.perf_counter() - started:.0f} s)")
    timings["copy_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    with owner.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        cursor.execute(f"CREATE INDEX {TEXT_INDEX} ON memory_memory USING gin (search)")
        timings["gin_build_s"] = round(time.perf_counter() - started, 1)
        say(f"  full-text index built in {timings['gin_build_s']} s; building the HNSW indexes (one per partition)")
        started = time.perf_counter()
        with owner.schema_editor() as editor:
            for index in hnsw:
                editor.add_index(Memory, index)
        timings["hnsw_build_s"] = round(time.perf_counter() - started, 1)
        say(f"  HNSW indexes built in {timings['hnsw_build_s']} s")
        cursor.execute("VACUUM ANALYZE memory_memory")
    return made, timings


def _principal(tenant: Tenant, user_id=None):
    from tenants import rls
    from tenants.auth import load_principal

    scope = rls.Scope(org_id=tenant.org_id, user_id=user_id or tenant.admin_id)
    with rls.tenant_scope(scope):
        return load_principal(scope, token_id=None)


def _questions(rng: random.Random, count: int) -> list[str]:
    from bench.recall import QUESTIONS
    from bench.texts import PEOPLE, SERVICES, TOOLS

    return [rng.choice(QUESTIONS).format(service=rng.choice(SERVICES), tool=rng.choice(TOOLS),
                                         person=rng.choice(PEOPLE)) for _ in range(count)]


def measure_recall(tenant: Tenant, queries: int, rng: random.Random) -> dict:
    from bench import calls
    from bench.recall import time_recall_filters
    from memory import recall

    principal = _principal(tenant)
    for _ in range(3):
        calls.recall_as(principal, recall.RecallQuery(query="warm up"))
    return time_recall_filters(principal, _questions(rng, queries))


def measure_remember(tenant: Tenant, rng: random.Random, run: str) -> dict:
    from bench import calls
    from bench.remember import latency_percentiles, step_percentiles
    from bench.texts import one_of_a_kind, synthetic_memory
    from plumbing.timing import StepTimer

    principal = _principal(tenant, tenant.member_id)
    timings, steps = [], []
    for i in range(WRITES):
        _, kind, content = synthetic_memory(rng)
        timer = StepTimer()
        start = time.perf_counter()
        calls.remember(principal, one_of_a_kind(content, f"load {run}-{i}"), steps=timer, kind=kind, project="p1")
        timings.append((time.perf_counter() - start) * 1000)
        steps.append(timer.ms)
    _drop_reviews([tenant])
    return {**latency_percentiles(timings), "p50_ms_per_step": step_percentiles(steps)}


def _throughput_worker(operation: str, tenants: list[dict], seconds: float, start_at: float, seed: int, queue) -> None:
    """One worker process: calls the service for `seconds` from `start_at`; puts how many calls it finished. It uses
    the bench database: its environment is the bench's (use_bench_database)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings

    from bench import calls
    from bench.recall import FILTERS

    settings.RATE_LIMIT_PER_MINUTE = 0  # as in the bench's own process (bench/__main__.py): the work, not the limit
    from bench.texts import synthetic_memory
    from memory import recall
    from memory.embeddings import embed_one

    rng = random.Random(seed)
    embed_one("warm up")
    chosen = [Tenant(**t) for t in tenants]
    principals = [(_principal(t, t.member_id if operation == "remember" else None)) for t in chosen]
    filters = list(FILTERS.values())
    questions = _questions(rng, 64)
    while time.time() < start_at:
        time.sleep(0.01)
    done, i = 0, 0
    while time.time() < start_at + seconds:
        principal = principals[i % len(principals)]
        if operation == "recall":
            calls.recall_as(principal, recall.RecallQuery(query=questions[i % 64], **filters[i % len(filters)]))
        else:
            _, kind, content = synthetic_memory(rng)
            calls.remember(principal, f"{content} (throughput {seed}-{i})", kind=kind, project="p1")
        done += 1
        i += 1
    queue.put(done)


def measure_throughput(tenants: list[Tenant], seed: int) -> dict:
    """Calls per second of recall and remember with 1 and 2 worker processes (spawned: each its own model and pool)."""
    context = multiprocessing.get_context("spawn")
    plain = [dict(slug=t.slug, size=t.size, org_id=t.org_id, admin_id=t.admin_id, member_id=t.member_id,
                  projects=t.projects, token_secret="") for t in tenants]
    report: dict[str, dict] = {}
    for operation in ("recall", "remember"):
        for workers in (1, 2):
            queue = context.Queue()
            start_at = time.time() + 25  # time to start, load the model and warm up
            processes = [context.Process(target=_throughput_worker,
                                         args=(operation, plain, THROUGHPUT_SECONDS, start_at, seed + w, queue))
                         for w in range(workers)]
            for process in processes:
                process.start()
            counts = [queue.get(timeout=180) for _ in processes]
            for process in processes:
                process.join()
            report.setdefault(operation, {})[str(workers)] = round(sum(counts) / THROUGHPUT_SECONDS, 1)
    _drop_reviews(tenants)
    return report


def _drop_reviews(tenants: list[Tenant]) -> None:
    """The bench's writes need no review (as bench/remember.py's drop_reviews, but as the owner and in one statement:
    in this flow the tenant's own UPDATE of 1,400 reviews once ran past the 5 s statement timeout)."""
    from django.db import connections

    from memory.outbox import review_queue
    from tenants import rls

    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("UPDATE hygiene_review SET state = 'done', last_error = 'benchmark write: review skipped'"
                       " WHERE org_id = ANY(%s) AND state <> 'done' RETURNING id", [[t.org_id for t in tenants]])
        ids = [row[0] for row in cursor.fetchall()]
    for review_id in ids:
        review_queue().remove(f"review-{review_id}")


def measure_sizes(tenants: list[Tenant]) -> dict:
    from django.db import connections

    from tenants import rls

    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("""
            SELECT c.relname, c.reltuples::bigint, pg_relation_size(c.oid), pg_indexes_size(c.oid),
                   pg_total_relation_size(c.oid),
                   coalesce((SELECT sum(pg_relation_size(i.indexrelid)) FROM pg_index i JOIN pg_class ic
                             ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
                             WHERE i.indrelid = c.oid AND am.amname = 'hnsw'), 0)::bigint
            FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
            WHERE h.inhparent = 'memory_memory'::regclass""")
        rows = cursor.fetchall()
    mb = 1024 * 1024
    per = {name: {"rows": n, "table_mb": round(t / mb, 1), "indexes_mb": round(i / mb, 1),
                  "hnsw_mb": round(h / mb, 1), "total_mb": round(tot / mb, 1)} for name, n, t, i, tot, h in rows}
    named = {t.slug: per["memory_memory_" + t.org_id.hex] for t in tenants}
    total = {key: round(sum(p[key] for p in per.values()), 1)
             for key in ("table_mb", "indexes_mb", "hnsw_mb", "total_mb")}
    return {"partitions": len(per), "named": named, "all_partitions": total,
            "default_partition": per.get("memory_memory_default")}


def measure_plans(tenant: Tenant) -> dict:
    """EXPLAIN ANALYZE of recall's vector query (kinds=[fact], project p1) and similar_existing's, as the app role."""
    from django.db import connection

    from memory import passages, recall, selectors
    from memory.embeddings import embed_one
    from memory.recall import channels
    from tenants import rls

    principal = _principal(tenant)
    vector = embed_one("When does checkout get deployed?")
    literal = passages.vector_literal(vector)
    plans = {}
    with rls.tenant_scope(principal.scope):
        q = recall.RecallQuery(query="When does checkout get deployed?", kinds=["fact"], project="p1")
        where, params = channels.filters(q, channels.project_of(principal, q.project))
        with connection.cursor() as cursor:
            sql, sql_params = channels.nearest_query(literal, where, params, q.kinds)
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", sql_params)
            plans["recall_vector"] = "\n".join(row[0] for row in cursor.fetchall())
            project = channels.project_of(principal, "p1")
            sql, sql_params = selectors.similar_query(owner=principal.user, project=project, exclude_id="mem_none",
                                                      literal=literal)
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", sql_params)
            plans["similar_existing"] = "\n".join(row[0] for row in cursor.fetchall())
    return {name: re.sub(r"'\[[^']*\]'(::vector)?", "'[vector]'", plan) for name, plan in plans.items()}


def _rss_kb(pid: int) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                fields[key] = int(value.split()[0])
    return fields


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def measure_rss(tenant: Tenant, rng: random.Random, say: Callable[[str], None]) -> dict:
    """The server of `make run` and an RQ worker on the bench database: RSS after HTTP traffic and review jobs."""
    from django.conf import settings

    from bench.texts import synthetic_memory
    from embedded_stack.launcher import MANAGE, reap, server_env, web_workers
    from embedded_stack.serving import server_process, spare_port

    workers = web_workers()
    env = {**server_env(workers), "RATE_LIMIT_PER_MINUTE": "0"}  # with the bench's DATABASE_URL (use_bench_database)
    port = spare_port()
    worker = None
    with server_process(env, port, workers, settings.DATA_DIR / "bench-load-server.log") as server:
        try:
            url = f"http://127.0.0.1:{port}/api/v1"
            headers = {"Authorization": f"Bearer {tenant.token_secret}", "Content-Type": "application/json"}

            def post(path: str, body: dict) -> None:
                request = urllib.request.Request(url + path, json.dumps(body).encode(), headers, method="POST")
                with urllib.request.urlopen(request, timeout=30) as response:
                    response.read()

            questions = _questions(rng, 200)
            for i in range(200):
                post("/recall", {"query": questions[i], "k": 10})
                if i % 4 == 0:
                    _, kind, content = synthetic_memory(rng)
                    post("/memories", {"content": f"{content} (rss {i})", "kind": kind, "project": "p1"})
            web = {"master": _rss_kb(server.pid), "workers": [_rss_kb(p) for p in _children(server.pid)]}
            with open(settings.DATA_DIR / "bench-load-worker.log", "w") as log:
                worker = subprocess.Popen(
                    [*MANAGE, "rqworker", "default", "--worker-class", "rq.SimpleWorker", "--burst"], env=env,
                    cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            peak: dict[str, int] = {}
            deadline = time.monotonic() + 120
            while worker.poll() is None and time.monotonic() < deadline:  # burst: it drains the 50 reviews, then exits
                try:
                    peak = _rss_kb(worker.pid)
                except OSError:
                    break
                time.sleep(0.2)
            say(f"  RSS: web master {web['master']['VmRSS'] // 1024} MB, workers "
                f"{[w['VmRSS'] // 1024 for w in web['workers']]} MB; RQ worker peak {peak.get('VmHWM', 0) // 1024} MB")
            return {"web": web, "rq_worker_last_seen": peak, "web_workers": workers, "http_recalls": 200,
                    "http_remembers": 50}
        finally:
            if worker is not None and worker.poll() is None:
                worker.terminate()
                reap(worker)


def bench_load(*, memories: int, tenants: int, queries: int, seed: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed + 1)
    started = time.perf_counter()
    made, timings = load_store(memories, tenants, seed, say)
    timings["total_load_s"] = round(time.perf_counter() - started, 1)
    say(f"  store loaded in {timings['total_load_s']} s: {memories} memories, {len(made)} tenants")
    named = [t for t in made if not t.slug.startswith("filler")]
    report: dict[str, Any] = {"store_memories": memories, "tenants": len(made), "load": timings,
                              "named_tenants": {t.slug: t.size for t in named}, "recall": {}, "remember": {},
                              "plans": {}}
    for tenant in named:
        report["recall"][tenant.slug] = measure_recall(tenant, queries, rng)
        for name, r in report["recall"][tenant.slug].items():
            say(f"  recall {tenant.slug:<5} {name:<15} p50 {r['p50']:>6} ms  p95 {r['p95']:>6} ms  "
                f"p99 {r['p99']:>6} ms")
        report["remember"][tenant.slug] = r = measure_remember(tenant, rng, f"{seed}")
        say(f"  remember {tenant.slug:<5} p50 {r['p50']:>6} ms  p95 {r['p95']:>6} ms  p99 {r['p99']:>6} ms")
        report["plans"][tenant.slug] = measure_plans(tenant)
    report["sizes"] = measure_sizes(named)
    say(f"  sizes: {json.dumps(report['sizes']['all_partitions'])} (MB, all partitions)")
    report["throughput_per_s"] = measure_throughput(named, seed)
    say(f"  throughput (calls/s, worker processes calling the services): {report['throughput_per_s']}")
    report["rss_kb"] = measure_rss(named[-1], rng, say)
    return report


def plot(results_dir: Path, say: Callable[[str], None]) -> Path:
    """Recall p50 and p99 (the worst filter, and no filter) and remember p50 per tenant against store size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latest: dict[int, dict] = {}
    for path in sorted(results_dir.glob("load-*.json")):
        report = json.loads(path.read_text())
        latest[report["store_memories"]] = report  # sorted by time: the last run of each size wins
    sizes = sorted(latest)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for slug in ("t1k", "t10k", "t100k"):
        xs = [s for s in sizes if slug in latest[s]["recall"]]
        if not xs:
            continue
        worst50 = [max(f["p50"] for f in latest[s]["recall"][slug].values()) for s in xs]
        worst99 = [max(f["p99"] for f in latest[s]["recall"][slug].values()) for s in xs]
        plain50 = [latest[s]["recall"][slug]["no filter"]["p50"] for s in xs]
        axes[0].plot(xs, plain50, "o--", label=f"{slug} no filter")
        axes[0].plot(xs, worst50, "o-", label=f"{slug} worst filter")
        axes[1].plot(xs, worst99, "o-", label=f"{slug} worst filter")
        axes[2].plot(xs, [latest[s]["remember"][slug]["p50"] for s in xs], "o-", label=slug)
    for ax, title, target in ((axes[0], "recall p50 (ms)", 20), (axes[1], "recall p99 (ms)", 50),
                              (axes[2], "remember p50 (ms)", 20)):
        ax.axhline(target, color="grey", linestyle=":", label=f"target {target} ms")
        ax.set_xscale("log")
        ax.set_xlabel("memories in the store")
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.suptitle("zero-memory, memories partitioned by organization: latency per tenant against store size")
    fig.tight_layout()
    out = results_dir / "load-latency.png"
    fig.savefig(out, dpi=110)
    say(f"saved {out.relative_to(results_dir.parent)}")
    return out


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench load: {args.memories} memories in {args.tenants} organizations, {args.queries} queries per filter")
    return bench_load(memories=args.memories, tenants=args.tenants, queries=args.queries, seed=args.seed, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    """Nothing more to print: the load bench prints its numbers as it measures them (the plot follows the save)."""


if __name__ == "__main__":
    sys.exit("run it as: python -m bench load --memories N --tenants T")
