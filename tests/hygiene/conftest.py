import django_rq
import pytest
from rq.scheduler import RQScheduler

from hygiene.judge import get_judge
from memory.outbox import review_queue
from telemetry.worker import Worker
from tests.support.fake_vllm import FakeVllm


@pytest.fixture
def queue(committed):
    """The real queue on the real Redis, empty, with no retry of an earlier test's review waiting to come back into it
    (RQ's scheduled registry, which a worker's scheduler empties into the queue); `work()` runs a real RQ worker in
    burst mode."""
    _empty(review_queue())
    yield review_queue()
    _empty(review_queue())
    # A worker killed with SIGKILL keeps RQ's scheduler lock until it expires (a minute): free it for the next test.
    review_queue().connection.delete(RQScheduler.get_locking_key(review_queue().name))


def _empty(queue) -> None:
    queue.empty()
    for job_id in queue.scheduled_job_registry.get_job_ids():
        queue.scheduled_job_registry.remove(job_id, delete_job=True)


@pytest.fixture
def work(queue):
    def run() -> None:
        django_rq.get_worker("default", worker_class=Worker).work(burst=True)

    return run


@pytest.fixture
def fake_vllm(settings):
    server = FakeVllm()
    settings.JUDGE_BACKEND = "vllm"
    settings.JUDGE_VLLM_URL = server.url
    settings.JUDGE_VLLM_MODEL = server.model
    settings.JUDGE_VLLM_FALLBACK = ""  # these tests see the outage itself; tests of the fallback turn it on
    settings.JUDGE_BREAKER_COOLDOWN_SECONDS = 0  # an open breaker probes at once: "the judge is back" is seen
    get_judge.cache_clear()
    yield server
    server.close()
    get_judge.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_judge():
    get_judge.cache_clear()
    yield
    get_judge.cache_clear()
