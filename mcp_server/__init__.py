"""The MCP endpoint (`/mcp`): the memory tools for agents over MCP's streamable HTTP transport.

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

Modules: ``tools`` (the names, descriptions and what each tool runs), ``schemas`` (from the OpenAPI document),
``endpoint`` (the ASGI app: the token check, the calls, the error answers).
"""
from mcp_server.endpoint import PATH, McpEndpoint
from mcp_server.schemas import tools

__all__ = ["PATH", "McpEndpoint", "tools"]
