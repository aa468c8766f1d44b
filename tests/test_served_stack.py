"""The server of `make run` (config.launcher.server_command), started against the test database: a burst of parallel
requests from two tenants answers without a 5xx, and no request sees the other tenant's rows, although a handful of
pooled connections serve them all in turn."""
import http.client
import json
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connections

from config.launcher import reap, server_command, server_env, wait_until_serving
from tests.conftest import build_tenant

BURST = 50
POOL_SIZE = 3  # far fewer connections than requests in flight: each one is reused by both tenants


def _url(alias: str) -> str:
    db = connections[alias].settings_dict
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def _spare_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _call(port: int, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None,
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def test_a_burst_against_the_served_stack_has_no_5xx_and_no_identity_crosses_requests(committed, tmp_path):
    tenants = {slug: build_tenant(slug) for slug in ("acme", "globex")}
    port, workers = _spare_port(), 1
    env = {
        **server_env(workers), "DATABASE_URL": _url("default"), "DATABASE_OWNER_URL": _url("owner"),
        "REDIS_URL": settings.REDIS_URL, "WEB_THREADS": "8", "DB_POOL_MIN_SIZE": "1",
        "DB_POOL_MAX_SIZE": str(POOL_SIZE),
    }
    with open(tmp_path / "server.log", "w") as log:
        server = subprocess.Popen(server_command("127.0.0.1", port, workers), env=env, cwd=settings.BASE_DIR,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", server)
        for slug, tenant in tenants.items():
            status, _ = _call(port, tenant.admin_token, "POST", "/api/v1/memories",
                              {"content": f"{slug}: deploys go out on Monday", "project": "web"})
            assert status == 201

        def one(i: int) -> tuple[str, str, int, list[str]]:
            slug = ("acme", "globex")[i % 2]
            token = tenants[slug].admin_token
            if i % 3 == 0:
                status, body = _call(port, token, "POST", "/api/v1/memories",
                                     {"content": f"{slug}: deploy note number {i}", "project": "web"})
                return slug, "remember", status, [body["memory"]["content"]] if status < 300 else []
            if i % 3 == 1:
                status, body = _call(port, token, "POST", "/api/v1/recall", {"query": "when do deploys go out"})
                return slug, "recall", status, [hit["memory"]["content"] for hit in body.get("results", [])]
            status, body = _call(port, token, "GET", "/api/v1/memories?lifecycle=all&limit=200")
            return slug, "feed", status, [memory["content"] for memory in body.get("results", [])]

        with ThreadPoolExecutor(max_workers=BURST) as pool:
            answers = list(pool.map(one, range(BURST)))
    finally:
        server.terminate()
        reap(server)
    assert [a for a in answers if a[2] >= 500] == []
    assert [(slug, op, status) for slug, op, status, _ in answers if status not in (200, 201)] == []
    for slug, op, _, contents in answers:
        assert contents, (slug, op)
        assert all(content.startswith(f"{slug}:") for content in contents), (slug, op, contents)
