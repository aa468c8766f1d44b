"""The client's retry rules where the served stack cannot produce the failure on demand (a 503, a connection that
drops after the request was sent): a scripted httpx transport answers instead. The rest of the client is tested
against the real server (test_python_client.py)."""
import asyncio
import json

import httpx
import pytest

from zero_memory_client import AsyncZeroMemory, BadRequest, ConnectionFailed, ServerError, ZeroMemory

UNAVAILABLE = {"error": {"code": "database_unavailable", "message": "Try again.", "details": {}}}
ME = {"user": {"id": "5f0c6a3e-0000-4000-8000-000000000000", "email": "a@b.test"}, "org": "acme", "role": "admin",
      "token": None, "projects": []}


class Script:
    """Answers (or raises) the given steps in order, recording each request."""

    def __init__(self, *steps) -> None:
        self.steps, self.requests = list(steps), []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return step


def client(script: Script, **options) -> ZeroMemory:
    zm = ZeroMemory("http://zm.test", "zm_secret", transport=httpx.MockTransport(script), backoff=0, **options)
    zm._sleep = lambda seconds: script.requests.append(("slept", seconds))
    return zm


def test_a_503_is_retried_after_retry_after_for_a_read_but_never_for_a_write():
    script = Script(httpx.Response(503, json=UNAVAILABLE, headers={"Retry-After": "1"}), httpx.Response(200, json=ME))
    assert client(script).me().org == "acme"
    assert script.requests[1] == ("slept", 1.0)

    script = Script(httpx.Response(503, json=UNAVAILABLE, headers={"Retry-After": "1"}))
    with pytest.raises(ServerError) as error:
        client(script).remember("may have been stored")
    assert (error.value.status, error.value.code, error.value.retry_after) == (503, "database_unavailable", 1.0)
    assert len(script.requests) == 1


def test_a_connection_error_before_sending_is_retried_even_for_a_write_a_read_timeout_only_for_a_read():
    script = Script(httpx.ConnectError("refused"), httpx.Response(400, json={
        "error": {"code": "invalid", "message": "content: required", "details": {}}}))
    with pytest.raises(BadRequest) as answered:
        client(script).remember("sent twice: the first never left")
    assert answered.value.code == "invalid" and len([r for r in script.requests if isinstance(r, httpx.Request)]) == 2

    script = Script(httpx.ReadTimeout("slow"))
    with pytest.raises(ConnectionFailed) as dropped:
        client(script).remember("the server may have stored this")
    assert dropped.value.sent is True and len(script.requests) == 1

    script = Script(httpx.ReadTimeout("slow"), httpx.Response(200, json=ME))
    assert client(script).me().org == "acme"


def test_retries_stop_after_the_configured_number():
    script = Script(*[httpx.ConnectError("refused")] * 3)
    with pytest.raises(ConnectionFailed) as error:
        client(script, retries=2).me()
    assert error.value.sent is False and len([r for r in script.requests if isinstance(r, httpx.Request)]) == 3


def test_only_the_keys_given_are_sent_and_unknown_ones_are_refused():
    script = Script(httpx.Response(201, json={}))
    zm = client(script)
    zm.remember("just content", kind="fact")  # an empty answer parses to Nones (forward compatible, see models)
    assert json.loads(script.requests[0].content) == {"content": "just content", "kind": "fact"}
    with pytest.raises(TypeError, match="unexpected keyword argument 'nmespace'"):
        zm.remember("typo", nmespace=["a"])


def test_the_async_client_follows_the_same_rules():
    script = Script(httpx.Response(503, json=UNAVAILABLE, headers={"Retry-After": "0"}))

    async def write() -> None:
        async with AsyncZeroMemory("http://zm.test", "t", transport=httpx.MockTransport(script)) as zm:
            await zm.remember("may have been stored")

    with pytest.raises(ServerError):
        asyncio.run(write())
    assert len(script.requests) == 1
