"""Helpers for tests that run the real processes (the web server of `make run`, an RQ worker) against the test
database and Redis, as subprocesses."""
import http.client
import json
import sys
from contextlib import AbstractContextManager
from pathlib import Path

from django.conf import settings
from django.db import connections

from embedded_stack import serving
from embedded_stack.launcher import server_env
from embedded_stack.serving import spare_port  # noqa: F401 - the tests that need a free port import it from here

MANAGE = [sys.executable, str(settings.BASE_DIR / "manage.py")]


def database_url(alias: str) -> str:
    db = connections[alias].settings_dict
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


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


def served(env: dict[str, str], log: Path, workers: int = 1, port: int | None = None) -> AbstractContextManager[int]:
    """`make run`'s web server on ``port`` (a spare one by default: embedded_stack.serving.served); yields the port,
    stops it after."""
    return serving.served(env, workers=workers, log_path=log, port=port)
