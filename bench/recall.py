"""`make bench ARGS="recall --memories N"`: recall latency at 10k and N memories per tenant, several tenants.

The memories are synthetic but realistic team notes (bench/texts.py), embedded with the real model and
inserted in bulk under each tenant's identity (going through remember for 100k rows would take half an hour and
measure nothing more about recall). One in five is a superseded older version, so history is in the store too.
Every query goes through the real recall selector, under RLS, embedding included.
"""
import argparse
import math
import random
import re
import time
from collections.abc import Callable
from contextlib import contextmanager

from django.db import connection, connections
from pgvector.django import HnswIndex

from bench import calls
from bench.remember import latency_percentiles, step_percentiles
from bench.texts import PEOPLE, SERVICES, TOOLS, synthetic_memory
from memory import passages, recall
from memory.embeddings import embed
from memory.models import Memory
from memory.normalize import content_hash
from memory.recall import channels
from plumbing.timing import StepTimer
from tenants import rls
from tenants.auth import load_principal
from tenants.models import Membership
from tenants.services import org_bootstrap, project_member_add, user_add

QUESTIONS = [
    "Who is responsible for the {service} service?",
    "When does {service} get deployed?",
    "What is the request limit on the {service} API?",
    "Why did {service} go down?",
    "What should I check when {service} times out?",
    "Where does staging for {service} run?",
    "Are we moving {service} off {tool}?",
    "What did {person} ask for in code reviews?",
]
FILTERS = {
    "no filter": {},
    "kinds=[fact]": {"kinds": ["fact"]},
    "project": {"project": "p1"},
    "scope=personal": {"scope": "personal"},
}
BATCH = 512
STORE_TENANT = 100_000  # size of each filler tenant of --store
BULK_LOAD_ROWS = 50_000  # --store loads this much larger go in without the HNSW index


def bench_tenant(slug: str, size: int, rng: random.Random, say: Callable[[str], None]):
    """The bench tenant with `size` memories, reused when an earlier run already loaded it."""
    boot = org_bootstrap(org_slug=slug, admin_email=f"admin@{slug}.bench", project_slugs=["p1", "p2", "p3"])
    scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    with rls.tenant_scope(scope):
        admin = load_principal(scope, token_id=None)
        second = Membership.objects.filter(role="member").select_related("user").first()
        if second is None:
            second = user_add(principal=admin, email=f"member@{slug}.bench", role="member")
            for project in ("p1", "p2"):
                project_member_add(principal=admin, project_slug=project, user_id=second.user_id)
        projects = {p.slug: p for p in boot.projects}
        present = Memory.objects.count()  # all but the member's personal memories, counted next
    owners = [boot.user.id, second.user_id]
    with rls.tenant_scope(rls.Scope(org_id=boot.org.id, user_id=second.user_id)):
        present += Memory.objects.filter(scope="personal").count()
    if present < size:
        say(f"  {slug}: loading {size - present} memories (have {present})")
    started, already = time.perf_counter(), present
    while present < size:
        count = min(BATCH, size - present)
        drafts = [synthetic_memory(rng) for _ in range(count)]
        # Unique details keep the texts distinct, like a real store (ticket numbers, dates).
        texts = [f"{content} (ref {slug}-{present + i}, {rng.choice(PEOPLE)})"
                 for i, (_, _, content) in enumerate(drafts)]
        vectors = embed(texts)
        rows = []
        for (_, kind, _), text, vector in zip(drafts, texts, vectors):
            owner = rng.choice(owners)
            personal = rng.random() < 0.2
            project = None if personal else projects["p1" if owner != boot.user.id else rng.choice(["p1", "p2", "p3"])]
            rows.append(Memory(
                org_id=boot.org.id, scope="personal" if personal else "project", owner_id=owner, project=project,
                kind=kind, content=text, content_hash=content_hash(text), embedding=vector, writer="agent",
                status="superseded" if rng.random() < 0.2 else "live",
            ))
        with rls.tenant_scope(rls.Scope(org_id=boot.org.id, user_id=owners[0])):
            # The admin belongs to every project, so RLS accepts its rows; members' rows go in under their own id.
            Memory.objects.bulk_create([r for r in rows if r.owner_id == owners[0]])
        with rls.tenant_scope(rls.Scope(org_id=boot.org.id, user_id=owners[1])):
            Memory.objects.bulk_create([r for r in rows if r.owner_id == owners[1]])
        present += count
        if present % 5120 < BATCH or present == size:
            rate = (present - already) / max(time.perf_counter() - started, 1e-9)
            say(f"  {slug}: {present}/{size} memories ({rate:.0f}/s)")
    return boot.org, owners


def _explain(principal, q: recall.RecallQuery) -> str:
    """EXPLAIN of the vector channel as recall runs it, to show the HNSW index is used under filters and RLS."""
    vector = embed([q.query])[0]
    with rls.tenant_scope(principal.scope):
        where, params = channels.filters(q, channels.project_of(principal, q.project))
        literal = passages.vector_literal(vector)
        with connection.cursor() as cursor:
            sql, sql_params = channels.nearest_query(literal, where, params, q.kinds)
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}", sql_params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
    return re.sub(r"'\[[^']*\]'::vector", "'[query vector]'::vector", plan)


@contextmanager
def _bulk_load(store: int, say: Callable[[str], None]):
    """Without the HNSW indexes (the whole graph and one per kind) while a big --store is loaded, then one build each,
    as a restore does.

    Inserted one by one into the graph, filler rows went in at 124/s here (two hours for a million); a build from
    scratch takes minutes. The index is rebuilt even if the load fails.
    """
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_memory")
        missing = store - cursor.fetchone()[0]
    if missing < BULK_LOAD_ROWS:
        yield
        return
    indexes = [i for i in Memory._meta.indexes if isinstance(i, HnswIndex)]
    owner = connections[rls.UNSAFE_ALL_TENANTS]
    with owner.schema_editor() as editor:
        for index in indexes:
            editor.remove_index(Memory, index)
    try:
        yield
    finally:
        say("  building the HNSW indexes over the whole store (minutes)")
        started = time.perf_counter()
        with owner.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '4GB'")
        with owner.schema_editor() as editor:
            for index in indexes:
                editor.add_index(Memory, index)
        say(f"  HNSW indexes built in {time.perf_counter() - started:.0f} s")


def time_recall_filters(principal, questions: list[str]) -> dict[str, dict]:
    """Each filter of FILTERS over the same questions: p50/p95/p99 in ms, and the p50 of each step."""
    results = {}
    for name, extra in FILTERS.items():
        timings, steps = [], []
        for question in questions:
            timer = StepTimer()
            start = time.perf_counter()
            calls.recall_as(principal, recall.RecallQuery(query=question, **extra), steps=timer)
            timings.append((time.perf_counter() - start) * 1000)
            steps.append(timer.ms)
        results[name] = {**latency_percentiles(timings), "p50_ms_per_step": step_percentiles(steps)}
    return results


def bench_recall(*, memories: int, queries: int, seed: int, store: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed)
    sizes = sorted({10_000, memories})
    tenants = {size: bench_tenant(f"bench-recall-{size}", size, rng, say) for size in sizes}
    for noise in range(2):  # other tenants share the tables and the index
        bench_tenant(f"bench-recall-noise-{noise}", 5_000, rng, say)
    fill = max(0, store - sum(sizes) - 10_000)  # --store: other tenants, until the store holds about that many
    with _bulk_load(store, say):
        for filler in range(math.ceil(fill / STORE_TENANT)):
            bench_tenant(f"bench-store-{filler}", min(STORE_TENANT, fill - filler * STORE_TENANT), rng, say)
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")  # as autovacuum will have by the time such a store serves reads
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_class")  # a cheap query: warm the connection
    report = {"tenants": {}, "store_rows": None}
    for size, (org, owners) in tenants.items():
        scope = rls.Scope(org_id=org.id, user_id=owners[0])
        with rls.tenant_scope(scope):
            principal = load_principal(scope, token_id=None)
        questions = [rng.choice(QUESTIONS).format(service=rng.choice(SERVICES), tool=rng.choice(TOOLS),
                                                  person=rng.choice(PEOPLE)) for _ in range(queries)]
        calls.recall_as(principal, recall.RecallQuery(query="warm up"))
        results = time_recall_filters(principal, questions)
        for name in FILTERS:
            say(f"  {size:>7} memories/tenant  {name:<15} p50 {results[name]['p50']:>6} ms  "
                f"p95 {results[name]['p95']:>6} ms  p99 {results[name]['p99']:>6} ms")
            say("      p50 per step (ms): "
                + ", ".join(f"{k} {v}" for k, v in results[name]["p50_ms_per_step"].items()))
        report["tenants"][str(size)] = results
        report.setdefault("explain", {})[str(size)] = _explain(
            principal, recall.RecallQuery(query=questions[0], kinds=["fact"], project="p1")
        )
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'memory_memory'")
        report["store_rows"] = cursor.fetchone()[0]
    return report


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench recall: 10k and {args.memories} memories per tenant, {args.queries} queries per filter")
    return bench_recall(memories=args.memories, queries=args.queries, seed=args.seed, store=args.store, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    """The store's size and the plan of a filtered vector search in the biggest tenant (the timings print as they
    are measured)."""
    biggest = max(result["explain"], key=int)
    say(f"  store: about {result['store_rows']} memories in all; EXPLAIN of a filtered vector search at "
        f"{biggest} memories:")
    for line in result["explain"][biggest].splitlines():
        say(f"    {line}")
