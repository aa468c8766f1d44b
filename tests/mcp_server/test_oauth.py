"""MCP's authorization flow end to end: the official SDK client, given only the server's URL, discovers the
authorization server, registers itself, sends a person to approve it (headless Chromium on the consent page),
redeems the code with PKCE, calls the tools, refreshes its token, and is cut off at the next call when the person
revokes the grant on the tokens page.

The server's access tokens live 8 s here (OAUTH_ACCESS_TOKEN_SECONDS), so that the client refreshes on its own.
"""
import json
import os
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from playwright.async_api import async_playwright, expect

from embedded_stack.launcher import CHROMIUM, chromium_missing_message
from tests.support.browser import PASSWORD, Stack, orm
from tests.support.stack import served, spare_port, stack_env
from tests.support.tenants import build_tenant, truncate_all_tables

pytestmark = pytest.mark.slow

REDIRECT = "http://127.0.0.1:53683/callback"
TOKEN_SECONDS = 8


class MemoryStorage(TokenStorage):
    """The client's tokens and registration, in memory, with every token set kept for the test to look at."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.issued: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.issued.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Stack]:
    with django_db_blocker.unblock():
        try:
            tenant = orm(build_tenant, "acme")
            port = spare_port()
            url = f"http://127.0.0.1:{port}"
            env = stack_env(PUBLIC_URL=url, OAUTH_ACCESS_TOKEN_SECONDS=str(TOKEN_SECONDS))
            with served(env, tmp_path_factory.mktemp("mcp-oauth") / "server.log", port=port):
                yield Stack(url, tenant)
        finally:
            orm(truncate_all_tables)


def _status(url: str, token: str) -> tuple[int, str]:
    """A raw tools/list with a bearer token: the HTTP status and the WWW-Authenticate header."""
    response = httpx2.post(url + "/mcp", headers={"Authorization": f"Bearer {token}",
                                                 "Accept": "application/json, text/event-stream"},
                           json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    return response.status_code, response.headers.get("www-authenticate", "")


async def _sign_in(page, link: str, stack: Stack) -> None:
    """The person signs in to the web admin (a one-time link; the first also sets the password)."""
    await page.goto(link)
    if await page.locator("#id_password1").get_attribute("required") is not None:  # no password yet
        await page.locator("#id_password1").fill(PASSWORD)
        await page.locator("#id_password2").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").or_(
        page.get_by_role("button", name="Set password and sign in")).click()
    await expect(page).to_have_url(stack.url + "/")


async def _provider(stack: Stack, page, storage: MemoryStorage, seen: dict, *, access: str,
                    name: str) -> OAuthClientProvider:
    """The SDK's OAuth client, whose browser step is the person, in ``page``, approving ``access`` for acme's web."""
    callback: dict[str, str] = {}

    async def at_callback(route) -> None:  # the client's loopback listener, as Chromium reaches it
        callback.update({k: v[0] for k, v in parse_qs(urlsplit(route.request.url).query).items()})
        await route.fulfill(status=200, body="You may close this window.")

    await page.route(REDIRECT + "*", at_callback)

    async def redirect_handler(authorization_url: str) -> None:
        if seen["approvals"]:  # once approved, the client must not need the person again: refused here
            seen["reauthorizations"] += 1
            raise RuntimeError("re-authorization refused by the test")
        seen["approvals"] += 1
        assert authorization_url.startswith(stack.url + "/oauth/authorize?")
        query = parse_qs(urlsplit(authorization_url).query)
        assert query["code_challenge_method"] == ["S256"] and query["resource"] == [stack.url + "/mcp"]
        await page.goto(authorization_url)
        await expect(page.locator("h1")).to_contain_text(f"Allow {name}")
        await page.get_by_label("Organization and project").select_option(label="acme · project web")
        await page.get_by_label(access, exact=False).check()
        await page.get_by_role("button", name="Allow").click()
        with anyio.fail_after(20):  # Chromium follows the redirect to the client's listener
            while "code" not in callback:
                await anyio.sleep(0.05)

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=callback["code"], state=callback.get("state"))

    return OAuthClientProvider(
        server_url=stack.url + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=name, redirect_uris=[REDIRECT], grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=redirect_handler, callback_handler=callback_handler,
    )


def test_an_mcp_client_connects_by_url_alone_and_a_person_approves_it_once(stack: Stack):
    if not os.path.exists(CHROMIUM):
        pytest.fail(chromium_missing_message(), pytrace=False)
    member = stack.tenant.member
    link = stack.url + stack.link_path(member)
    storage = MemoryStorage()
    seen: dict = {"approvals": 0, "reauthorizations": 0}

    async def main() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            context = await browser.new_context()
            context.set_default_timeout(20_000)
            page = await context.new_page()
            await _sign_in(page, link, stack)
            provider = await _provider(stack, page, storage, seen, access="Read and write",
                                       name="zero-memory test agent")
            async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
                async with streamable_http_client(stack.url + "/mcp", http_client=http) as (read, write):
                    async with ClientSession(read, write) as mcp:
                        await mcp.initialize()  # the 401, discovery, registration, consent, code, token: all here
                        assert seen["approvals"] == 1 and storage.tokens is not None
                        assert storage.tokens.scope == "memory:read memory:write"
                        remembered = await mcp.call_tool("remember", {"content": "The staging deploy runs at 6."})
                        assert not remembered.is_error, remembered.content[0].text
                        assert remembered.structured_content["memory"]["project"] == "web"
                        assert remembered.structured_content["memory"]["owner"]["email"] == member.email

                        # The access token expires; the client refreshes it (rotating the refresh token) by itself.
                        first = storage.tokens
                        await anyio.sleep(TOKEN_SECONDS + 1)
                        recalled = await mcp.call_tool("recall", {"query": "When does the staging deploy run?"})
                        assert not recalled.is_error, recalled.content[0].text
                        assert recalled.structured_content["results"][0]["memory"]["content"] == (
                            "The staging deploy runs at 6.")
                        assert storage.tokens.access_token != first.access_token
                        assert storage.tokens.refresh_token != first.refresh_token
                        assert seen["approvals"] == 1  # approved once: the refresh asked nobody
                        assert _status(stack.url, first.access_token)[0] == 401  # the old one is over

                        # The grant is on the tokens page, beside the minted tokens; revoking it cuts the next call.
                        await page.goto(stack.url + "/org/tokens")
                        row = page.locator("tr", has_text="zero-memory test agent")
                        await expect(row).to_contain_text("OAuth client · read and write")
                        await expect(row).not_to_contain_text("never")  # last used: the calls above
                        await row.get_by_role("button", name="Revoke").click()
                        await expect(page.locator(".messages")).to_contain_text("revoked")
                        status, challenge = _status(stack.url, storage.tokens.access_token)
                        assert status == 401 and 'error="invalid_token"' in challenge
                        assert f'resource_metadata="{stack.url}/.well-known/oauth-protected-resource/mcp"' in challenge
                # The client itself, on its next connection: the revoked token's 401 sends it back to the person.
                with pytest.raises(Exception):  # noqa: B017 - the transport's group of the handler's refusal
                    async with streamable_http_client(stack.url + "/mcp", http_client=http) as (read, write):
                        async with ClientSession(read, write) as mcp:
                            await mcp.initialize()
                assert seen["reauthorizations"] == 1
            await browser.close()

    started = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - started < 120
    assert json.loads(storage.client_info.model_dump_json())["token_endpoint_auth_method"] == "none"


def test_a_read_only_grant_recalls_over_mcp_and_is_refused_every_write_tool(stack: Stack):
    if not os.path.exists(CHROMIUM):
        pytest.fail(chromium_missing_message(), pytrace=False)
    link = stack.url + stack.link_path(stack.tenant.member)
    storage = MemoryStorage()
    seen: dict = {"approvals": 0, "reauthorizations": 0}

    async def main() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            context = await browser.new_context()
            context.set_default_timeout(20_000)
            page = await context.new_page()
            await _sign_in(page, link, stack)
            provider = await _provider(stack, page, storage, seen, access="Read only", name="reader agent")
            async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
                async with streamable_http_client(stack.url + "/mcp", http_client=http) as (read, write):
                    async with ClientSession(read, write) as mcp:
                        await mcp.initialize()
                        assert storage.tokens.scope == "memory:read"
                        recalled = await mcp.call_tool("recall", {"query": "staging deploy"})
                        assert not recalled.is_error, recalled.content[0].text
                        for tool, arguments in (("remember", {"content": "Written by a reader"}),
                                                ("forget", {"memory_id": "mem_01M8PY4AVQAJ1838BD7P8HTYZ6"})):
                            refused = await mcp.call_tool(tool, arguments)
                            assert refused.is_error
                            assert json.loads(refused.content[0].text)["error"]["code"] == "insufficient_scope"
                        found = await mcp.call_tool("recall", {"query": "Written by a reader"})
                        assert all(r["memory"]["content"] != "Written by a reader"
                                   for r in found.structured_content["results"])  # nothing was stored
            assert seen == {"approvals": 1, "reauthorizations": 0}
            await browser.close()

    anyio.run(main)
