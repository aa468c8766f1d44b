"""The probes: /livez touches nothing, /readyz and /healthz ask Postgres and Redis, /readyz reports the judge."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from embedded_stack.serving import spare_port
from tests.support.fake_vllm import FakeVllm


def test_livez_answers_without_touching_the_database(client, db):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/livez")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert len(queries) == 0


def test_readyz_asks_postgres_and_redis_and_reports_the_embedded_judge(client, db):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "db": "ok", "queue": "ok", "judge": "local", "judge_check": "ok"}


@pytest.fixture
def fake_vllm():
    server = FakeVllm()
    yield server
    server.close()


def test_readyz_asks_a_vllm_judge_for_its_health_and_stays_ready_without_it(client, db, settings, fake_vllm):
    settings.JUDGE_BACKEND, settings.JUDGE_VLLM_URL = "vllm", fake_vllm.url
    assert client.get("/readyz").json()["judge_check"] == "ok"
    settings.JUDGE_VLLM_URL = f"http://127.0.0.1:{spare_port()}/v1"  # nothing listens there
    response = client.get("/readyz")
    assert response.status_code == 200  # the fallback judges meanwhile: reviews go on
    assert response.json()["judge_check"] == "error: URLError (fallback judge: local)"
