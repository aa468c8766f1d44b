"""`make soak SECONDS=600` (and tests/bench/test_soak.py, about 60 s, on every `make test`): several client processes on
loopback against the served stack, with an RQ worker reviewing the writes, for a bounded time; then the invariants
of the lifecycle are checked in SQL as the owner (every row, not only the soak's), and throughput and latency
percentiles are reported.

Clients (bench/soak_client.py) remember with and without supersedes, recall, forget and restore their own memories;
the judge of the worker may retire memories under them at the same time, so a forget or restore that arrives late
is refused (409): those are counted, not failures. A failure is a 5xx or a request without an answer.
"""
import argparse
import multiprocessing
import subprocess
import time
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import connections

from bench.soak_client import run_client
from embedded_stack.launcher import MANAGE, WORKER_ARGS, reap, server_env, web_workers
from embedded_stack.serving import served, spare_port
from tenants import rls
from tenants.auth import load_principal
from tenants.ids import ulid
from tenants.services import api_token_issue, org_bootstrap

PROJECT = "web"

# Each query counts the rows that break one invariant; all must be 0. Cross-tenant, hence the owner (BYPASSRLS).
INVARIANTS = {
    # A walk along superseded_by from any memory never comes back to where it has been (counts the memories whose
    # walk loops).
    "walks_that_loop": """
        WITH RECURSIVE walk(id, next) AS (
            SELECT id, superseded_by_id FROM memory_memory WHERE superseded_by_id IS NOT NULL
            UNION ALL
            SELECT m.id, m.superseded_by_id FROM walk w JOIN memory_memory m ON m.id = w.next
            WHERE m.superseded_by_id IS NOT NULL
        ) CYCLE id SET looped USING path
        SELECT count(*) FROM walk WHERE looped""",
    # Every chain (the memories whose walks end at the same head) has at most one live memory: its head.
    "chains_with_more_than_one_live": """
        WITH RECURSIVE walk(start, id, next) AS (
            SELECT id, id, superseded_by_id FROM memory_memory
            UNION ALL
            SELECT w.start, m.id, m.superseded_by_id FROM walk w JOIN memory_memory m ON m.id = w.next
        ) CYCLE id SET looped USING path,
        heads AS (SELECT start, id AS head FROM walk WHERE next IS NULL AND NOT looped)
        SELECT count(*) FROM (
            SELECT h.head FROM heads h JOIN memory_memory m ON m.id = h.start
            GROUP BY h.head HAVING count(*) FILTER (WHERE m.status = 'live') > 1
        ) chains""",
    "live_with_a_successor":
        "SELECT count(*) FROM memory_memory WHERE status = 'live' AND superseded_by_id IS NOT NULL",
    # A superseded memory has exactly one active link that retired it, and it comes from its successor; or its
    # successor was purged (docs/API.md, "Privacy purge"): then it has no successor and no active retiring link.
    "superseded_without_exactly_one_retiring_link": """
        SELECT count(*) FROM memory_memory m WHERE m.status = 'superseded' AND CASE
          WHEN m.superseded_by_id IS NULL THEN m.invalidated_reason <> 'Its successor was purged.' OR EXISTS (
            SELECT 1 FROM memory_link l WHERE l.dst_id = m.id AND l.retired_dst AND l.undone_at IS NULL)
          ELSE (SELECT count(*) FROM memory_link l WHERE l.dst_id = m.id AND l.retired_dst AND l.undone_at IS NULL
                AND l.src_id = m.superseded_by_id) <> 1 END""",
    # ...and no active retiring link points at a memory that is not (or no longer) superseded.
    "retiring_links_to_unretired": """
        SELECT count(*) FROM memory_link l JOIN memory_memory m ON m.id = l.dst_id
        WHERE l.retired_dst AND l.undone_at IS NULL AND m.status <> 'superseded'""",
}


def check_invariants() -> dict[str, int]:
    """How many rows break each invariant (all 0 when the store is sound)."""
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        counts = {}
        for name, query in INVARIANTS.items():
            cursor.execute(query)
            counts[name] = cursor.fetchone()[0]
    return counts


def soak_tokens(clients: int) -> list[str]:
    """Two fresh organizations, each with project `web`; one agent token per client, alternating between them."""
    run = ulid().lower()
    admins = []
    for org in ("a", "b"):
        boot = org_bootstrap(org_slug=f"soak-{run}-{org}", admin_email=f"admin@{org}.soak.test",
                             project_slugs=[PROJECT])
        admins.append(rls.Scope(org_id=boot.org.id, user_id=boot.user.id))
    tokens = []
    for n in range(clients):
        scope = admins[n % 2]
        with rls.tenant_scope(scope):
            _, secret = api_token_issue(principal=load_principal(scope, token_id=None), name=f"soak client {n}",
                                        writer="agent", project_slug=PROJECT, user_id=None)
        tokens.append(secret)
    return tokens


def run_soak(*, port: int, tokens: list[str], seconds: float, seed: int = 7) -> dict:
    """The client processes against the server on `port`; their answers summed up."""
    context = multiprocessing.get_context("spawn")  # plain processes: nothing of this one's Django is inherited
    started = time.perf_counter()
    with context.Pool(len(tokens)) as pool:
        results = pool.starmap(run_client, [(port, token, seconds, seed * 1000 + n, PROJECT)
                                            for n, token in enumerate(tokens)])
    elapsed = time.perf_counter() - started
    latencies: dict[str, list[float]] = {}
    statuses: dict[str, int] = {}
    for result in results:
        for operation, values in result["latencies"].items():
            latencies.setdefault(operation, []).extend(values)
        for key, count in result["statuses"].items():
            statuses[key] = statuses.get(key, 0) + count
    every = [v for values in latencies.values() for v in values]

    def percentiles(values: list[float]) -> dict:
        return {p: round(float(np.percentile(values, int(p[1:]))), 1) for p in ("p50", "p95", "p99")}

    return {
        "clients": len(tokens), "seconds": round(elapsed, 1), "requests": len(every),
        "throughput_rps": round(len(every) / elapsed, 1), **percentiles(every),
        "per_operation": {op: {"requests": len(values), **percentiles(values)}
                          for op, values in sorted(latencies.items())},
        "statuses": dict(sorted(statuses.items())),
        "server_errors": sum(n for key, n in statuses.items() if int(key.split()[1]) in (0, *range(500, 600))),
    }


def format_report(report: dict) -> list[str]:
    lines = [f"  {report['requests']} requests from {report['clients']} client processes in {report['seconds']} s: "
             f"{report['throughput_rps']} req/s, p50 {report['p50']} ms, p95 {report['p95']} ms, "
             f"p99 {report['p99']} ms"]
    for operation, numbers in report["per_operation"].items():
        lines.append(f"    {operation:<10} n={numbers['requests']:<6} p50={numbers['p50']} p95={numbers['p95']} "
                     f"p99={numbers['p99']} ms")
    lines.append("  answers: " + ", ".join(f"{key}: {n}" for key, n in report["statuses"].items()))
    lines.append(f"  5xx or no answer: {report['server_errors']}")
    lines.append("  invariants (rows breaking each): "
                 + ", ".join(f"{name} {n}" for name, n in report["invariants"].items()))
    return lines


@contextmanager
def _stack(say: Callable[[str], None]):
    """The web server of `make run` on a spare port and an RQ worker (both as `make run` starts them)."""
    workers = web_workers()
    port = spare_port()
    say(f"  starting the server of `make run` on 127.0.0.1:{port} ({workers} workers) and an RQ worker "
        f"(logs: {settings.DATA_DIR}/soak-*.log)")
    # Load, not the rate limit: each client sends more than the default limit allows a token.
    env = {**server_env(workers), "RATE_LIMIT_PER_MINUTE": "0"}
    with open(settings.DATA_DIR / "soak-worker.log", "w") as worker_log:
        worker = subprocess.Popen(
            [*MANAGE, *WORKER_ARGS], cwd=settings.BASE_DIR, stdout=worker_log, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        with served(env, workers, settings.DATA_DIR / "soak-server.log", port):
            yield port
    finally:
        worker.terminate()
        reap(worker)


def bench_soak(*, seconds: float, clients: int, seed: int, say: Callable[[str], None]) -> dict:
    tokens = soak_tokens(clients)
    with _stack(say) as port:
        say(f"  {clients} client processes for {seconds:.0f} s")
        report = run_soak(port=port, tokens=tokens, seconds=seconds, seed=seed)
    report["invariants"] = check_invariants()
    return report


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench soak: {args.soak_clients} client processes for {args.seconds:.0f} s against the served stack")
    return bench_soak(seconds=args.seconds, clients=args.soak_clients, seed=args.seed, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    for line in format_report(result):
        say(line)
