"""Postgres stopped and started again under load: clients of the served stack get a prompt 503 in the envelope
during the outage (never a 500, never a hang), the app reconnects by itself, and no answered write is lost.

The stack runs against a Postgres cluster of its own (embedded_stack.processes.EmbeddedPostgres on a spare port), so the
shared test database is never disturbed."""
import json
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass

import pytest
import redis
from django.conf import settings

from embedded_stack.launcher import server_env
from embedded_stack.processes import EmbeddedPostgres
from tests.support.stack import MANAGE, call, served, spare_port

pytestmark = pytest.mark.slow

CLIENTS = 4
POOL_TIMEOUT = 2.0  # DB_POOL_TIMEOUT of the server: how long a request may wait for Postgres before its 503
OUTAGE = 4.0  # seconds Postgres stays down
WARM_ANSWERS = 20  # answers before the outage and after the recovery: 5 per client


@dataclass
class Answer:
    started: float
    seconds: float
    operation: str
    status: int
    code: str | None
    memory_id: str | None


def _client(port: int, token: str, n: int, stop: threading.Event, answers: list[Answer]) -> None:
    i = 0
    while not stop.is_set():
        i += 1
        started = time.monotonic()
        if i % 2:
            operation, path, body = "remember", "/api/v1/memories", {"content": f"client {n} note {i}: deploys"}
        else:
            operation, path, body = "recall", "/api/v1/recall", {"query": "when do deploys go out"}
        try:
            status, reply = call(port, token, "POST", path, body, timeout=30)
        except OSError as error:  # no answer at all: counted, and fails the test below
            status, reply = 0, {"error": {"code": type(error).__name__}}
        memory_id = reply.get("memory", {}).get("id") if operation == "remember" and status == 201 else None
        answers.append(Answer(started, time.monotonic() - started, operation, status,
                              reply.get("error", {}).get("code"), memory_id))


def _wait_for(condition, timeout: float = 60) -> None:
    """Poll until the condition holds or the timeout passes (the assertions after it tell which)."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_postgres_restarted_under_load_answers_503_then_recovers(tmp_path):
    pg_port = spare_port()
    postgres = EmbeddedPostgres(tmp_path / "data", pg_port)
    app_url = f"postgres://zm_app:zm_app@127.0.0.1:{pg_port}/zero_memory"
    owner_url = f"postgres://zm_owner:zm_owner@127.0.0.1:{pg_port}/zero_memory"
    redis_url = settings.REDIS_URL.rsplit("/", 1)[0] + "/3"  # a Redis database of its own for the review queue
    env = {
        **server_env(1), "DATABASE_URL": app_url, "DATABASE_OWNER_URL": owner_url, "REDIS_URL": redis_url,
        "WEB_THREADS": "4", "DB_POOL_MIN_SIZE": "2", "DB_POOL_MAX_SIZE": "4", "DB_POOL_TIMEOUT": str(POOL_TIMEOUT),
    }
    try:
        assert postgres.start()
        postgres.provision(app_url, owner_url)
        subprocess.run([*MANAGE, "migrate", "--database", "owner", "--no-input", "-v", "0"], env=env, check=True)
        boot = subprocess.run([*MANAGE, "bootstrap", "--org", "load", "--admin", "admin@load.test", "--project", "p"],
                              env=env, check=True, capture_output=True, text=True)
        token = json.loads(boot.stdout.strip().splitlines()[-1])["token"]
        answers: list[Answer] = []
        stop = threading.Event()
        with served(env, tmp_path / "server.log") as port:
            clients = [threading.Thread(target=_client, args=(port, token, n, stop, answers)) for n in range(CLIENTS)]
            for client in clients:
                client.start()
            try:
                _wait_for(lambda: sum(a.status in (200, 201) for a in list(answers)) >= WARM_ANSWERS)  # under load
                down = time.monotonic()
                postgres.stop()
                time.sleep(OUTAGE)
                assert postgres.start()
                up = time.monotonic()
                deadline = up + 60
                while time.monotonic() < deadline and not any(
                        a.started > up and a.status in (200, 201) for a in list(answers)):
                    time.sleep(0.2)
                recovered = time.monotonic()
                # The clients go on against the recovered stack: enough answers for every pooled connection to serve
                _wait_for(lambda: sum(a.started > recovered for a in list(answers)) >= WARM_ANSWERS)
            finally:
                stop.set()
                for client in clients:
                    client.join()
            kept = [a.memory_id for a in answers if a.memory_id]
            # Nothing answered 201 is lost: each of those memories is there after the restart.
            missing = [i for i in kept if call(port, token, "GET", f"/api/v1/memories/{i}")[0] != 200]
    finally:
        postgres.stop()
        if postgres.service_home:
            shutil.rmtree(postgres.service_home)
        redis.Redis.from_url(redis_url).flushdb()
    log = (tmp_path / "server.log").read_text()
    print(f"\npostgres restart: {len(answers)} requests, outage {up - down:.1f} s, recovered {recovered - up:.1f} s "
          f"after the restart; 503: {sum(a.status == 503 for a in answers)} "
          f"({sum(a.status == 503 and a.started > up for a in answers)} after it), "
          f"slowest {max(a.seconds for a in answers):.1f} s")
    assert {a.status for a in answers} <= {200, 201, 503}, [(a.status, a.code) for a in answers if a.status >= 500]
    assert {a.code for a in answers if a.status == 503} == {"database_unavailable"}
    assert any(down < a.started < up and a.status == 503 for a in answers)  # the outage was felt
    assert max(a.seconds for a in answers) < POOL_TIMEOUT + 5, "a request hung"
    assert recovered - up < 60, log[-3000:]
    after = [a for a in answers if a.started > recovered]
    assert after and all(a.status in (200, 201) for a in after), [(a.status, a.code) for a in after]
    assert kept and missing == []
    assert "Traceback" not in log, log[-3000:]
