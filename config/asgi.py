"""The ASGI application that `make run` serves (uvicorn, one process per worker; see embedded_stack/launcher.py).

Django answers HTTP through its WSGI handler, run by a2wsgi on a fixed pool of WEB_THREADS threads per worker.
Measured on a 404 that touches nothing (so only the server path counts): 0.8 ms per request this way, 2.3-5 ms
through Django's own ASGI handler, which starts a new thread for every request and passes the request between
the event loop and that thread several times. The pool also bounds the requests a worker runs at once, and so the
database connections it borrows (keep DB_POOL_MAX_SIZE >= WEB_THREADS). The MCP endpoint (mcp_server/) is served
beside Django at /mcp; its tool calls run on the same pool of threads, so the bound holds for both.

The lifespan events are where a worker gets ready before it accepts its first request: the embedding model is
loaded and run once, so that no request pays for it, and the connection pool is opened (its first connections are
made in the background), and the MCP transport starts. At shutdown the pool is closed, so Postgres sees its
connections end cleanly.
"""
import asyncio
import os
import time
from contextlib import AsyncExitStack

import django
from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from telemetry import exposition, metrics, tracing  # noqa: E402 - needs the Django set-up above

tracing.configure()  # before the handler loads the middleware: the Django instrumentation adds its own
django_application = WSGIMiddleware(get_wsgi_application(), workers=settings.WEB_THREADS)

from plumbing.body import whole_body  # noqa: E402 - needs the Django set-up above

django_bodies_first = whole_body(django_application)  # a slow body waits on the event loop, not in a thread

from mcp_server import PATH as MCP_PATH, McpEndpoint, tools  # noqa: E402 - needs the Django set-up above

mcp_application = McpEndpoint(executor=django_application.executor)


def _start_up() -> None:
    from django.db import connections

    from memory.embeddings import embed_one

    embed_one("warm up the embedding model")
    tools()  # the MCP tools' schemas, from the OpenAPI document: built once, before the first tools/list
    pool = connections["default"].pool
    if pool is not None:
        pool.open()  # does not wait: a database that is down makes /healthz answer 503, not the worker fail
        exposition.sample_pool_every()


def _shut_down() -> None:
    from django.db import connections

    connections["default"].close_pool()
    exposition.process_ended()


async def _lifespan(receive, send) -> None:
    async with AsyncExitStack() as running:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await asyncio.to_thread(_start_up)
                    await running.enter_async_context(mcp_application.running())
                except Exception as error:  # noqa: BLE001 - the server reports it and does not start the worker
                    await send({"type": "lifespan.startup.failed", "message": f"{type(error).__name__}: {error}"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await running.aclose()  # the MCP transport first: it may still hand work to the pool
                await asyncio.to_thread(_shut_down)
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _measured(app, route: str, scope, receive, send) -> None:
    """The request metrics of an endpoint served beside Django (Django's are taken by telemetry/middleware.py)."""
    started, status = time.perf_counter(), 500

    async def send_and_see(message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    try:
        await app(scope, receive, send_and_see)
    finally:
        metrics.http_requests.labels(route, scope["method"], status).inc()
        metrics.http_duration.labels(route, scope["method"]).observe(time.perf_counter() - started)


async def application(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
    elif scope["type"] == "http" and (scope["path"] == MCP_PATH or scope["path"].startswith(MCP_PATH + "/")):
        await _measured(mcp_application, "mcp", scope, receive, send)
    else:
        await django_bodies_first(scope, receive, send)
