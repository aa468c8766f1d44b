"""/metrics in one process (the served, multi-process stack: test_served_metrics.py): the counters move after real
requests and jobs, labels stay bounded, and the endpoint answers only the scrape token."""
from datetime import timedelta

from memory import outbox
from tests.telemetry.conftest import SCRAPE_TOKEN, value


def test_metrics_are_off_without_a_token_and_refuse_a_wrong_one(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404
    settings.METRICS_TOKEN = SCRAPE_TOKEN
    assert client.get("/metrics").status_code == 401
    refused = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {SCRAPE_TOKEN}x")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert b"zm_http" not in refused.content


def test_remember_recall_and_the_review_job_move_their_metrics(acme, remember, recall, scrape, queue, work):
    before = scrape()
    remember(acme.member_token, "The staging database is db-2.")
    remember(acme.member_token, "The staging database moved to db-7.")
    recall(acme.member_token, "staging database")
    during = scrape()
    work()  # the real RQ worker (telemetry.worker.Worker) judges both writes
    after = scrape()

    def moved(samples, name, **labels) -> float:
        return value(samples, name, **labels) - value(before, name, **labels)

    assert moved(during, "zm_http_requests_total", route="api/v1/memories", method="POST", status="201") == 2
    assert moved(during, "zm_http_requests_total", route="api/v1/recall", method="POST", status="200") == 1
    assert moved(during, "zm_http_request_duration_seconds_count", route="api/v1/recall", method="POST") == 1
    for step in ("authenticate", "prepare", "identity", "dedup", "insert", "similar_existing", "outbox", "commit"):
        assert moved(during, "zm_step_duration_seconds_count", operation="remember", step=step) == 2, step
    for step in ("vector_channel", "text_channel", "fusion", "hydration"):
        assert moved(during, "zm_step_duration_seconds_count", operation="recall", step=step) == 1, step
    assert moved(during, "zm_embedding_duration_seconds_count", backend="onnx") >= 3
    assert value(during, "zm_queue_jobs", queue="default", state="queued") == 2
    assert value(during, "zm_review_lag_seconds") > 0  # two reviews wait for the judge

    assert moved(after, "zm_job_duration_seconds_count", rq_job="review_memory", outcome="ok") == 2
    assert moved(after, "zm_job_wait_seconds_count", rq_job="review_memory") == 2
    assert moved(after, "zm_judge_calls_total", backend="local", outcome="ok") >= 1
    verdicts = sum(v - value(before, name, **dict(labels)) for (name, labels), v in after.items()
                   if name == "zm_judge_verdicts_total")
    assert verdicts >= 1
    assert value(after, "zm_queue_jobs", queue="default", state="queued") == 0
    assert value(after, "zm_review_lag_seconds") == 0
    assert value(after, "zm_db_pool_max_connections") >= 1


def test_a_rate_limited_request_is_counted(acme, api, scrape, settings):
    settings.RATE_LIMIT_PER_MINUTE = 1
    before = value(scrape(), "zm_rate_limited_total", limit="token")
    assert api(acme.member_token).get("/api/v1/me").status_code == 200
    assert api(acme.member_token).get("/api/v1/me").status_code == 429
    after = scrape()
    assert value(after, "zm_rate_limited_total", limit="token") == before + 1
    assert value(after, "zm_http_requests_total", route="api/v1/me", method="GET", status="429") >= 1


def test_no_label_carries_an_id_or_a_path(acme, api, remember, scrape):
    memory = remember(acme.member_token, "Deploys freeze on Fridays.")["memory"]
    assert api(acme.member_token).get(f"/api/v1/memories/{memory['id']}").status_code == 200
    assert api(acme.member_token).get("/api/v1/no-such-thing/42").status_code == 404
    samples = scrape()
    label_values = {v for (_, labels) in samples for _, v in labels}
    assert not {memory["id"], str(acme.org.id), "/api/v1/no-such-thing/42"} & label_values
    assert value(samples, "zm_http_requests_total", route="api/v1/memories/<str:memory_id>", method="GET",
                 status="200") >= 1


def test_the_flusher_counts_the_reviews_it_queues_again(acme, remember, scrape, queue):
    remember(acme.member_token, "Invoices are sent on the 1st.")
    before = value(scrape(), "zm_outbox_requeued_total")
    assert outbox.flush(older_than=timedelta(0)) == 1  # the write's review, still pending
    assert value(scrape(), "zm_outbox_requeued_total") == before + 1
