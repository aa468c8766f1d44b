"""`make bench ARGS=mcp`: remember and recall as MCP tool calls (mcp_server/) beside the same calls over REST, against
the served stack, in one run, on one tenant (the target: a tool call within 5 ms of REST).

The server is the very command of `make run` (embedded_stack.launcher.server_command), started on a spare port for the
run (embedded_stack.serving); the tenant is the http bench's (bench/http.py, about 20k memories; --memories), loaded
once and reused. One client, one call at a time, each way in turn on the same kind of request, so that a change in the
machine's load falls on all of them alike:

- REST: POST /api/v1/memories or /api/v1/recall on a keep-alive connection (http.client);
- MCP, JSON-RPC: the same call as an MCP ``tools/call`` POST to /mcp on a keep-alive connection (http.client), the
  bytes any MCP client sends: the same client cost as REST, so the difference is the server's;
- MCP, official client: ``ClientSession.call_tool`` of the Python SDK over its streamable HTTP transport (httpx2), as
  an agent built on it sees a call, including what that client adds (JSON-RPC, pydantic, output-schema checks).
"""
import argparse
import http.client
import json
import logging
import os
import random
import time
from collections.abc import Callable

import anyio
import httpx2
import numpy as np
from django.conf import settings
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench.http import _request
from bench.recall import bench_tenant
from bench.remember import drop_reviews, latency_percentiles
from bench.texts import run_tag
from embedded_stack.launcher import server_env, web_workers
from embedded_stack.serving import served, spare_port
from tenants import rls
from tenants.auth import load_principal
from tenants.services import api_token_issue

OPERATIONS = ("remember", "recall")
logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request of the SDK's HTTP client otherwise
WAYS = ("rest", "mcp_jsonrpc", "mcp_sdk")
WARM_UP = 5  # untimed calls of each way before the measured ones
TARGET_GAP_MS = 5.0  # a tool call's p50 and p95 within 5 ms of REST: MCP is a thin way in, not a slower one
REST_PATHS = {"remember": "/api/v1/memories", "recall": "/api/v1/recall"}


def _summary(latencies_ms: list[float]) -> dict:
    values = np.array(latencies_ms)
    return {"calls": len(latencies_ms), **latency_percentiles(values)}


class _KeepAlive:
    """One keep-alive HTTP connection that sends JSON and checks that the answer is a success."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Content-Type": "application/json", **headers}

    def post(self, path: str, body: dict) -> dict:
        self.connection.request("POST", path, body=json.dumps(body), headers=self.headers)
        response = self.connection.getresponse()
        payload = response.read()
        if not 200 <= response.status < 300:
            raise RuntimeError(f"{path} answered {response.status}: {payload[:200]!r}")
        return json.loads(payload)


def _measure(port: int, secret: str, plan: dict[str, list[dict]], protocol_version: str) -> dict:
    """Each operation's calls, the three ways in turn; returns {operation: {way: latencies in ms}}."""
    rest = _KeepAlive(port, {"Authorization": f"Bearer {secret}"})
    jsonrpc = _KeepAlive(port, {"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream",
                                "MCP-Protocol-Version": protocol_version})
    latencies: dict[str, dict[str, list[float]]] = {op: {way: [] for way in WAYS} for op in OPERATIONS}

    def tool_call(operation: str, body: dict) -> None:
        answer = jsonrpc.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                       "params": {"name": operation, "arguments": body}})
        if "error" in answer or answer["result"].get("isError"):
            raise RuntimeError(f"tools/call {operation} failed: {str(answer)[:200]}")

    async def main() -> None:
        headers = {"Authorization": f"Bearer {secret}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as client, \
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            for operation in OPERATIONS:
                bodies = plan[operation]
                for i in range(0, len(bodies), len(WAYS)):
                    triple = bodies[i:i + len(WAYS)]
                    # Rotate who goes first, so that no way always follows the same one.
                    order = [WAYS[(i // len(WAYS) + k) % len(WAYS)] for k in range(len(WAYS))]
                    for way, body in zip(order, triple):
                        start = time.perf_counter()
                        if way == "rest":
                            rest.post(REST_PATHS[operation], body)
                        elif way == "mcp_jsonrpc":
                            tool_call(operation, body)
                        else:
                            result = await session.call_tool(operation, body)
                            if result.is_error:
                                raise RuntimeError(f"call_tool {operation} failed: {result.content[0].text[:200]}")
                        if i >= WARM_UP * len(WAYS):
                            latencies[operation][way].append((time.perf_counter() - start) * 1000)

    anyio.run(main)
    return latencies


def _protocol_version(port: int, secret: str) -> str:
    """The protocol version the official client negotiates with this server, for the JSON-RPC way's header."""
    async def main() -> str:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as client, \
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (read, write), \
                ClientSession(read, write) as session:
            return (await session.initialize()).protocol_version

    return anyio.run(main)


def bench_mcp(*, memories: int, requests: int, seed: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed)
    org, owners = bench_tenant(f"bench-http-{memories}", memories, rng, say)
    scope = rls.Scope(org_id=org.id, user_id=owners[0])
    with rls.tenant_scope(scope):
        admin = load_principal(scope, token_id=None)
        _, secret = api_token_issue(principal=admin, name="mcp bench", writer="agent", project_slug=None, user_id=None)

    workers = web_workers()
    env = server_env(workers)
    env["RATE_LIMIT_PER_MINUTE"] = "0"  # thousands of calls a minute with one token: measure the server, not its limit
    port = spare_port()
    log_path = settings.DATA_DIR / "bench-mcp-server.log"
    say(f"  starting the server of `make run` on 127.0.0.1:{port}: {workers} workers (log: {log_path})")
    run_id = run_tag()
    count = (requests + WARM_UP) * len(WAYS)
    # Every remember is new (the run's id and a serial number), so none is absorbed by dedup.
    plan = {op: [_request(op, rng, f"mcp {run_id}-{i}") for i in range(count)] for op in OPERATIONS}
    report: dict = {
        "tenant": org.slug, "memories": memories, "workers": workers, "calls_per_way": requests,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        with served(env, workers, log_path, port):
            report["protocol_version"] = _protocol_version(port, secret)
            latencies = _measure(port, secret, plan, report["protocol_version"])
    finally:
        drop_reviews(scope)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    report["results"] = {op: {way: _summary(latencies[op][way]) for way in WAYS} for op in OPERATIONS}
    report["targets"] = _targets(report["results"])
    return report


def _targets(results: dict) -> dict:
    targets = {}
    for operation, ways in results.items():
        for way in ("mcp_jsonrpc", "mcp_sdk"):
            gaps = {p: round(ways[way][p] - ways["rest"][p], 2) for p in ("p50", "p95")}
            targets[f"{operation}: {way} p50 and p95 within {TARGET_GAP_MS:g} ms of REST"] = {
                **{f"{p}_gap_ms": gap for p, gap in gaps.items()}, "met": max(gaps.values()) <= TARGET_GAP_MS,
            }
    return targets


def format_table(report: dict) -> list[str]:
    lines = [
        f"  {report['memories']} memories, {report['workers']} workers, {report['calls_per_way']} calls per way and "
        f"operation, protocol {report['protocol_version']}; load average before {report['load_average_before']}, "
        f"after {report['load_average_after']}",
        f"  {'operation':<10}{'way':<14}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}",
    ]
    for operation, ways in report["results"].items():
        for way, r in ways.items():
            lines.append(f"  {operation:<10}{way:<14}{r['p50']:>8}{r['p95']:>8}{r['p99']:>8}")
    for target, outcome in report["targets"].items():
        numbers = ", ".join(f"{k} {v}" for k, v in outcome.items() if k != "met")
        lines.append(f"  {'met   ' if outcome['met'] else 'MISSED'} {target} ({numbers})")
    return lines


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench mcp: remember and recall as MCP tool calls and over REST, a tenant of {args.memories} memories, "
        f"{args.requests} calls per way and operation")
    return bench_mcp(memories=args.memories, requests=args.requests, seed=args.seed, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    for line in format_table(result):
        say(line)
