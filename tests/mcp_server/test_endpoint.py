"""The MCP endpoint (mcp_server/) through the official MCP client, over real HTTP, against the server of `make run`
(embedded_stack.launcher.server_command) on the test database: the tools, seed 000's replace-a-fact workflow, the same
tokens and visibility as REST, errors as tool errors in the REST envelope, and no pooled connection kept by a call.

The server gets fewer pooled connections (2) than web threads (8), with a short wait for one: a tool call that kept
its thread's connection would leave the next calls on other threads waiting for the pool, and answering 503.
"""
import http.client
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from django.db import connections
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tenants import rls
from tenants.models import ApiToken
from tests.support.tenants import Tenant, build_tenant, issue_token, truncate_all_tables
from tests.support.stack import call, served, stack_env

pytestmark = pytest.mark.slow

TOOLS = {"remember", "recall", "forget", "restore_memory", "link", "get_memory", "list_conflicts",
         "resolve_conflict", "list_loops", "add_check"}


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[tuple[int, dict[str, Tenant], str]]:
    """(port, tenants, a watcher token of acme's admin): one served stack for the module; every table emptied after."""
    with django_db_blocker.unblock():
        try:
            tenants = {slug: build_tenant(slug) for slug in ("acme", "globex")}
            acme = tenants["acme"]
            with rls.tenant_scope(acme.scope):
                _, watcher = issue_token(acme, acme.admin, "watcher", ApiToken.Writer.WATCHER, acme.web)
            env = stack_env(WEB_THREADS="8", DB_POOL_MIN_SIZE="1", DB_POOL_MAX_SIZE="2", DB_POOL_TIMEOUT="2")
            with served(env, tmp_path_factory.mktemp("mcp") / "server.log") as port:
                yield port, tenants, watcher
        finally:
            for alias in connections:
                connections[alias].close()
            truncate_all_tables()


@asynccontextmanager
async def session(port: int, token: str) -> AsyncIterator[ClientSession]:
    """An initialized MCP session, as a client configured with the bearer header opens it."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (read, write):
            async with ClientSession(read, write) as mcp:
                await mcp.initialize()
                yield mcp


async def ok(mcp: ClientSession, tool: str, **arguments) -> dict:
    """A successful call's structured content (the client has checked it against the tool's output schema)."""
    result = await mcp.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content  # the text is the same JSON
    return result.structured_content


async def refused(mcp: ClientSession, tool: str, **arguments) -> dict:
    """A tool error's REST envelope."""
    result = await mcp.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    body = json.loads(result.content[0].text)
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def run(coroutine_function) -> None:
    anyio.run(coroutine_function)


def test_the_tools_are_listed_with_the_rest_operations_schemas(stack):
    port, tenants, _ = stack

    async def main():
        async with session(port, tenants["acme"].member_token) as mcp:
            listed = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        assert set(listed) == TOOLS
        remember = listed["remember"]
        assert "supersedes" in remember.description and "similar_existing" in remember.description
        assert "before remember" in listed["recall"].description
        assert remember.input_schema["required"] == ["content"]
        assert remember.input_schema["properties"]["kind"]["allOf"][0]["enum"][0] == "fact"  # refs inlined
        assert set(remember.output_schema["properties"]) >= {"memory", "similar_existing", "hint", "superseded"}
        assert listed["get_memory"].input_schema["required"] == ["memory_id"]
        assert listed["recall"].annotations.read_only_hint and not listed["forget"].annotations.read_only_hint

    run(main)


def test_an_agent_replaces_a_fact_recall_returns_the_new_version_first(stack):
    port, tenants, _ = stack
    token = tenants["acme"].member_token

    async def main():
        async with session(port, token) as mcp:
            old = await ok(mcp, "remember", content="The deploy window is Monday 10:00 UTC.", kind="fact")
            assert old["created"] is True and old["memory"]["project"] == "web"
            # Written without recalling first: the answer shows the predecessor, and says what to do.
            new = await ok(mcp, "remember", content="The deploy window moved to Friday 14:00 UTC.", kind="fact")
            old_id, new_id = old["memory"]["id"], new["memory"]["id"]
            assert new["similar_existing"][0]["id"] == old_id and "supersedes" in new["hint"]
            # Acting on similar_existing: the same content again, declaring the replacement.
            declared = await ok(mcp, "remember", content="The deploy window moved to Friday 14:00 UTC.", kind="fact",
                                links=[{"type": "supersedes", "dst": old_id, "reason": "moved to Friday"}])
            assert (declared["dedup"], declared["absorbed_into"]) == ("exact", new_id)
            assert declared["superseded"] == [old_id] and declared["similar_existing"] is None
            current = await ok(mcp, "recall", query="when is the deploy window?")
            assert current["results"][0]["memory"]["id"] == new_id
            assert old_id not in [hit["memory"]["id"] for hit in current["results"]]
            history = await ok(mcp, "recall", query="when is the deploy window?", include_history=True)
            ranked = [hit["memory"]["id"] for hit in history["results"]]
            assert ranked.index(new_id) < ranked.index(old_id)
            assert history["results"][ranked.index(old_id)]["superseded_by"] == new_id
            detail = await ok(mcp, "get_memory", memory_id=new_id)
            assert [m["id"] for m in detail["chain"]] == [old_id, new_id]
            # The REST answers to the same questions: the same shapes, the same chain.
            status, rest_detail = call(port, token, "GET", f"/api/v1/memories/{new_id}")
            assert status == 200 and set(rest_detail) == set(detail) and rest_detail["chain"] == detail["chain"]
            status, rest_recall = call(port, token, "POST", "/api/v1/recall", {"query": "when is the deploy window?"})
            assert status == 200 and set(rest_recall) == set(current)
            assert [hit["memory"] for hit in rest_recall["results"]] == [hit["memory"] for hit in current["results"]]
            assert set(rest_recall["trace"]) == set(current["trace"])
            assert set(current["trace"]["timings_ms"]) == set(rest_recall["trace"]["timings_ms"]) - {"authenticate"}
            # Reversible: restore brings the old version back to life, and the successor stays live.
            restored = await ok(mcp, "restore_memory", memory_id=old_id)
            assert restored["memory"]["status"] == "live" and restored["memory"]["superseded_by"] is None
            assert (await ok(mcp, "get_memory", memory_id=new_id))["memory"]["status"] == "live"

    run(main)


def test_a_watcher_token_cannot_supersede_and_nothing_is_stored(stack):
    port, tenants, watcher = stack
    acme = tenants["acme"]

    async def main():
        async with session(port, acme.admin_token) as mcp:
            target = await ok(mcp, "remember", content="Backups run nightly at 02:00.", project="web")
        async with session(port, watcher) as mcp:
            error = await refused(mcp, "remember", content="Backups run hourly now.", project="web",
                                  links=[{"type": "supersedes", "dst": target["memory"]["id"]}])
            assert error["code"] == "supersede_forbidden"
            assert (await refused(mcp, "forget", memory_id=target["memory"]["id"]))["code"] == "watcher_forbidden"
            # Provisional writes are allowed, as over REST.
            added = await ok(mcp, "remember", content="Backups may run hourly now (overheard).", project="web")
            assert added["memory"]["provenance"]["authoritative"] is False
            hits = (await ok(mcp, "recall", query="Backups run hourly now."))["results"]
        return target["memory"]["id"], hits

    target_id, hits = anyio.run(main)
    assert "Backups run hourly now." not in [hit["memory"]["content"] for hit in hits]
    status, body = call(port, acme.admin_token, "GET", f"/api/v1/memories/{target_id}")
    assert status == 200 and body["memory"]["status"] == "live"


def test_a_missing_invalid_or_revoked_token_is_refused_with_401(stack):
    port, tenants, _ = stack
    acme = tenants["acme"]
    status, minted = call(port, acme.admin_token, "POST", "/api/v1/tokens",
                          {"name": "short-lived agent", "writer": "agent", "project": "web"})
    assert status == 201

    def post(headers: dict) -> tuple[int, dict, str | None]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        connection.request("POST", "/mcp", json.dumps(body), {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
        response = connection.getresponse()
        answer = (response.status, json.loads(response.read()), response.getheader("WWW-Authenticate"))
        connection.close()
        return answer

    # MCP's authorization spec: the challenge names the protected-resource metadata, where an OAuth client starts.
    metadata = 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"'  # the default
    for headers, error in (({}, ""), ({"Authorization": "Bearer zm_not_a_token"}, 'error="invalid_token", '),
                           ({"Authorization": "Basic abc"}, 'error="invalid_token", ')):
        status, body, challenge = post(headers)
        assert (status, body["error"]["code"], challenge) == (
            401, "unauthenticated", f'Bearer realm="zero-memory", {error}{metadata}')

    async def main():
        async with session(port, minted["token"]) as mcp:
            assert (await ok(mcp, "list_loops"))["results"] == []
            # Revoked while the session is open: the very next call is refused.
            assert call(port, acme.admin_token, "DELETE", f"/api/v1/tokens/{minted['id']}")[0] == 204
            with pytest.raises(MCPError):
                await mcp.call_tool("list_loops", {})
        with pytest.raises(Exception):  # noqa: B017 - the client reports the 401 its own way; any refusal will do
            async with session(port, minted["token"]) as mcp:
                await mcp.list_tools()

    run(main)
    status, body, _ = post({"Authorization": f"Bearer {minted['token']}"})
    assert (status, body["error"]["message"]) == (401, "Invalid or revoked token.")


def test_a_token_of_another_org_sees_nothing(stack):
    port, tenants, _ = stack

    async def main():
        async with session(port, tenants["acme"].admin_token) as mcp:
            secret = await ok(mcp, "remember", content="The acme staging password rotates on Tuesdays.",
                              project="web")
        memory_id = secret["memory"]["id"]
        async with session(port, tenants["globex"].admin_token) as mcp:
            own = await ok(mcp, "remember", content="The globex staging password rotates on Fridays.", project="web")
            hits = (await ok(mcp, "recall", query="staging password rotation"))["results"]
            assert [hit["memory"]["id"] for hit in hits] == [own["memory"]["id"]]  # its own, and nothing of acme's
            for tool in ("get_memory", "forget", "restore_memory"):
                assert (await refused(mcp, tool, memory_id=memory_id))["code"] == "not_found"
            error = await refused(mcp, "add_check", memory_id=memory_id, outcome="fail", detail="wrong")
            assert error["code"] == "not_found"
            error = await refused(mcp, "remember", content="Replaced.",
                                  links=[{"type": "supersedes", "dst": memory_id}])
            assert error["code"] == "target_invisible"
            assert (await ok(mcp, "list_conflicts"))["results"] == []

    run(main)


def test_bad_arguments_are_tool_errors_in_the_rest_envelope_and_the_session_goes_on(stack):
    port, tenants, _ = stack

    deep: dict = {}
    for _ in range(40):
        deep = {"d": deep}

    async def main():
        async with session(port, tenants["acme"].member_token) as mcp:
            cases = [
                ("remember", {}, "invalid", "content: This field is required."),
                ("remember", {"content": "x", "kind": "gossip"}, "invalid", None),
                ("remember", {"content": "x" * 16001}, "content_too_large", None),
                ("remember", {"content": "x", "links": [{"type": "supersedes", "dst": "nope"}]}, "invalid", None),
                ("remember", {"content": "[1, 2]", "valid_from": "2026-01-02T00:00:00Z",
                              "valid_until": "2026-01-01T00:00:00Z"}, "invalid", None),
                ("recall", {"query": "deploys", "k": "ten"}, "invalid", None),
                ("recall", {"query": "deploys", "k": 51}, "invalid", None),
                ("recall", {"query": "deploys", "project": "no-such-project"}, "not_found", None),
                ("get_memory", {}, "invalid", "memory_id: This field is required."),
                ("get_memory", {"memory_id": 5}, "invalid", None),
                ("get_memory", {"memory_id": "mem_\x00"}, "invalid", "memory_id: Contains a NUL character."),
                ("remember", {"content": "a\x00b"}, "invalid", "content: Contains a NUL character."),
                ("remember", {"content": "x", "metadata": deep}, "nesting_too_deep", None),
                ("forget", {"memory_id": "mem_01JAAAAAAAAAAAAAAAAAAAAAAA"}, "not_found", None),
                ("resolve_conflict", {"conflict_id": "cfl_x", "decision": "flip a coin"}, "invalid", None),
                ("resolve_conflict", {"conflict_id": "cfl_x", "decision": "keep_both"}, "not_found", None),
                ("list_loops", {"state": "ajar"}, "invalid", None),
                ("link", {"src": "mem_x", "dst": "mem_y"}, "invalid", None),
            ]
            for tool, arguments, code, message in cases:
                error = await refused(mcp, tool, **arguments)
                assert error["code"] == code, (tool, arguments, error)
                if message:
                    assert error["message"] == message
            with pytest.raises(MCPError, match="Unknown tool"):
                await mcp.call_tool("rememberr", {"content": "typo"})
            # The same session still works, and a JSON-looking string stays a string.
            stored = await ok(mcp, "remember", content="[1, 2]")
            assert stored["memory"]["content"] == "[1, 2]"

    run(main)


def test_the_2026_protocol_reaches_the_same_tools(stack):
    """The SDK's high-level Client on MCP's per-request protocol (2026-07-28, no initialize handshake)."""
    port, tenants, _ = stack

    async def main():
        headers = {"Authorization": f"Bearer {tenants['acme'].member_token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
            async with Client(transport, mode="2026-07-28") as client:
                hits = (await client.call_tool("recall", {"query": "deploy window", "k": 1})).structured_content
                assert hits["results"][0]["memory"]["content"] == "The deploy window moved to Friday 14:00 UTC."
                error = await client.call_tool("recall", {"query": "deploy window", "k": 0})
                assert error.is_error and json.loads(error.content[0].text)["error"]["code"] == "invalid"

    run(main)


def test_a_burst_of_tool_calls_leaves_no_pooled_connection_behind(stack):
    """16 sessions at once on 8 web threads with 2 pooled connections: a leaked connection would starve the rest."""
    port, tenants, _ = stack
    failures: list[str] = []

    tokens = [tenants["acme"].member_token, tenants["globex"].admin_token]

    async def one(i: int) -> None:
        async with session(port, tokens[i % 2]) as mcp:
            for _ in range(3):
                result = await mcp.call_tool("recall", {"query": "deploy window"})
                if result.is_error:
                    failures.append(result.content[0].text)
                result = await mcp.call_tool("list_loops", {})
                if result.is_error:
                    failures.append(result.content[0].text)

    async def main():
        async with anyio.create_task_group() as group:
            for i in range(16):
                group.start_soon(one, i)

    run(main)
    assert failures == []
    assert call(port, tenants["acme"].member_token, "GET", "/api/v1/me")[0] == 200
