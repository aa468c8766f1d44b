"""Per-token rate limits, shared by every web worker through Redis.

A fixed window per caller (a token, or a web session's user) that opens at the caller's first request: one atomic
Lua call increments the counter, gives a new window its expiry, and returns the count and the time left; one round
trip per request. Over the limit, the request answers 429 `rate_limited` with `Retry-After` (the seconds until the
window closes). Only authenticated callers are counted (TenantAPIView calls this after authentication), so a bad
token costs nobody anything.

Redis is a dependency of writes (the review queue) but not of reading or writing memories: when it does not answer,
the limiter fails open (logs, serves) and leaves Redis alone for a few seconds instead of paying a timeout per request.
"""
import logging
import math
import threading
import time
from functools import lru_cache

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

from plumbing.errors import Code, DomainError
from telemetry import metrics
from tenants.auth import Identity

logger = logging.getLogger(__name__)

FAIL_OPEN_SECONDS = 5.0  # after a Redis error, requests are served unlimited for this long before Redis is tried again
REDIS_TIMEOUT_SECONDS = 0.2  # connect and answer: a limiter that waits longer costs more than it protects

# INCR, and an expiry for a new window (or for a key that somehow lost its own, so no caller is locked out for
# ever); returns the count and the milliseconds until the window closes. Atomic, one round trip.
_WINDOW = """
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""


class RateLimited(DomainError):
    status = 429

    def __init__(self, *, limit: int, window: int, retry_after: int) -> None:
        super().__init__(
            Code.RATE_LIMITED,
            f"More than {limit} requests in {window} s from this token; retry in {retry_after} s.",
            {"limit": limit, "window_seconds": window, "retry_after": retry_after},
        )
        self.headers = {"Retry-After": str(retry_after)}


class _Limiter:
    """One Redis client (and its connection pool) per process and URL, with the fail-open state."""

    def __init__(self, url: str) -> None:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=REDIS_TIMEOUT_SECONDS, socket_timeout=REDIS_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 0),  # no retries: one failure means fail open
        )
        self.window_script = client.register_script(_WINDOW)
        self.skip_until = 0.0
        self.lock = threading.Lock()

    def count(self, key: str, window_ms: int) -> tuple[int, int] | None:
        """(requests in the caller's window, ms left in it), or None while Redis is unavailable."""
        if time.monotonic() < self.skip_until:
            return None
        try:
            count, ttl = self.window_script(keys=[key], args=[window_ms])
            return int(count), int(ttl)
        except redis.RedisError as error:
            with self.lock:
                if time.monotonic() >= self.skip_until:  # log once per outage window, not once per thread
                    logger.warning("rate limiter: Redis unavailable (%s); serving without limits for %.0f s",
                                   error, FAIL_OPEN_SECONDS)
                    self.skip_until = time.monotonic() + FAIL_OPEN_SECONDS
            return None

    def peek(self, key: str) -> int | None:
        """The count in a window without adding to it, or None while Redis is unavailable."""
        if time.monotonic() < self.skip_until:
            return None
        try:
            return int(self.window_script.registered_client.get(key) or 0)
        except redis.RedisError:
            return None


@lru_cache(maxsize=4)
def limiter_for(url: str) -> _Limiter:
    return _Limiter(url)


def rate_limit_check(identity: Identity) -> None:
    """Count this request against its caller; raise RateLimited past RATE_LIMIT_PER_MINUTE in the window."""
    limit, window = settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS
    if limit <= 0:
        return
    caller = f"tok:{identity.token_id}" if identity.token_id else f"user:{identity.scope.user_id}"
    counted = limiter_for(settings.REDIS_URL).count(f"zm:rate:{caller}", window * 1000)
    if counted is None:
        return
    count, ms_left = counted
    if count > limit:
        metrics.rate_limited.labels("token").inc()
        raise RateLimited(limit=limit, window=window, retry_after=max(1, math.ceil(ms_left / 1000)))
