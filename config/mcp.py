"""The MCP endpoint (`/mcp`): the memory tools for agents over MCP's streamable HTTP transport (seed 000's names).

A tool is a REST operation under an agent's name, with nothing of its own but its description:

- the same bearer token, checked by the REST authentication class before MCP reads the request (a missing, invalid
  or revoked token: HTTP 401 with the error envelope and ``WWW-Authenticate``, as REST answers and as MCP's
  authorization spec asks, so a client reports a bad token at connect time instead of an agent failing on every call);
- per call, the same rate limit, the same input serializer, the same slow work (embedding) before the one
  transaction, then ``rls.tenant_scope`` -> ``principal_for`` -> the same service or selector and the same output
  serializer as the REST view (memory/api, hygiene/api);
- the tool's input and output JSON schemas are the REST operation's own, taken from the OpenAPI document, so the
  shapes cannot drift; arguments are validated by the serializers, not by the SDK, so a bad argument gets the REST
  error and message;
- an error becomes a tool result with ``isError`` whose text is the REST envelope ``{"error": {code, message,
  details}}``: the session goes on.

It is built on the SDK's low-level ``Server`` rather than ``MCPServer``: MCPServer derives each tool's schema and its
argument validation from a Python signature (pydantic), which would be a second set of input rules with other error
messages, and it parses string arguments that look like JSON (a memory whose content is ``[1, 2]``) into lists.

The transport is stateless with JSON responses: every POST stands alone (any web worker can answer it, nothing is
kept between calls) and the Django work runs on the web worker's thread pool (config/asgi.py), which bounds the
pooled database connections it borrows; each call hands its connection back to the pool when it ends.
"""
import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import cache, partial
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.db import connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent, ToolAnnotations
from mcp_types import Tool as McpTool
from mcp_types.jsonrpc import INVALID_PARAMS
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from config.errors import Code, api_exception_handler, envelope
from config.parsers import check_storable
from config.timing import StepTimer
from hygiene import services as hygiene_services
from hygiene.api import ConflictOutput, ConflictResolveView, ConflictsView
from memory import selectors, services
from memory.api import ChecksView, ForgetView, LinksView, LoopsView, MemoriesView, MemoryDetailView, RecallView
from memory.api.objects import CheckOutput, LinkOutput, MemoryOutput
from tenants import rls
from tenants.auth import BearerTokenAuthentication, Identity, Principal, principal_for
from tenants.ratelimit import rate_limit_check
from tenants.views import validated

logger = logging.getLogger(__name__)
# The SDK logs each stateless POST's transport lifecycle at INFO ("Terminating session: None"): one more line per call
# beside the server's access log, and time spent writing it. Its warnings and errors still show.
logging.getLogger("mcp").setLevel(logging.WARNING)

PATH = "/mcp"
_IDENTITY = "zero_memory.identity"  # the ASGI scope key that carries the caller from the token check to the tool

# What an agent reads once per session (clients put it into the model's context): seed 000's workflow.
INSTRUCTIONS = (
    "zero-memory keeps memories for you and your team, and knows which version of a fact is current. "
    "Recall before you write. When a new memory replaces a stored one, say so: remember it with "
    '{"type": "supersedes", "dst": "<old id>", "reason": "<what changed>"} in links; the old version is retired '
    "at once, stays readable as history, and restore_memory undoes it. When you declare no supersedes, remember "
    "answers with similar_existing: if one of them is the fact you just replaced, send the same remember again with a "
    "supersedes link to its id. Do not forget and re-remember to update a fact: that loses the version chain."
)

Work = Callable[[Principal, StepTimer], dict]  # runs inside the caller's one transaction; returns the REST body


@dataclass(frozen=True)
class ToolSpec:
    name: str
    operation: str  # the operationId of the REST operation whose schemas (and code) the tool shares
    description: str
    prepare: Callable[[dict], Work]  # outside any transaction: validation and slow work; returns what runs inside
    read_only: bool = False
    arguments: dict[str, str] | None = None  # descriptions of arguments, added to the operation's schema


def _id(arguments: dict, name: str) -> str:
    """An id that REST takes in the path (an unknown one answers 404 there, as here)."""
    value = arguments.get(name)
    if value is None:
        raise exceptions.ValidationError({name: ["This field is required."]})
    if not isinstance(value, str):
        raise exceptions.ValidationError({name: ["Not a valid string."]})
    return value


def _remember(arguments: dict) -> Work:
    prepared = MemoriesView.prepare(arguments)
    return lambda principal, steps: MemoriesView.remember(principal, prepared, steps)[0]


def _recall(arguments: dict) -> Work:
    prepared = RecallView.prepare(arguments)
    return lambda principal, steps: RecallView.recall(principal, prepared, steps)


def _forget(arguments: dict) -> Work:
    memory_id, data = _id(arguments, "memory_id"), validated(ForgetView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        memory = services.memory_forget(principal=principal, memory_id=memory_id, reason=data.get("reason"))
        return {"memory": MemoryOutput(memory).data}

    return work


def _restore(arguments: dict) -> Work:
    memory_id = _id(arguments, "memory_id")

    def work(principal: Principal, _steps: StepTimer) -> dict:
        return {"memory": MemoryOutput(services.memory_restore(principal=principal, memory_id=memory_id)).data}

    return work


def _link(arguments: dict) -> Work:
    data = validated(LinksView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        return {"link": LinkOutput(services.memory_link(principal=principal, **data)).data}

    return work


def _get_memory(arguments: dict) -> Work:
    memory_id = _id(arguments, "memory_id")
    return lambda _principal, _steps: MemoryDetailView.detail(memory_id)


def _list_conflicts(arguments: dict) -> Work:
    status = validated(ConflictsView.Query, arguments).get("status")
    return lambda _principal, _steps: ConflictsView.results(status)


def _resolve_conflict(arguments: dict) -> Work:
    conflict_id, data = _id(arguments, "conflict_id"), validated(ConflictResolveView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        conflict = hygiene_services.conflict_resolve(
            principal=principal, conflict_id=conflict_id, decision=data["decision"], winner=data.get("winner")
        )
        return {"conflict": ConflictOutput(conflict).data}

    return work


def _list_loops(arguments: dict) -> Work:
    query = validated(LoopsView.Query, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        loops = selectors.loop_list(user=principal.user, state=query["state"], project_slug=query.get("project"))
        return {"results": MemoryOutput(loops, many=True).data}

    return work


def _add_check(arguments: dict) -> Work:
    memory_id, data = _id(arguments, "memory_id"), validated(ChecksView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        check = services.memory_check_record(principal=principal, memory_id=memory_id, **data)
        return {"check": CheckOutput(check).data}

    return work


TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in [
    ToolSpec(
        "remember", "remember",
        "Store a memory for yourself (scope personal) or your project's team (scope project). Recall the topic "
        "first. If this memory replaces one that is stored, declare it in links as "
        '{"type": "supersedes", "dst": "<old id>", "reason": "<what changed>"}: the old version is retired in the '
        "same write and stays readable as history (restore_memory undoes it). When you declared no supersedes, the "
        "answer lists similar_existing, your nearest live memories, with a hint: if one of them is the fact you just "
        "replaced, call remember again with the same content and a supersedes link to its id (the repeat is "
        "absorbed, the declaration still applies). A watcher token cannot declare supersedes.",
        _remember,
        arguments={
            "content": "The memory, one self-contained statement (1 to 16000 characters).",
            "kind": "What it is; task and open-question are loops that stay open until superseded.",
            "scope": "personal: only you, across your projects; project: the project's members. Default: project "
                     "when a project is given or the token has one.",
            "project": "The project's slug; default the token's project.",
            "links": 'Relations to stored memories. {"type": "supersedes", "dst": "mem_...", "reason": "..."} '
                     "retires the memory this one replaces (at most 10).",
            "session_id": "Your conversation's id: a near-verbatim repeat in the same session is absorbed.",
            "valid_from": "When the fact starts to hold (ISO-8601).",
            "valid_until": "When the fact stops holding (ISO-8601); after it, recall flags the memory expired.",
            "metadata": "Any JSON object, up to 8 KB.",
        },
    ),
    ToolSpec(
        "recall", "recall",
        "Search the memories you can see, by meaning and by words. Call it before remember, to find the memory a "
        "new one replaces. Results are current versions, best first, each with flags (expired, superseded, "
        "in_conflict, provisional, open_loop, failed_check) and why it was found; read warnings first: a failed "
        "check there says a memory may be wrong. Two memories in an open conflict come back together. "
        "include_history adds superseded versions, each ranked below its successor; as_of shows the store as it "
        "stood at that time.",
        _recall, read_only=True,
        arguments={
            "query": "What you want to know, in your own words.",
            "project": "Only this project's memories (and your personal ones).",
            "k": "How many results (1 to 50, default 10).",
            "include_history": "Also return superseded versions, flagged, each with its successor and the reason.",
            "as_of": "A past time (ISO-8601): each memory as it stood then.",
        },
    ),
    ToolSpec(
        "forget", "memory_forget",
        "Retire a live memory that is wrong or no longer wanted (status forgotten; restore_memory undoes it). To "
        "replace a fact with a newer version, do not forget it: remember the new one with a supersedes link, which "
        "keeps the version chain.",
        _forget,
        arguments={"memory_id": "The memory's id (mem_...).", "reason": "Why it is forgotten."},
    ),
    ToolSpec(
        "restore_memory", "memory_restore",
        "Undo a forget or a supersede exactly: the memory is live again, its successor stays live, and a task or "
        "question closed by the supersede reopens.",
        _restore,
        arguments={"memory_id": "The retired memory's id (mem_...)."},
    ),
    ToolSpec(
        "link", "link_create",
        "Record a relation between two stored memories: relates_to, derived_from, contradicts, depends_on or "
        "supersedes. A link is a graph edge only: even supersedes retires nothing and closes no loop. To replace a "
        "memory, remember the newer one with a supersedes link instead.",
        _link,
        arguments={"src": "The memory the relation starts from (mem_...).", "dst": "The memory it points to."},
    ),
    ToolSpec(
        "get_memory", "memory_detail",
        "Read one memory with its version chain (oldest to newest, through supersedes links), its links, events, "
        "checks and conflicts.",
        _get_memory, read_only=True,
        arguments={"memory_id": "The memory's id (mem_...)."},
    ),
    ToolSpec(
        "list_conflicts", "conflicts_list",
        "List conflicts that the hygiene judge found between memories you can see (status open: the review queue), "
        "with the judge's relation, confidence and rationale. Decide one with resolve_conflict.",
        _list_conflicts, read_only=True,
    ),
    ToolSpec(
        "resolve_conflict", "conflicts_resolve",
        'Decide an open conflict: {"decision": "supersede", "winner": "<id>"} retires the other memory of the pair; '
        '{"decision": "keep_both"} records that both hold. A watcher token cannot resolve.',
        _resolve_conflict,
        arguments={"conflict_id": "The conflict's id (cfl_...).", "winner": "With supersede: the memory that stays."},
    ),
    ToolSpec(
        "list_loops", "loops",
        "List open tasks and open questions (or, with state closed, the closed ones). A loop closes when a newer "
        "memory supersedes it: remember the outcome with a supersedes link to the task or question.",
        _list_loops, read_only=True,
    ),
    ToolSpec(
        "add_check", "memory_check",
        "Record that you verified a memory: outcome pass or fail, with detail. A failed check naming corrected_by "
        "(a memory that states the right fact) retires the checked memory in favour of the correction; without it, "
        "recall shows the failure as a warning.",
        _add_check,
        arguments={"memory_id": "The checked memory's id (mem_...).",
                   "corrected_by": "With fail: the id of a memory that states the right fact."},
    ),
]}


# The schemas: the REST operations' own, from the OpenAPI document that /api/schema/ serves.

@cache
def _openapi() -> dict:
    return json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))


def _operation(operation_id: str) -> dict:
    for methods in _openapi()["paths"].values():
        for operation in methods.values():
            if operation.get("operationId") == operation_id:
                return operation
    raise LookupError(f"no operation {operation_id!r} in the OpenAPI document")


def _refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"].rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _self_contained(schema: dict) -> dict:
    """The schema with the components it refers to under ``$defs`` (MCP clients resolve refs within the schema)."""
    components = _openapi()["components"]["schemas"]
    needed, pending = {}, list(_refs(schema))
    while pending:
        name = pending.pop()
        if name not in needed:
            needed[name] = components[name]
            pending.extend(_refs(components[name]))
    text = json.dumps({**schema, "$defs": needed} if needed else schema)
    return json.loads(text.replace('"#/components/schemas/', '"#/$defs/'))


def _inlined(node: object) -> object:
    """The schema with every reference replaced by the component (inputs: some clients resolve no refs in them)."""
    if isinstance(node, list):
        return [_inlined(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        component = _openapi()["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
        return _inlined({**component, **{k: v for k, v in node.items() if k != "$ref"}})
    return {key: _inlined(value) for key, value in node.items()}


def _input_schema(spec: ToolSpec) -> dict:
    operation = _operation(spec.operation)
    schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None:
        name = body["$ref"].rsplit("/", 1)[-1]
        component = _openapi()["components"]["schemas"][name]
        schema["properties"].update(component.get("properties", {}))
        schema["required"] += component.get("required", [])
    for parameter in operation.get("parameters", []):  # path ids and query parameters become arguments
        schema["properties"][parameter["name"]] = dict(parameter["schema"])
        if parameter.get("required"):
            schema["required"].append(parameter["name"])
    for name, description in (spec.arguments or {}).items():
        schema["properties"][name] = {**schema["properties"][name], "description": description}
    return _inlined(schema)


def _output_schema(spec: ToolSpec) -> dict:
    responses = _operation(spec.operation)["responses"]
    schema = (responses.get("200") or responses["201"])["content"]["application/json"]["schema"]
    if "$ref" in schema:  # MCP wants an object schema at the root, not a reference to one
        schema = _openapi()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return _self_contained(schema)


@cache
def tools() -> list[McpTool]:
    return [
        McpTool(
            name=spec.name, description=spec.description, input_schema=_input_schema(spec),
            output_schema=_output_schema(spec),
            annotations=ToolAnnotations(read_only_hint=spec.read_only, destructive_hint=False, open_world_hint=False),
        )
        for spec in TOOLS.values()
    ]


# Calls: the same steps as TenantAPIView, in the same order.

def _error_answer(error: Exception) -> tuple[int, dict]:
    """The REST status and envelope of an error, through the REST exception handler (config/errors.py)."""
    response = api_exception_handler(error, {})
    if response is None:  # not an API error: a bug. Logged with its traceback; the agent gets what REST's 500 says.
        logger.error("MCP call failed", exc_info=error)
        return 500, envelope(Code.SERVER_ERROR, "Something went wrong on our side; it has been logged.")
    body = response.data if isinstance(response, Response) else json.loads(response.content)
    return response.status_code, body


def _call(spec: ToolSpec, identity: Identity, arguments: dict) -> tuple[str, dict, bool]:
    """(JSON text, body, is_error), on a web thread. The thread's database connections go back to the pool before it
    returns, as Django hands them back at the end of a request: a pool thread that kept one would starve the others."""
    steps = StepTimer()  # the same named steps as TenantAPIView's, for recall's trace
    try:
        rate_limit_check(identity)  # per tool call, as REST counts per request
        steps.lap("rate_limit")
        check_storable(arguments)  # what REST's JSON parser refuses in a body: NUL, lone surrogates, infinity, depth
        work = spec.prepare(arguments)
        steps.lap("prepare")
        with rls.tenant_scope(identity.scope):
            principal = principal_for(identity)
            steps.lap("identity")
            body, is_error = work(principal, steps), False
    except Exception as error:  # noqa: BLE001 - every error is answered; _error_answer logs the unexpected ones
        body, is_error = _error_answer(error)[1], True
    finally:
        connections.close_all()
    text = json.dumps(body, cls=JSONEncoder, ensure_ascii=False)  # DRF's encoder: the bytes REST would send
    return text, json.loads(text), is_error


def _authenticate(authorization: str) -> Identity | tuple[int, dict]:
    """The caller, or the error answer (401, or 503 without a database): REST's bearer authentication, on a web
    thread that hands its connection back."""
    try:
        authenticated = BearerTokenAuthentication().authenticate(SimpleNamespace(headers={"authorization": authorization}))
        if authenticated is None:
            raise exceptions.NotAuthenticated()
        return authenticated[1]
    except Exception as error:  # noqa: BLE001 - every error is answered; _error_answer logs the unexpected ones
        return _error_answer(error)
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
        caller = await self._in_thread(partial(_authenticate, authorization))
        if isinstance(caller, tuple):
            status, body = caller
            challenge = [(b"www-authenticate", b'Bearer realm="zero-memory"')] if status == 401 else []
            await _send_json(send, status, body, challenge)
            return
        await self.app({**scope, _IDENTITY: caller}, receive, send)

    async def _list_tools(self, ctx, params) -> ListToolsResult:
        return ListToolsResult(tools=tools())

    async def _call_tool(self, ctx, params: CallToolRequestParams) -> CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        identity: Identity = ctx.request.scope[_IDENTITY]
        text, body, is_error = await self._in_thread(partial(_call, spec, identity, params.arguments or {}))
        content = [TextContent(type="text", text=text)]
        if is_error:  # the envelope as text only: structured content is the output schema's, for successes
            return CallToolResult(content=content, is_error=True)
        return CallToolResult(content=content, structured_content=body)


async def _send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), *headers]})
    await send({"type": "http.response.body", "body": payload})
