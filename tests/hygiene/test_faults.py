"""Faults of the review pipeline, each with nothing lost: the real Redis stopped and started again, a real RQ worker
killed with SIGKILL in the middle of a review, and a judge that never answers in time."""
import os
import signal
import subprocess
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django_rq.connection_utils import get_redis_connection
from rq import Queue, SimpleWorker

from embedded_stack.launcher import WORKER_ARGS
from embedded_stack.processes import EmbeddedRedis
from memory.models import Review, Verdict
from memory.outbox import unsafe_pending_reviews
from memory.models import Link, Memory
from tenants import rls
from tests.support.tenants import build_tenant
from tests.support.stack import MANAGE, spare_port, stack_env

WORKER = [*MANAGE, *WORKER_ARGS]  # as `make run` starts it


def remember(api, token, content, **body) -> tuple[str, float]:
    started = time.perf_counter()
    response = api(token).post("/api/v1/memories", {"content": content, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["memory"]["id"], time.perf_counter() - started


def reviews(tenant) -> dict[str, str]:
    with rls.tenant_scope(tenant.scope):
        return {r.memory_id: r.state for r in Review.objects.all()}


def retirements(tenant, older: str, newer: str) -> tuple[str, str | None, int, int]:
    """The older memory's status and successor, the active retiring links and the verdicts of the pair."""
    with rls.tenant_scope(tenant.scope):
        old = Memory.objects.get(pk=older)
        links = Link.objects.filter(src_id=newer, dst_id=older, retired_dst=True, undone_at=None).count()
        verdicts = Verdict.objects.filter(memory_id=newer, other_id=older).count()
    return old.status, old.superseded_by_id, links, verdicts


@pytest.mark.slow
def test_redis_stopped_and_started_again_loses_no_review(api, committed, tmp_path, monkeypatch, fake_vllm):
    # A Redis of its own, so that stopping it disturbs nothing else; the app reaches it as it reaches REDIS_URL.
    port = spare_port()
    server = EmbeddedRedis(tmp_path, port)
    assert server.start()
    queue = Queue("default", connection=get_redis_connection({"URL": f"redis://127.0.0.1:{port}/0"}))
    monkeypatch.setattr("memory.outbox.review_queue", lambda: queue)
    try:
        acme = build_tenant("acme")
        old, _ = remember(api, acme.member_token, "Grafana listens on port 3000.", kind="fact")
        server.stop()
        assert not server.is_running()
        new, seconds = remember(api, acme.member_token, "Grafana now listens on port 3300.", kind="fact")  # still succeeds
        assert seconds < 1 and reviews(acme)[new] == "pending"  # not slowed: the queue fails at once
        server = EmbeddedRedis(tmp_path, port)
        assert server.start()
        call_command("hygiene_flush", "--older-than", "0")  # what `make run` does every 30 s
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
        assert reviews(acme) == {old: "done", new: "done"}
        assert retirements(acme, old, new) == ("superseded", new, 1, 1)
    finally:
        server.stop()


@pytest.mark.slow
def test_a_worker_killed_mid_review_leaves_it_to_the_next_one_and_retires_once(
        api, queue, fake_vllm, settings, tmp_path):
    fake_vllm.delay = 120  # the judge thinks for longer than the test lives: the kill lands mid-review
    stale = 1.0
    env = stack_env(JUDGE_BACKEND="vllm", JUDGE_VLLM_URL=fake_vllm.url, JUDGE_VLLM_MODEL=fake_vllm.model,
                    JUDGE_TIMEOUT_SECONDS="300", HYGIENE_STALE_RUN_SECONDS=str(stale))
    acme = build_tenant("acme")
    old, _ = remember(api, acme.member_token, "Production deploys for web happen Mondays at 10:00 UTC.", kind="fact")
    new, _ = remember(api, acme.member_token, "Web production deploys moved to Thursdays at 15:00 UTC.", kind="fact")
    with open(tmp_path / "worker.log", "w") as log:
        worker = subprocess.Popen(WORKER, env=env, cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        assert fake_vllm.received.wait(60), (tmp_path / "worker.log").read_text()
        assert reviews(acme) == {old: "done", new: "running"}
        # While a review hangs in the worker, writes go on at their own pace: the judge is never on their path.
        # (Personal: its own review sees no project memory, so the test judge's "supersedes" for every pair
        # cannot make it the successor of the deploy memories.)
        _, seconds = remember(api, acme.member_token, "The office plants are watered on Fridays.", scope="personal")
        assert seconds < 5
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    assert worker.returncode == -signal.SIGKILL
    assert reviews(acme)[new] == "running" and retirements(acme, old, new) == ("live", None, 0, 0)

    fake_vllm.delay = 0  # the judge answers the next worker at once
    settings.HYGIENE_STALE_RUN_SECONDS = stale
    deadline = time.monotonic() + 30  # until the killed worker's review is stale: what the flush looks for
    while not unsafe_pending_reviews(older_than=timedelta(days=1)) and time.monotonic() < deadline:
        time.sleep(0.05)
    call_command("hygiene_flush")  # re-queues the stale running review
    subprocess.run([*WORKER, "--burst"], env=env, cwd=settings.BASE_DIR, check=True, capture_output=True,
                   timeout=120)
    assert set(reviews(acme).values()) == {"done"}
    assert retirements(acme, old, new) == ("superseded", new, 1, 1)
    judged = [r for r in fake_vllm.requests if "Thursdays" in r["body"]["messages"][-1]["content"]]
    assert len(judged) == 2  # the killed attempt and the one that finished


@pytest.mark.slow
def test_a_judge_that_never_answers_in_time_is_retried_then_marked_unavailable(api, work, settings, fake_vllm):
    settings.JUDGE_TIMEOUT_SECONDS = 0.3
    settings.JUDGE_RETRY_INTERVALS = [0]  # two job attempts
    fake_vllm.delay = 60
    acme = build_tenant("acme")
    old, _ = remember(api, acme.member_token, "Sentry DSN rotates quarterly.")
    new, seconds = remember(api, acme.member_token, "Sentry DSN now rotates monthly.")
    started = time.perf_counter()
    work()
    judging = time.perf_counter() - started
    with rls.tenant_scope(acme.scope):
        review = Review.objects.get(memory_id=new)
    assert (review.state, review.attempts) == ("unavailable", 2) and "timed out" in review.last_error
    assert len(fake_vllm.requests) == 6  # 2 job attempts x 3 client attempts, each cut at the timeout
    assert judging >= 6 * 0.3 and seconds < judging  # the write never waited for the judge
    assert retirements(acme, old, new) == ("live", None, 0, 0)


@pytest.mark.slow
def test_a_failed_review_is_retried_after_its_interval_by_the_worker_make_run_starts(api, queue, fake_vllm, settings,
                                                                                    tmp_path):
    # RQ keeps a retry with a delay in its scheduled registry; only a worker with the scheduler puts it back.
    fake_vllm.fail_next = 3  # every client attempt of the first job attempt gets a 503
    settings.JUDGE_RETRY_INTERVALS = [2]  # the retry and its delay are set when the write enqueues the review
    env = stack_env(JUDGE_BACKEND="vllm", JUDGE_VLLM_URL=fake_vllm.url, JUDGE_VLLM_MODEL=fake_vllm.model,
                    JUDGE_VLLM_FALLBACK="")  # the outage itself, not the embedded judge standing in
    acme = build_tenant("acme")
    old, _ = remember(api, acme.member_token, "The VPN gateway is vpn1.acme.test.")
    new, _ = remember(api, acme.member_token, "The VPN gateway moved to vpn2.acme.test.")
    with open(tmp_path / "worker.log", "w") as log:
        worker = subprocess.Popen(WORKER, env=env, cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while reviews(acme).get(new) != "done" and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    assert reviews(acme)[new] == "done", (tmp_path / "worker.log").read_text()
    with rls.tenant_scope(acme.scope):
        assert Review.objects.get(memory_id=new).attempts == 2
    assert retirements(acme, old, new)[3] == 1  # the verdict of the second attempt is recorded
