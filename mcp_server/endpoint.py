"""The ASGI app of ``/mcp`` (mcp_server/): the token check, then the SDK's streamable HTTP transport, whose tool calls
run the steps of TenantAPIView on the web worker's threads."""
import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from contextlib import AbstractAsyncContextManager
from functools import partial
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.db import connections
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent
from mcp_types.jsonrpc import INVALID_PARAMS
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from plumbing.errors import Code, api_exception_handler, envelope
from mcp_server.schemas import tools
from mcp_server.tools import INSTRUCTIONS, TOOLS, ToolSpec
from plumbing.parsers import check_storable
from plumbing.timing import StepTimer
from tenants import entry
from tenants.auth import BearerTokenAuthentication, Identity, challenge, require_write

logger = logging.getLogger(__name__)
# The SDK logs each stateless POST's transport lifecycle at INFO ("Terminating session: None"): one more line per call
# beside the server's access log, and time spent writing it. Its warnings and errors still show.
logging.getLogger("mcp").setLevel(logging.WARNING)

PATH = "/mcp"
TIMED_TOOLS = {"remember", "recall"}  # their steps go into the step metrics, as over REST
_IDENTITY = "zero_memory.identity"  # the ASGI scope key that carries the caller from the token check to the tool


def error_answer(error: Exception) -> tuple[int, dict]:
    """The REST status and envelope of an error, through the REST exception handler (plumbing/errors.py)."""
    response = api_exception_handler(error, {})
    if response is None:  # not an API error: a bug. Logged with its traceback; the agent gets what REST's 500 says.
        logger.error("MCP call failed", exc_info=error)
        return 500, envelope(Code.SERVER_ERROR, "Something went wrong on our side; it has been logged.")
    body = response.data if isinstance(response, Response) else json.loads(response.content)
    return response.status_code, body


def run_tool(spec: ToolSpec, identity: Identity, arguments: dict) -> tuple[str, dict, bool]:
    """(JSON text, body, is_error), on a web thread: each tool call enters as a REST request does (tenants/entry.py).
    The thread's database connections go back to the pool before it returns, as Django hands them back at the end of
    a request: a pool thread that kept one would starve the others."""
    # The same named steps as TenantAPIView's, for recall's trace and the step metrics of remember and recall.
    steps = StepTimer(spec.name if spec.name in TIMED_TOOLS else None)
    try:
        # REST's JSON parser refuses in a body what check_storable refuses here: NUL, lone surrogates, infinity, depth
        with entry.enter(identity, steps, check=lambda: check_storable(arguments),
                         prepare=lambda: spec.prepare(arguments)) as entered:
            if not spec.read_only:  # a read-only OAuth grant calls the read-only tools only
                require_write(entered.principal, f"the {spec.name} tool", PATH)
            body, is_error = entered.prepared(entered.principal, steps), False
    except Exception as error:  # noqa: BLE001 - every error is answered; error_answer logs the unexpected ones
        body, is_error = error_answer(error)[1], True
    finally:
        steps.finish()
        connections.close_all()
    text = json.dumps(body, cls=JSONEncoder, ensure_ascii=False)  # DRF's encoder: the bytes REST would send
    return text, json.loads(text), is_error


def authenticate(authorization: str) -> Identity | tuple[int, dict]:
    """The caller, or the error answer (401, or 503 without a database): REST's bearer authentication, on a web
    thread that hands its connection back."""
    try:
        request = SimpleNamespace(headers={"authorization": authorization})  # all that the class reads of a request
        authenticated = BearerTokenAuthentication(resource_path=PATH, metadata_path=PATH).authenticate(request)
        if authenticated is None:
            raise exceptions.NotAuthenticated()
        return authenticated[1]
    except Exception as error:  # noqa: BLE001 - every error is answered; error_answer logs the unexpected ones
        return error_answer(error)
    finally:
        connections.close_all()


class McpEndpoint:
    """The ASGI app of ``/mcp``: the token check, then the SDK's streamable HTTP transport with our tools."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor  # the web worker's Django threads: MCP calls share their bound on connections
        self.server = Server("zero-memory", version="1", instructions=INSTRUCTIONS,
                             on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        # The SDK's DNS-rebinding protection guards servers that trust whoever reaches them, and its default host list
        # (localhost) would refuse a deployment's own names. Every request here needs a bearer token, which a web
        # page that rebinds a name to this server cannot have.
        self.app = self.server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True,
            max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,  # REST's limit on a body (1 MiB)
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    def running(self) -> AbstractAsyncContextManager[None]:
        """Enter for the life of the worker (config/asgi.py's lifespan): the transport's task group."""
        return self.server.session_manager.run()

    async def _in_thread(self, function: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, function)

    async def __call__(self, scope, receive, send) -> None:
        authorization = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), "")
        caller = await self._in_thread(partial(authenticate, authorization))
        if isinstance(caller, tuple):
            status, body = caller
            # MCP's authorization spec: the 401 names the protected-resource metadata, where an OAuth client starts.
            error = "invalid_token" if authorization else None
            headers = [(b"www-authenticate", challenge(PATH, error).encode())] if status == 401 else []
            await _send_json(send, status, body, headers)
            return
        await self.app({**scope, _IDENTITY: caller}, receive, send)

    async def _list_tools(self, ctx, params) -> ListToolsResult:
        return ListToolsResult(tools=tools())

    async def _call_tool(self, ctx, params: CallToolRequestParams) -> CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        identity: Identity = ctx.request.scope[_IDENTITY]
        text, body, is_error = await self._in_thread(partial(run_tool, spec, identity, params.arguments or {}))
        content = [TextContent(type="text", text=text)]
        if is_error:  # the envelope as text only: structured content is the output schema's, for successes
            return CallToolResult(content=content, is_error=True)
        return CallToolResult(content=content, structured_content=body)


async def _send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), *headers]})
    await send({"type": "http.response.body", "body": payload})
