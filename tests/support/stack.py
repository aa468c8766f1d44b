"""Helpers for tests that run the real processes (the web server of `make run`, an RQ worker) against the test
database and Redis, as subprocesses."""
import http.client
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connections

from embedded_stack.launcher import reap, server_command, server_env, wait_until_serving

MANAGE = [sys.executable, str(settings.BASE_DIR / "manage.py")]


def database_url(alias: str) -> str:
    db = connections[alias].settings_dict
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def spare_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stack_env(**extra: str) -> dict[str, str]:
    """The environment of a child process that uses the test database and the test Redis."""
    return {
        **server_env(1), "DATABASE_URL": database_url("default"), "DATABASE_OWNER_URL": database_url("owner"),
        "REDIS_URL": settings.REDIS_URL, **extra,
    }


def call(port: int, token: str, method: str, path: str, body: dict | None = None,
         timeout: float = 120) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None,
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


@contextmanager
def served(env: dict[str, str], log: Path, workers: int = 1) -> Iterator[int]:
    """`make run`'s web server (embedded_stack.launcher.server_command) on a spare port; yields the port, stops it after."""
    port = spare_port()
    with open(log, "w") as out:
        server = subprocess.Popen(server_command("127.0.0.1", port, workers), env=env, cwd=settings.BASE_DIR,
                                  stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", server)
        yield port
    finally:
        server.terminate()
        reap(server)
