"""Every metric the server exports, in one place (docs/operations.md lists them with their types and labels).

Labels take only bounded values: a route pattern, a method, a status code, a step or job name (``rq_job``, since
Prometheus keeps ``job`` for its own target label), a judge backend, a relation. Never an organization, a user, a
token or a memory: a label per tenant would grow without end.

With PROMETHEUS_MULTIPROC_DIR set (`make run`, k8s) each process writes its values to files there and /metrics adds
them up (exposition.py); the gauges say how: ``livesum`` adds the live processes' values, ``livemax`` takes the
largest. The gauges read from Postgres and Redis at scrape time (review lag, open conflicts, queue depth) are not
here: they are collected when /metrics is asked (hygiene/gauges.py).
"""
from prometheus_client import Counter, Gauge, Histogram

FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)  # one step of a request
REQUEST = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SLOW = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)  # jobs, judge calls, queue waits

http_requests = Counter(
    "zm_http_requests", "HTTP requests answered, by route pattern, method and status code (5xx: server errors).",
    ["route", "method", "status"],
)
http_duration = Histogram(
    "zm_http_request_duration_seconds", "Time from a request's arrival in Django to its answer.",
    ["route", "method"], buckets=REQUEST,
)
step_duration = Histogram(
    "zm_step_duration_seconds", "Time per named step of remember and recall (the steps of Server-Timing).",
    ["operation", "step"], buckets=FAST,
)
embedding_duration = Histogram(
    "zm_embedding_duration_seconds", "Time to embed one call's texts with the packaged model.",
    ["backend"], buckets=FAST,
)
rate_limited = Counter("zm_rate_limited", "Requests refused with 429 rate_limited, by limit.", ["limit"])

pool_max = Gauge("zm_db_pool_max_connections", "Most connections the database pools may open.",
                 multiprocess_mode="livesum")
pool_open = Gauge("zm_db_pool_open_connections", "Connections the database pools hold open.",
                  multiprocess_mode="livesum")
pool_in_use = Gauge("zm_db_pool_in_use_connections", "Pooled connections lent to a request right now.",
                    multiprocess_mode="livesum")
pool_waiting = Gauge("zm_db_pool_waiting_requests", "Requests waiting for a pooled connection right now.",
                     multiprocess_mode="livesum")
db_lock_failures = Counter(
    "zm_db_lock_failures", "Deadlocks and serialization failures Postgres reported, by route pattern (or rq:<job>) "
    "and kind (deadlock, serialization): a lock-order defect each (telemetry/lock_failures.py).", ["route", "kind"],
)
pool_timeouts = Counter("zm_db_pool_timeouts", "Requests that gave up waiting for a pooled connection (503).")

job_duration = Histogram("zm_job_duration_seconds", "RQ job run time, by job and outcome (ok, failed).",
                         ["rq_job", "outcome"], buckets=SLOW)
job_wait = Histogram("zm_job_wait_seconds", "Time an RQ job waited in the queue before a worker started it.",
                     ["rq_job"], buckets=SLOW)

outbox_requeued = Counter("zm_outbox_requeued", "Reviews the outbox flusher queued again (recorded while Redis was "
                          "down, or whose worker died mid-review).")

judge_calls = Counter("zm_judge_calls", "Judge calls of reviews, by backend and outcome (ok, unavailable).",
                      ["backend", "outcome"])
judge_duration = Histogram("zm_judge_duration_seconds", "Time of one review's judge call (all its pairs).",
                           ["backend"], buckets=SLOW)
judge_verdicts = Counter("zm_judge_verdicts", "Verdicts, by the judge that gave them (local, vllm, fallback) and "
                         "relation.", ["judge", "relation"])
judge_vllm_batches = Counter("zm_judge_vllm_batches", "Batches sent to the vLLM judge, by outcome (ok, failed, "
                             "circuit_open: not sent).", ["outcome"])
judge_breaker_open = Gauge("zm_judge_breaker_open", "1 while the vLLM judge's circuit breaker is open.",
                           multiprocess_mode="livemax")
