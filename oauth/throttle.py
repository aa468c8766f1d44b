"""Requests per client address to the OAuth endpoints, counted in Redis (tenants/ratelimit.py's windows): these
answer before anyone is known, so the address is all there is to count by. Registration has its own, tighter limit
(OAUTH_REGISTRATIONS_PER_WINDOW); the token, revocation and authorization endpoints share OAUTH_REQUESTS_PER_WINDOW,
each counted apart. Redis unreachable: not limited (the limiter says so), as for the API."""
import math

from django.conf import settings
from django.http import HttpRequest, JsonResponse

from telemetry import metrics
from tenants.ratelimit import limiter_for


def retry_after(request: HttpRequest, endpoint: str, limit: int, window: int) -> int | None:
    """Seconds until this address may call ``endpoint`` again, or None while it is within ``limit`` per ``window``."""
    if limit <= 0:
        return None
    address = request.META.get("REMOTE_ADDR", "")
    counted = limiter_for(settings.REDIS_URL).count(f"zm:oauth-{endpoint}:{address}", window * 1000)
    if counted is None or counted[0] <= limit:
        return None
    metrics.rate_limited.labels(f"oauth_{endpoint}").inc()
    return max(1, math.ceil(counted[1] / 1000))


def endpoint_retry_after(request: HttpRequest, endpoint: str) -> int | None:
    return retry_after(request, endpoint, settings.OAUTH_REQUESTS_PER_WINDOW, settings.OAUTH_REQUEST_WINDOW_SECONDS)


def too_many(seconds: int) -> JsonResponse:
    """The token and revocation endpoints' answer: OAuth's error shape, 429 and Retry-After."""
    return JsonResponse({"error": "rate_limited", "error_description": f"Too many requests from this address; retry "
                         f"in {seconds} s."}, status=429, headers={"Retry-After": str(seconds), "Cache-Control": "no-store"})
