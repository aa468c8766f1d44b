"""The outermost middleware: a request id for every request (the caller's X-Request-ID when acceptable, else a new
one; answered in X-Request-ID), its metrics by route pattern, and one log line when it is answered:
route, method, status, duration, request id, organization and token ids. Never the path or query (a search's words
travel there), a body, or a header's value."""
import logging
import time

from django.conf import settings

from telemetry import context, metrics
from telemetry.logs import REQUEST_LOGGER

logger = logging.getLogger(REQUEST_LOGGER)
REQUEST_ID_HEADER = "X-Request-ID"


def route_of(request) -> str:
    """The URL pattern that answered (``api/v1/memories/<uuid:memory_id>``): bounded, unlike the path."""
    match = getattr(request, "resolver_match", None)
    if match is not None and match.route:
        return match.route
    if request.path.startswith(settings.STATIC_URL):
        return "static"
    return "unmatched"


class RequestTelemetry:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        request_id = context.request_id_from(request.headers.get(REQUEST_ID_HEADER))
        token = context.begin(request_id)
        try:
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            self.record(request, response.status_code, time.perf_counter() - started)
            return response
        finally:
            context.end(token)

    @staticmethod
    def record(request, status: int, seconds: float) -> None:
        route, method = route_of(request), request.method
        metrics.http_requests.labels(route, method, status).inc()
        metrics.http_duration.labels(route, method).observe(seconds)
        logger.info(
            "%s %s %s %.1f ms", method, route, status, seconds * 1000,
            extra={"route": route, "method": method, "status": status, "duration_ms": round(seconds * 1000, 2)},
        )
