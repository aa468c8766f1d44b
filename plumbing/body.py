"""Read a request's body whole on the event loop before Django's thread pool sees the request.

a2wsgi hands a request to one of a worker's WEB_THREADS threads at once, and that thread then waits for the body.
Measured from outside: 16 connections that send headers and a Content-Length but never the body held every thread
of a 2-worker server (nothing answered, /healthz included, for as long as they stayed open), no token needed (a
sign-in form is enough). Waiting on the event loop costs a few kilobytes per connection instead of a thread, and a
body slower than BODY_TIMEOUT_SECONDS, or over the upload limit, is answered here (408, 413) in the error envelope.
"""
import asyncio
import json

from django.conf import settings

from plumbing.errors import Code, envelope


async def _answer(send, status: int, code: Code, message: str, details: dict | None = None) -> None:
    body = json.dumps(envelope(code, message, details)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive, limit: int) -> bytes | None:
    """The whole body; None when the client went away. Raises OverflowError past ``limit`` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise OverflowError
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _declared_length(scope) -> int:
    value = dict(scope["headers"]).get(b"content-length", b"0")
    return int(value) if value.isdigit() else 0


def whole_body(app):
    """ASGI middleware: ``app`` gets the body in one message, already received."""
    # Django refuses bodies over DATA_UPLOAD_MAX_MEMORY_SIZE with the same 413; the margin leaves that answer (and its
    # wording per route) to Django for anything it could still read.
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 64 * 1024

    async def middleware(scope, receive, send) -> None:
        if scope["type"] != "http" or _declared_length(scope) > limit:
            # Not HTTP, or a Content-Length Django refuses unread (413, after authentication as API.md says).
            return await app(scope, receive, send)
        try:
            body = await asyncio.wait_for(_read_body(receive, limit), settings.BODY_TIMEOUT_SECONDS)
        except TimeoutError:
            return await _answer(send, 408, Code.BODY_TIMEOUT,
                                 f"The request body did not arrive within {settings.BODY_TIMEOUT_SECONDS:g} seconds.")
        except OverflowError:
            return await _answer(send, 413, Code.BODY_TOO_LARGE,
                                 f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
                                 {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE})
        if body is None:
            return None
        delivered = False

        async def replay():
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: only a disconnect can come
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return middleware
