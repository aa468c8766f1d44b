"""The server of `make run` (embedded_stack.launcher.server_command), started against the test database: a burst of parallel
requests from two tenants answers without a 5xx, and no request sees the other tenant's rows, although a handful of
pooled connections serve them all in turn."""
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.tenants import build_tenant
from tests.support.stack import call, served, stack_env

pytestmark = pytest.mark.slow

BURST = 50
POOL_SIZE = 3  # far fewer connections than requests in flight: each one is reused by both tenants


def test_a_burst_against_the_served_stack_has_no_5xx_and_no_identity_crosses_requests(committed, tmp_path):
    tenants = {slug: build_tenant(slug) for slug in ("acme", "globex")}
    env = stack_env(WEB_THREADS="8", DB_POOL_MIN_SIZE="1", DB_POOL_MAX_SIZE=str(POOL_SIZE))
    with served(env, tmp_path / "server.log") as port:
        for slug, tenant in tenants.items():
            status, _ = call(port, tenant.admin_token, "POST", "/api/v1/memories",
                             {"content": f"{slug}: deploys go out on Monday", "project": "web"})
            assert status == 201

        def one(i: int) -> tuple[str, str, int, list[str]]:
            slug = ("acme", "globex")[i % 2]
            token = tenants[slug].admin_token
            if i % 3 == 0:
                status, body = call(port, token, "POST", "/api/v1/memories",
                                    {"content": f"{slug}: deploy note number {i}", "project": "web"})
                return slug, "remember", status, [body["memory"]["content"]] if status < 300 else []
            if i % 3 == 1:
                status, body = call(port, token, "POST", "/api/v1/recall", {"query": "when do deploys go out"})
                return slug, "recall", status, [hit["memory"]["content"] for hit in body.get("results", [])]
            status, body = call(port, token, "GET", "/api/v1/memories?lifecycle=all&limit=200")
            return slug, "feed", status, [memory["content"] for memory in body.get("results", [])]

        with ThreadPoolExecutor(max_workers=BURST) as pool:
            answers = list(pool.map(one, range(BURST)))
    assert [a for a in answers if a[2] >= 500] == []
    assert [(slug, op, status) for slug, op, status, _ in answers if status not in (200, 201)] == []
    for slug, op, _, contents in answers:
        assert contents, (slug, op)
        assert all(content.startswith(f"{slug}:") for content in contents), (slug, op, contents)


def test_bodies_that_never_arrive_hold_no_thread_and_are_answered_408(committed, tmp_path):
    """Headers and a Content-Length, then nothing: more such connections than the worker has threads. The server still
    answers everyone else at once, and each stalled request gets 408 when BODY_TIMEOUT_SECONDS runs out (plumbing/body.py).
    Before: 16 of them froze a 2-worker server, /healthz included."""
    tenant = build_tenant("acme")
    env = stack_env(WEB_THREADS="2", BODY_TIMEOUT_SECONDS="3")
    with served(env, tmp_path / "server.log") as port:
        stalled = []
        for _ in range(12):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"POST /api/v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                         + tenant.admin_token.encode()
                         + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"content\": ")
            stalled.append(sock)
        started = time.monotonic()
        # Before plumbing/body.py this call waited until the stalled connections closed.
        status, body = call(port, tenant.admin_token, "POST", "/api/v1/memories", {"content": "answered at once"},
                            timeout=2.5)
        assert status == 201 and time.monotonic() - started < 2.5, body
        for sock in stalled:
            answer = b""
            while chunk := sock.recv(4096):  # headers and body may come in two packets; the server then closes
                answer += chunk
            answer = answer.decode()
            assert answer.startswith("HTTP/1.1 408") and '"body_timeout"' in answer, answer
            sock.close()
        status, body = call(port, tenant.admin_token, "GET", "/api/v1/memories?lifecycle=all")
        assert [m["content"] for m in body["results"]] == ["answered at once"]  # the stalled writes stored nothing
