"""`make bench ARGS=telemetry`: what metrics, the request log and disabled tracing add to remember and recall.

The same requests go through Django in process (test client: middleware, token authentication, view, JSON) with
telemetry as it runs in `make run` (multi-process metric files, one JSON log line per request written to a file,
tracing off) and without it (no request middleware, every metric a no-op), one after the other in a random order so
that drift on a shared machine falls on both alike; the p50 difference is the overhead. Then the telemetry work of
one request alone (its request middleware, remember's step metrics), timed in a loop without a request around it.
"""
import argparse
import json
import logging
import os
import random
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager, nullcontext

import numpy as np
from django.conf import settings
from django.test import Client, RequestFactory, override_settings

from bench.recall import QUESTIONS, bench_tenant
from bench.remember import drop_reviews
from bench.texts import PEOPLE, SERVICES, TOOLS, one_of_a_kind, synthetic_memory
from plumbing.timing import StepTimer
from telemetry import metrics
from telemetry.middleware import RequestTelemetry
from tenants import rls
from tenants.auth import load_principal
from tenants.services import api_token_issue

TARGET_OVERHEAD_MS = 0.5
REMEMBER_STEPS = ("authenticate", "rate_limit", "prepare", "identity", "dedup", "insert", "similar_existing",
                  "outbox", "render", "commit")
MIDDLEWARE = "telemetry.middleware.RequestTelemetry"


class _Nothing:
    """A metric that records nothing: the 'without' side."""

    def labels(self, *args, **kwargs):
        return self

    def inc(self, *args) -> None: ...

    def observe(self, *args) -> None: ...

    def set(self, *args) -> None: ...

    @contextmanager
    def time(self):
        yield


@contextmanager
def metrics_off():
    names = [name for name, value in vars(metrics).items() if hasattr(value, "labels")]
    kept = {name: getattr(metrics, name) for name in names}
    for name in names:
        setattr(metrics, name, _Nothing())
    try:
        yield
    finally:
        for name, value in kept.items():
            setattr(metrics, name, value)


def _clients(secret: str) -> tuple[Client, Client]:
    """(with telemetry, without): a client's handler loads the middleware of the settings at its first request."""
    with_telemetry, without = (Client(SERVER_NAME="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {secret}")
                               for _ in range(2))
    with override_settings(MIDDLEWARE=[m for m in settings.MIDDLEWARE if m != MIDDLEWARE]):
        without.get("/api/v1/me")
    with_telemetry.get("/api/v1/me")
    return with_telemetry, without


def _body(operation: str, rng: random.Random, serial: int) -> tuple[str, str]:
    if operation == "remember":
        _, kind, content = synthetic_memory(rng)
        body = {"content": one_of_a_kind(content, f"telemetry {serial}, {rng.choice(PEOPLE)}"), "kind": kind,
                "project": "p1"}
        return "/api/v1/memories", json.dumps(body)
    question = rng.choice(QUESTIONS)
    query = question.format(service=rng.choice(SERVICES), tool=rng.choice(TOOLS), person=rng.choice(PEOPLE))
    return "/api/v1/recall", json.dumps({"query": query})


def _side_by_side(operation: str, clients: tuple[Client, Client], n: int, rng: random.Random) -> dict:
    timed: dict[str, list[float]] = {"with": [], "without": []}
    for serial in range(n):
        for side in rng.sample(["with", "without"], 2):
            path, body = _body(operation, rng, serial * 2 + (side == "with"))
            client = clients[0] if side == "with" else clients[1]
            with metrics_off() if side == "without" else nullcontext():
                started = time.perf_counter()
                response = client.post(path, data=body, content_type="application/json")
                timed[side].append((time.perf_counter() - started) * 1000)
            if not 200 <= response.status_code < 300:
                raise RuntimeError(f"{path} answered {response.status_code}: {response.content[:200]!r}")
    p50 = {side: float(np.percentile(values, 50)) for side, values in timed.items()}
    return {"requests_per_side": n, "p50_with_ms": round(p50["with"], 3), "p50_without_ms": round(p50["without"], 3),
            "overhead_p50_ms": round(p50["with"] - p50["without"], 3)}


def _alone(n: int) -> dict:
    """The telemetry work of one remember without the request: its middleware around an answer that is ready, and
    the step metrics of its ten steps."""
    request = RequestFactory().post("/api/v1/memories")
    request.resolver_match = type("Match", (), {"route": "api/v1/memories"})()
    answer = type("Answer", (dict,), {"status_code": 201})()
    middleware = RequestTelemetry(lambda _request: answer)
    started = time.perf_counter()
    for _ in range(n):
        middleware(request)
    middleware_us = (time.perf_counter() - started) / n * 1e6
    steps = StepTimer("remember")
    for step in REMEMBER_STEPS:
        steps.lap(step)
    started = time.perf_counter()
    for _ in range(n):
        steps.finish()
    steps_us = (time.perf_counter() - started) / n * 1e6
    return {"middleware_us": round(middleware_us, 1), "remember_step_metrics_us": round(steps_us, 1),
            "total_us": round(middleware_us + steps_us, 1)}


@contextmanager
def _log_to_file():
    """The request log's lines go to a file for the run, as a pod's stdout goes to its log: written, not shown."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    with tempfile.TemporaryFile("w") as sink:
        kept = [h.setStream(sink) for h in handlers]
        try:
            yield
        finally:
            for handler, stream in zip(handlers, kept):
                handler.setStream(stream)


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    rng = random.Random(args.seed)
    org, owners = bench_tenant("bench-telemetry", args.memories, rng, say)
    scope = rls.Scope(org_id=org.id, user_id=owners[0])
    with rls.tenant_scope(scope):
        admin = load_principal(scope, token_id=None)
        _, secret = api_token_issue(principal=admin, name="telemetry bench", writer="agent", project_slug=None,
                                    user_id=None)
    mode = "multi-process files" if "PROMETHEUS_MULTIPROC_DIR" in os.environ else "this process"
    say(f"telemetry: {args.requests} requests per side and operation, in random order (metrics: {mode}, "
        "tracing off)")
    with _log_to_file():
        clients = _clients(secret)
        for operation in ("remember", "recall"):  # warm both sides
            _side_by_side(operation, clients, 5, rng)
        result = {operation: _side_by_side(operation, clients, args.requests, rng)
                  for operation in ("remember", "recall")}
        result["alone"] = _alone(5000)
    drop_reviews(scope)
    result["target_overhead_ms"] = TARGET_OVERHEAD_MS
    return result


def report(result: dict, say: Callable[[str], None]) -> None:
    for operation in ("remember", "recall"):
        row = result[operation]
        say(f"  {operation:8s} p50 with {row['p50_with_ms']:.2f} ms, without {row['p50_without_ms']:.2f} ms: "
            f"overhead {row['overhead_p50_ms']:+.3f} ms (target <= {TARGET_OVERHEAD_MS} ms)")
    alone = result["alone"]
    say(f"  alone: request middleware {alone['middleware_us']} us + remember's step metrics "
        f"{alone['remember_step_metrics_us']} us = {alone['total_us']} us per request")
