"""/metrics from `make run`'s processes: two web workers and an RQ worker write to one PROMETHEUS_MULTIPROC_DIR,
and one scrape of the web server adds them all up; the worker also serves its own on METRICS_PORT, as in k8s.
Read with prometheus-client's parser."""
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from django.conf import settings

from embedded_stack.launcher import WORKER_ARGS
from tests.support.stack import MANAGE, call, served, spare_port, stack_env
from tests.telemetry.conftest import SCRAPE_TOKEN, parse, value


def scrape(port: int, token: str = SCRAPE_TOKEN) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return parse(response.read().decode())


def scrape_when(port: int, ready, timeout: float = 120) -> dict:
    """Scrape until ``ready(samples)`` (a worker that is starting, or still judging, is asked again)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            samples = scrape(port)
            if ready(samples):
                return samples
        except (urllib.error.URLError, ConnectionError):
            pass
        assert time.monotonic() < deadline, "the worker's metrics never showed its jobs"
        time.sleep(0.5)


@pytest.mark.slow
def test_every_process_of_the_served_stack_is_in_one_scrape(acme, queue, tmp_path):
    worker_port = spare_port()
    env = stack_env(PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"), METRICS_TOKEN=SCRAPE_TOKEN)
    (tmp_path / "metrics").mkdir()
    with served(env, tmp_path / "server.log", workers=2) as port:
        for content in ("The on-call phone is with Dana.", "The on-call phone moved to Lee."):
            status, _ = call(port, acme.member_token, "POST", "/api/v1/memories", {"content": content})
            assert status == 201
        for _ in range(6):  # over new connections: both workers answer some
            assert call(port, acme.member_token, "POST", "/api/v1/recall", {"query": "on-call phone"})[0] == 200
        assert call(port, "not-a-token", "POST", "/mcp", {})[0] == 401
        with open(tmp_path / "worker.log", "w") as log:
            worker = subprocess.Popen([*MANAGE, *WORKER_ARGS], env={**env, "METRICS_PORT": str(worker_port)},
                                      cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        try:
            own = scrape_when(worker_port, lambda samples: value(
                samples, "zm_job_duration_seconds_count", rq_job="review_memory", outcome="ok") == 2)
            with pytest.raises(urllib.error.HTTPError) as refused:
                scrape(worker_port, token="wrong")
            assert refused.value.code == 401
            samples = scrape(port)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)

    assert value(own, "zm_judge_calls_total", backend="local", outcome="ok") >= 1  # the worker's, on its own port
    assert value(samples, "zm_http_requests_total", route="api/v1/memories", method="POST", status="201") == 2
    assert value(samples, "zm_http_requests_total", route="api/v1/recall", method="POST", status="200") == 6
    assert value(samples, "zm_http_requests_total", route="mcp", method="POST", status="401") == 1
    assert value(samples, "zm_step_duration_seconds_count", operation="recall", step="fusion") == 6
    assert value(samples, "zm_job_duration_seconds_count", rq_job="review_memory", outcome="ok") == 2  # the worker's
    assert value(samples, "zm_db_pool_max_connections") >= 2 * settings.DB_POOL["max_size"]  # both web workers
    assert value(samples, "zm_queue_jobs", queue="default", state="queued") == 0
    assert value(samples, "zm_review_lag_seconds") == 0
