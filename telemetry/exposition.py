"""/metrics: the Prometheus text of every process that shares PROMETHEUS_MULTIPROC_DIR (the web workers, and in
`make run` the RQ worker and the flusher too), or of this process alone without it (tests, manage.py).

Not public: it answers only a request carrying ``Authorization: Bearer <METRICS_TOKEN>``, and is off (404) while
METRICS_TOKEN is unset. A process without an HTTP server of its own (the RQ worker pod in k8s) serves the same text
on METRICS_PORT (``serve_in_background``)."""
import hmac
import os
import threading
import time
from wsgiref.simple_server import WSGIRequestHandler, make_server

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from telemetry import metrics

POOL_SAMPLE_SECONDS = 5.0


def registry(*extra_collectors) -> CollectorRegistry:
    """What one scrape reads: every process's files in multi-process mode, else this process's metrics."""
    scraped = CollectorRegistry()
    if settings.PROMETHEUS_MULTIPROC_DIR:
        multiprocess.MultiProcessCollector(scraped)
    else:
        scraped.register(_ThisProcess())
    for collector in extra_collectors:
        scraped.register(collector)
    return scraped


class _ThisProcess:
    """This process's metrics (the default registry's), beside the scrape-time collectors of one scrape."""

    def collect(self):
        return REGISTRY.collect()


def authorized(header: str | None) -> bool:
    token = settings.METRICS_TOKEN
    return bool(token) and hmac.compare_digest((header or "").encode(), f"Bearer {token}".encode())


def metrics_view(*extra_collectors):
    """The Django view of /metrics, with the scrape-time collectors given (hygiene/gauges.py)."""

    def view(request: HttpRequest) -> HttpResponse:
        if not settings.METRICS_TOKEN:
            return HttpResponse(status=404)
        if not authorized(request.headers.get("Authorization")):
            response = HttpResponse("metrics need the scrape token: Authorization: Bearer <METRICS_TOKEN>\n",
                                    status=401, content_type="text/plain")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
        sample_pool()
        return HttpResponse(generate_latest(registry(*extra_collectors)), content_type=CONTENT_TYPE_LATEST)

    return view


def serve_in_background(port: int, *extra_collectors) -> None:
    """/metrics on ``port`` from a daemon thread (the RQ worker's pod has no web server), behind the same token."""
    def app(environ, start_response):
        if not authorized(environ.get("HTTP_AUTHORIZATION")):
            start_response("401 Unauthorized", [("Content-Type", "text/plain")])
            return [b"metrics need the scrape token\n"]
        sample_pool()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST)])
        return [generate_latest(registry(*extra_collectors))]

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args) -> None:  # a scrape every 15 s is not news
            pass

    server = make_server("0.0.0.0", port, app, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()


def process_ended() -> None:
    """A web worker that stops cleanly takes its gauges out of the sums (a killed one's stay until `make run` or the
    pod starts again, which empties the directory)."""
    if settings.PROMETHEUS_MULTIPROC_DIR:
        multiprocess.mark_process_dead(os.getpid())


_last_timeouts = 0
_sample_lock = threading.Lock()


def sample_pool() -> None:
    """This process's database pool, into the pool gauges (psycopg_pool's own statistics)."""
    global _last_timeouts
    pool = getattr(connections["default"], "pool", None)
    if pool is None:
        return
    stats = pool.get_stats()
    with _sample_lock:
        metrics.pool_max.set(stats["pool_max"])
        metrics.pool_open.set(stats["pool_size"])
        metrics.pool_in_use.set(stats["pool_size"] - stats["pool_available"])
        metrics.pool_waiting.set(stats["requests_waiting"])
        timeouts = stats.get("requests_errors", 0)
        if timeouts > _last_timeouts:
            metrics.pool_timeouts.inc(timeouts - _last_timeouts)
        _last_timeouts = timeouts


def sample_pool_every(seconds: float = POOL_SAMPLE_SECONDS) -> None:
    """A daemon thread that keeps this process's pool gauges current between scrapes."""
    def loop() -> None:
        while True:
            sample_pool()
            time.sleep(seconds)

    threading.Thread(target=loop, name="pool-gauges", daemon=True).start()
