"""/metrics from `make run`'s processes: two web workers and an RQ worker write to one PROMETHEUS_MULTIPROC_DIR,
and one scrape of either web worker adds them all up, read with prometheus-client's parser."""
import subprocess
import urllib.request

import pytest
from django.conf import settings

from embedded_stack.launcher import WORKER_ARGS
from tests.support.stack import MANAGE, call, served, stack_env
from tests.telemetry.conftest import SCRAPE_TOKEN, parse, value


def scrape(port: int) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Authorization": f"Bearer {SCRAPE_TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return parse(response.read().decode())


@pytest.mark.slow
def test_every_process_of_the_served_stack_is_in_one_scrape(acme, queue, tmp_path):
    env = stack_env(PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"), METRICS_TOKEN=SCRAPE_TOKEN)
    (tmp_path / "metrics").mkdir()
    with served(env, tmp_path / "server.log", workers=2) as port:
        for content in ("The on-call phone is with Dana.", "The on-call phone moved to Lee."):
            status, _ = call(port, acme.member_token, "POST", "/api/v1/memories", {"content": content})
            assert status == 201
        for _ in range(6):  # over new connections: both workers answer some
            assert call(port, acme.member_token, "POST", "/api/v1/recall", {"query": "on-call phone"})[0] == 200
        subprocess.run([*MANAGE, *WORKER_ARGS, "--burst"], env=env, cwd=settings.BASE_DIR, check=True,
                       capture_output=True, timeout=300)
        samples = scrape(port)

    assert value(samples, "zm_http_requests_total", route="api/v1/memories", method="POST", status="201") == 2
    assert value(samples, "zm_http_requests_total", route="api/v1/recall", method="POST", status="200") == 6
    assert value(samples, "zm_step_duration_seconds_count", operation="recall", step="fusion") == 6
    assert value(samples, "zm_job_duration_seconds_count", rq_job="review_memory", outcome="ok") == 2  # the worker's
    assert value(samples, "zm_judge_calls_total", backend="local", outcome="ok") >= 1
    assert value(samples, "zm_db_pool_max_connections") >= 2 * settings.DB_POOL["max_size"]  # both web workers
    assert value(samples, "zm_queue_jobs", queue="default", state="queued") == 0
    assert value(samples, "zm_review_lag_seconds") == 0
