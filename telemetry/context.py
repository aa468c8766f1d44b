"""Who and what the current request or job is, for the log lines and spans written while it runs: a request id,
and the caller's organization and token once it has authenticated. Ids only, never content or secrets."""
import re
import uuid
from contextvars import ContextVar
from dataclasses import dataclass

# A request id from the caller (X-Request-ID, e.g. set by a proxy) is kept when it is short and plain; any other is
# replaced, so a log line never carries what a client chose to put there.
_ACCEPTABLE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


@dataclass
class Context:
    request_id: str
    org_id: str | None = None
    token_id: str | None = None


_current: ContextVar[Context | None] = ContextVar("zero_memory_context", default=None)


def request_id_from(header: str | None) -> str:
    return header if header and _ACCEPTABLE_ID.fullmatch(header) else uuid.uuid4().hex


def begin(request_id: str):
    """Start a request's or a job's context; hand the returned token to ``end``."""
    return _current.set(Context(request_id=request_id))


def end(token) -> None:
    _current.reset(token)


def current() -> Context | None:
    return _current.get()


def note_caller(*, org_id, token_id) -> None:
    """The caller, once authenticated (tenants/entry.py)."""
    context = _current.get()
    if context is not None:
        context.org_id = str(org_id) if org_id else None
        context.token_id = str(token_id) if token_id else None
