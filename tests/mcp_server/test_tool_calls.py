"""mcp_server/ in process: a tool call's steps and its error answers, without the HTTP transport around them."""
from concurrent.futures import ThreadPoolExecutor

from django.db import OperationalError

from mcp_server.endpoint import authenticate, error_answer, run_tool
from mcp_server.tools import TOOLS
from tests.support.tenants import build_tenant


def test_errors_get_the_rest_status_and_envelope():
    assert error_answer(OperationalError("server closed the connection"))[0] == 503
    assert error_answer(OperationalError("x"))[1]["error"]["code"] == "database_unavailable"
    status, body = error_answer(RuntimeError("a bug"))  # logged; the agent learns nothing about the bug
    assert (status, body["error"]["code"]) == (500, "server_error") and "bug" not in body["error"]["message"]


def test_a_tool_call_counts_against_the_tokens_rate_limit(committed, settings):
    """Run on another thread, as the server runs it: run_tool hands that thread's connection back to the pool."""
    settings.RATE_LIMIT_PER_MINUTE = 2
    acme = build_tenant("acme")
    with ThreadPoolExecutor(max_workers=1) as thread:
        identity = thread.submit(authenticate, f"Bearer {acme.member_token}").result()
        answers = [thread.submit(run_tool, TOOLS["list_loops"], identity, {}).result() for _ in range(3)]
        refused = thread.submit(authenticate, "Bearer zm_nope").result()
    assert [is_error for _, _, is_error in answers] == [False, False, True]
    assert answers[0][1] == {"results": []}
    error = answers[2][1]["error"]
    assert error["code"] == "rate_limited" and error["details"]["limit"] == 2 and error["details"]["retry_after"] >= 1
    assert refused == (401, {"error": {"code": "unauthenticated", "message": "Invalid or revoked token.",
                                       "details": {}}})
