"""`make bench ARGS=http`: remember and recall over real HTTP against the served stack, beside the same calls made in
process, in one run, on one tenant.

The server is the very command of `make run` (embedded_stack.launcher.server_command: uvicorn, one worker per core,
the app role, pooled connections), started on a spare port for the run and stopped after it (embedded_stack.serving).
The tenant is the recall bench's kind, loaded once and reused (about 20k memories; --memories). In process, the bench
does what a request does, one call at a time (embed, one scope that loads the caller, the service; bench/calls.py),
with the onnxruntime threads of one server worker, and prints the time per step; then the same requests go through
Django in process (test client: middleware, token authentication, view, JSON, but no server and no socket). So the
1-client HTTP time splits into the services, what Django around them adds, and what the server adds. Over HTTP, 1, 4
and 16 clients (--clients) each keep one connection alive and send their requests one after another; errors (no
answer, or a status other than 2xx) are counted, and throughput is the requests answered per second of the whole level.
"""
import argparse
import http.client
import json
import os
import random
import threading
import time
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.test import Client

from bench import calls
from bench.recall import QUESTIONS, bench_tenant
from bench.remember import drop_reviews, latency_percentiles, step_percentiles
from bench.texts import PEOPLE, SERVICES, TOOLS, one_of_a_kind, run_tag, synthetic_memory
from embedded_stack.launcher import server_env, web_workers
from embedded_stack.serving import served, spare_port
from memory import embeddings, recall
from plumbing.timing import StepTimer
from tenants import rls
from tenants.auth import load_principal
from tenants.services import api_token_issue

OPERATIONS = ("remember", "recall")
WARM_UP = 5  # untimed requests per client (or in process) before each measured series
TARGET_P50_GAP_MS = 3.0  # at one client, HTTP p50 within 3 ms of the in-process p50: the server adds little


def _request(operation: str, rng: random.Random, serial: str) -> dict:
    """One request body; remembers are unique (run id and serial number) so that none is absorbed by dedup."""
    if operation == "remember":
        _, kind, content = synthetic_memory(rng)
        return {"content": one_of_a_kind(content, f"{serial}, {rng.choice(PEOPLE)}"), "kind": kind, "project": "p1"}
    question = rng.choice(QUESTIONS)
    return {"query": question.format(service=rng.choice(SERVICES), tool=rng.choice(TOOLS), person=rng.choice(PEOPLE))}


def _summary(latencies_ms: list[float], seconds: float, errors: int) -> dict:
    values = np.array(latencies_ms) if latencies_ms else np.array([np.nan])
    return {
        "requests": len(latencies_ms) + errors,
        "errors": errors,
        **latency_percentiles(values),
        "throughput_rps": round(len(latencies_ms) / seconds, 1),
    }


def _one_by_one(call: Callable[[dict], None], bodies: list[dict]) -> dict:
    for body in bodies[:WARM_UP]:
        call(body)
    latencies = []
    started = time.perf_counter()
    for body in bodies[WARM_UP:]:
        start = time.perf_counter()
        call(body)
        latencies.append((time.perf_counter() - start) * 1000)
    return _summary(latencies, time.perf_counter() - started, 0)


def _in_process(principal, operation: str, bodies: list[dict]) -> dict:
    """The same work as a request, in the bench process: embed, one scope that loads the caller, the service."""
    steps: list[dict[str, float]] = []

    def call(body: dict) -> None:
        timer = StepTimer()
        if operation == "remember":
            calls.remember(principal, body["content"], steps=timer, kind=body["kind"], project=body["project"])
        else:
            calls.recall_as(principal, recall.RecallQuery(query=body["query"]), steps=timer)
        steps.append(timer.ms)

    summary = _one_by_one(call, bodies)
    summary["p50_ms_per_step"] = step_percentiles(steps[WARM_UP:])
    return summary


def _through_django(secret: str, operation: str, bodies: list[dict]) -> dict:
    """The whole request in Django (middleware, token authentication, view, JSON) but no server and no socket:
    what is left of the HTTP time is the server's."""
    client = Client(SERVER_NAME="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {secret}")
    path = "/api/v1/memories" if operation == "remember" else "/api/v1/recall"

    def call(body: dict) -> None:
        response = client.post(path, data=json.dumps(body), content_type="application/json")
        if not 200 <= response.status_code < 300:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.content[:200]!r}")

    return _one_by_one(call, bodies)


def _over_http(port: int, secret: str, operation: str, bodies: list[dict], clients: int) -> dict:
    path = "/api/v1/memories" if operation == "remember" else "/api/v1/recall"
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    shares = [bodies[i::clients] for i in range(clients)]
    latencies: list[float] = []
    server_ms: list[float] = []  # the server's own account of each request (Server-Timing), to split the time
    failures: list[str] = []
    lock = threading.Lock()
    start_line = threading.Barrier(clients + 1)

    def client(share: list[dict]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine, errors, inside = [], [], []

        def send(body: dict) -> str | None:
            """The request's error, or None when it was answered with a 2xx."""
            try:
                connection.request("POST", path, body=json.dumps(body), headers=headers)
                response = connection.getresponse()
                payload = response.read()
            except (OSError, http.client.HTTPException) as error:
                connection.close()  # http.client opens a new connection for the next request
                return f"{type(error).__name__}: {error}"
            if not 200 <= response.status < 300:
                return f"{response.status} {payload[:200]!r}"
            steps = (part.partition(";dur=")[2] for part in (response.getheader("Server-Timing") or "").split(","))
            inside.append(sum(float(ms) for ms in steps if ms))
            return None

        for body in share[:WARM_UP]:
            send(body)
        inside.clear()
        start_line.wait()
        for body in share[WARM_UP:]:
            start = time.perf_counter()
            error = send(body)
            if error:
                errors.append(error)
            else:
                mine.append((time.perf_counter() - start) * 1000)
        connection.close()
        with lock:
            latencies.extend(mine)
            failures.extend(errors)
            server_ms.extend(inside)

    threads = [threading.Thread(target=client, args=(share,)) for share in shares]
    for thread in threads:
        thread.start()
    start_line.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    summary = _summary(latencies, time.perf_counter() - started, len(failures))
    summary["server_timing_p50"] = round(float(np.percentile(server_ms, 50)), 2) if server_ms else None
    if failures:
        summary["first_errors"] = failures[:5]
    return summary


def bench_http(*, memories: int, requests: int, clients: list[int], seed: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed)
    org, owners = bench_tenant(f"bench-http-{memories}", memories, rng, say)
    scope = rls.Scope(org_id=org.id, user_id=owners[0])
    with rls.tenant_scope(scope):
        admin = load_principal(scope, token_id=None)
        token, secret = api_token_issue(principal=admin, name="http bench", writer="agent", project_slug=None,
                                        user_id=None)
        principal = load_principal(scope, token_id=token.id)

    workers = web_workers()
    env = server_env(workers)
    # The bench sends thousands of requests a minute with one token: measure the server, not its rate limit (in
    # process, bench/__main__.py has set it to 0 already).
    env["RATE_LIMIT_PER_MINUTE"] = "0"
    # In process with the embedding threads of one server worker: the comparison is of everything but the model.
    settings.EMBEDDING_THREADS = int(env["EMBEDDING_THREADS"])
    embeddings.get_embedder.cache_clear()
    port = spare_port()
    log_path = settings.DATA_DIR / "bench-http-server.log"
    say(f"  starting the server of `make run` on 127.0.0.1:{port}: {workers} workers, "
        f"{env['EMBEDDING_THREADS']} embedding thread(s) each (log: {log_path})")
    serial, run_id = 0, run_tag()

    def bodies(operation: str, count: int) -> list[dict]:
        nonlocal serial
        serial += count
        # The tenant is reused from run to run: the run's id keeps every remember new, never absorbed by dedup.
        return [_request(operation, rng, f"{run_id}-{serial - count + i}") for i in range(count)]

    report: dict = {
        "tenant": org.slug, "memories": memories, "workers": workers, "web_threads": settings.WEB_THREADS,
        "embedding_threads": int(env["EMBEDDING_THREADS"]), "requests_per_series": requests,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "in_process": {}, "django_no_socket": {}, "http": {},
    }
    try:
        with served(env, workers, log_path, port):
            for operation in OPERATIONS:
                for name, measure in (("in_process", lambda o, b: _in_process(principal, o, b)),
                                      ("django_no_socket", lambda o, b: _through_django(secret, o, b))):
                    result = report[name][operation] = measure(operation, bodies(operation, requests + WARM_UP))
                    say(f"  {name:<16} {operation:<8} p50 {result['p50']:>6} ms  p95 {result['p95']:>6} ms  "
                        f"p99 {result['p99']:>6} ms  {result['throughput_rps']:>6} req/s")
                    if "p50_ms_per_step" in result:
                        say("    p50 per step (ms): "
                            + ", ".join(f"{k} {v}" for k, v in result["p50_ms_per_step"].items()))
            for count in clients:
                level = report["http"][str(count)] = {}
                for operation in OPERATIONS:
                    result = _over_http(port, secret, operation, bodies(operation, requests + WARM_UP * count), count)
                    level[operation] = result
                    say(f"  http {count:>2} clients  {operation:<8} p50 {result['p50']:>6} ms  "
                        f"p95 {result['p95']:>6} ms  p99 {result['p99']:>6} ms  {result['throughput_rps']:>6} req/s  "
                        f"errors {result['errors']}  (server's own p50 {result['server_timing_p50']} ms)")
    finally:
        drop_reviews(scope)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    report["targets"] = _targets(report)
    return report


def _targets(report: dict) -> dict:
    """The HTTP targets, each with the numbers it was judged on."""
    targets = {}
    one = report["http"].get("1")
    if one:
        for operation in OPERATIONS:
            gap = round(one[operation]["p50"] - report["in_process"][operation]["p50"], 2)
            targets[f"{operation}: 1-client HTTP p50 within {TARGET_P50_GAP_MS:g} ms of in process"] = {
                "gap_ms": gap, "met": gap <= TARGET_P50_GAP_MS,
            }
    levels = sorted(report["http"], key=int)
    if len(levels) > 1:
        low, high = report["http"][levels[0]], report["http"][levels[-1]]
        for operation in OPERATIONS:
            targets[f"{operation}: {levels[-1]} clients without error, more req/s than {levels[0]}"] = {
                "errors": high[operation]["errors"],
                "throughput_rps": [low[operation]["throughput_rps"], high[operation]["throughput_rps"]],
                "met": high[operation]["errors"] == 0
                and high[operation]["throughput_rps"] > low[operation]["throughput_rps"],
            }
    return targets


def format_table(report: dict) -> list[str]:
    lines = [
        f"  {report['memories']} memories, {report['workers']} workers x {report['web_threads']} threads and"
        f" {report['embedding_threads']} embedding "
        f"thread(s), {report['requests_per_series']} requests per row; load average before "
        f"{report['load_average_before']}, after {report['load_average_after']}",
        f"  {'':<18}{'operation':<10}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}{'req/s':>8}{'errors':>8}",
    ]
    rows = [("in process", report["in_process"]), ("Django, no socket", report["django_no_socket"])] + [
        (f"HTTP {count:>2} client{'s' if int(count) > 1 else ''}", level) for count, level in report["http"].items()
    ]
    for name, level in rows:
        for operation in OPERATIONS:
            r = level[operation]
            lines.append(f"  {name:<18}{operation:<10}{r['p50']:>8}{r['p95']:>8}{r['p99']:>8}"
                         f"{r['throughput_rps']:>8}{r['errors']:>8}")
    for target, outcome in report["targets"].items():
        numbers = ", ".join(f"{k} {v}" for k, v in outcome.items() if k != "met")
        lines.append(f"  {'met   ' if outcome['met'] else 'MISSED'} {target} ({numbers})")
    return lines


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench http: remember and recall over HTTP and in process, a tenant of {args.memories} memories, "
        f"{args.requests} requests per operation and level, clients {args.clients}")
    return bench_http(memories=args.memories, requests=args.requests, clients=args.clients, seed=args.seed, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    for line in format_table(result):
        say(line)
