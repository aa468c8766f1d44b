"""Log lines (settings.LOGGING): JSON, one object per line (LOG_FORMAT=json, the default), or plain text for a
person at a terminal (LOG_FORMAT=plain). Every line written while a request or a job runs carries its request id,
and the caller's organization and token ids once known (context.py)."""
import logging

from telemetry import context

REQUEST_LOGGER = "zero_memory.request"


class ContextFilter(logging.Filter):
    """Adds request_id, org_id and token_id to every record (None outside a request or job)."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = context.current()
        record.request_id = current.request_id if current else None
        record.org_id = current.org_id if current else None
        record.token_id = current.token_id if current else None
        return True
