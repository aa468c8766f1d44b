"""The OpenAPI document against real responses.

Every response of every API test is checked against the document by the test client (tests/support/openapi.py). These tests
make sure that covers the whole document: every operation is walked to each of its success statuses, and the error
statuses that plumbing/schema.py adds by rule are produced for every operation they are documented on.
"""
import json
import re
import uuid

import pytest

from memory.models import Conflict
from tenants import rls
from tenants.auth import SESSION_ORG_KEY
from tests.support.openapi import (
    MISSING_MEMORY, ResponseMismatch, ValidatingClient, check_response, concrete, document, documented, operations,
    validator,
)


def test_every_operation_answers_each_success_status_as_documented(api, acme, remember, api_calls):
    admin, member = api(acme.admin_token), api(acme.member_token)

    def call(client, method: str, path: str, expect: int, body: dict | None = None) -> dict | None:
        response = getattr(client, method)(path, body, format="json") if body is not None else \
            getattr(client, method)(path)
        assert response.status_code == expect, (method, path, response.content)
        return response.json() if response.content else None

    # Tenancy: users, projects and their members, tokens, settings.
    assert call(member, "get", "/api/v1/me", 200)["token"]["project"] == "web"
    assert len(call(admin, "get", "/api/v1/users", 200)["results"]) == 2
    newcomer = call(admin, "post", "/api/v1/users", 201, {"email": "new@acme.test"})["id"]
    call(admin, "post", "/api/v1/projects", 201, {"slug": "docs", "name": "Docs"})
    assert len(call(admin, "get", "/api/v1/projects", 200)["results"]) == 3
    call(admin, "post", "/api/v1/projects/docs/members", 201, {"user_id": newcomer})
    call(admin, "delete", f"/api/v1/projects/docs/members/{newcomer}", 204)
    token = call(admin, "post", "/api/v1/tokens", 201, {"name": "ci", "writer": "agent", "project": "web"})
    assert len(call(admin, "get", "/api/v1/tokens", 200)["results"]) >= 2
    call(admin, "delete", f"/api/v1/tokens/{token['id']}", 204)
    call(admin, "get", "/api/v1/org/settings", 200)
    call(admin, "post", "/api/v1/org/settings", 200, {"require_supersede_reason": False})

    # Memories: remember (stored, then absorbed), links, checks, forget, restore, reading.
    first = remember(acme.member_token, "Checkout is owned by Dana.", kind="fact")
    assert first["similar_existing"] == []
    second = remember(acme.member_token, "Checkout is owned by Ivan since May.", kind="fact",
                      links=[{"type": "supersedes", "dst": MISSING_MEMORY}],
                      source={"source_id": "org-chart"}, valid_until="2099-01-01T00:00:00Z")
    assert second["skipped"] == [{"dst": MISSING_MEMORY, "reason": "missing"}] and second["similar_existing"] is None
    a, b = first["memory"]["id"], second["memory"]["id"]
    assert remember(acme.member_token, "Checkout is owned by Dana.", expect=200, kind="fact")["dedup"] == "exact"
    task = remember(acme.member_token, "Move checkout to the new queue.", kind="task")["memory"]["id"]
    call(member, "post", "/api/v1/links", 201, {"src": task, "dst": a, "type": "relates_to"})
    call(member, "post", f"/api/v1/memories/{b}/checks", 201, {"outcome": "fail", "detail": "Ivan left in June."})
    with rls.tenant_scope(acme.scope):
        conflict = Conflict.objects.create(org=acme.org, a_id=a, b_id=b, relation="contradicts", confidence=0.8,
                                           judge="local:test", rationale="two owners")
    detail = call(member, "get", f"/api/v1/memories/{b}", 200)
    assert (len(detail["checks"]), len(detail["conflicts"])) == (1, 1)
    call(member, "get", f"/api/v1/memories/{b}/history", 200)
    assert len(call(member, "get", "/api/v1/memories?lifecycle=all", 200)["results"]) == 3
    assert len(call(member, "get", "/api/v1/loops", 200)["results"]) == 1
    recalled = call(member, "post", "/api/v1/recall", 200, {"query": "Who owns checkout?", "include_history": True})
    assert recalled["results"] and recalled["warnings"]
    remember(acme.member_token, "Prefers tea.", namespace=["users", "u-1"], key="drink")
    assert call(member, "get", "/api/v1/namespaces?prefix=users", 200)["results"] == [["users", "u-1"]]
    call(member, "post", f"/api/v1/memories/{task}/forget", 200, {"reason": "done elsewhere"})
    call(member, "post", f"/api/v1/memories/{task}/restore", 200)

    # Sources, conflicts, stats.
    page = {"source_id": "pricing", "content": "Pro costs $29.", "version": "1", "url": "https://acme.test/p"}
    call(member, "post", "/api/v1/sources", 201, page)
    call(member, "post", "/api/v1/sources", 200, page)
    call(member, "post", "/api/v1/sources", 201, {**page, "content": "Pro costs $30.", "version": "2"})
    assert len(call(member, "get", "/api/v1/sources/pricing/versions", 200)["results"]) == 2
    assert len(call(member, "get", "/api/v1/conflicts?status=open", 200)["results"]) == 1
    call(member, "post", f"/api/v1/conflicts/{conflict.id}/resolve", 200, {"decision": "keep_both"})
    assert call(member, "get", "/api/v1/stats", 200)["conflicts"]["resolved"] == 1
    call(admin, "post", f"/api/v1/memories/{task}/purge", 204, {"reason": "test data"})

    assert documented(range(200, 300)) - set(api_calls) == set()


def test_every_error_answer_is_documented_as_the_envelope():
    for method, path, operation in operations():
        errors = {status: response for status, response in operation["responses"].items() if int(status) >= 400}
        assert "401" in errors, (method, path)
        for status, response in errors.items():
            assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
            assert response["description"], (method, path, status)


# The smallest body each operation accepts, so that a request gets past validation to the lookup.
VALID_BODIES = {
    "memory_check": {"outcome": "pass", "detail": "x"},
    "memory_forget": {},
    "memory_purge": {"reason": "x"},
    "project_members_add": {"user_id": str(uuid.uuid4())},
    "conflicts_resolve": {"decision": "keep_both"},
}


def _invalid_query(operation: dict) -> str:
    """A query string that an operation with query parameters must refuse: a value outside an enumeration, else a
    word for an integer."""
    query = [p for p in operation.get("parameters", []) if p["in"] == "query"]
    name = next((p["name"] for p in query if "enum" in p["schema"]), None)
    if name is not None:
        return f"?{name}=not-a-choice"
    return f"?{next(p['name'] for p in query if p['schema'].get('type') == 'integer')}=not-a-number"


@pytest.mark.slow
def test_the_error_statuses_documented_by_rule_are_the_ones_sent(api, acme, api_calls):
    """plumbing/schema.py documents 401 everywhere, 400 with a body or query parameters, 413 and 415 with a body, 404 with path
    parameters, and 403 on unsafe methods (a session without its CSRF token) and admin-only reads; each of them is
    produced here for every operation that lists it."""
    session = ValidatingClient(enforce_csrf_checks=True, calls=api_calls)
    with rls.tenant_scope(acme.scope):
        session.force_login(acme.admin)
    state = session.session
    state[SESSION_ORG_KEY] = str(acme.org.id)
    state.save()
    anonymous, admin, member = api(), api(acme.admin_token), api(acme.member_token)
    for method, path, operation in operations():
        verb, target, responses = method.lower(), concrete(path), operation["responses"]
        assert getattr(anonymous, verb)(target).status_code == 401
        assert admin.options(target).status_code == 405  # not in the document: refused in the envelope
        if "requestBody" in operation:
            assert getattr(admin, verb)(target, "x", content_type="text/plain").status_code == 415
            assert getattr(admin, verb)(target, [], format="json").status_code == 400
            oversized = '{"padding": "' + "x" * (1024 * 1024) + '"}'
            assert getattr(admin, verb)(target, oversized, content_type="application/json").status_code == 413
        elif "400" in responses:
            assert getattr(admin, verb)(target + _invalid_query(operation)).status_code == 400
        if "{" in path:
            response = getattr(admin, verb)(target, VALID_BODIES.get(operation["operationId"]), format="json")
            assert response.status_code == 404, (method, path, response.content)
        if method != "GET":
            assert getattr(session, verb)(target, {}, format="json").status_code == 403
        elif "403" in responses:
            assert getattr(member, verb)(target).status_code == 403
    with_path_parameters = {operation["operationId"] for _, path, operation in operations() if "{" in path}
    by_rule = {(operation_id, status) for operation_id, status in documented(range(400, 500))
               if status in (400, 401, 403, 413, 415) or (status == 404 and operation_id in with_path_parameters)}
    assert by_rule - set(api_calls) == set()


TOKEN = {"id": "tok_1", "name": "ci", "writer": "agent", "project": None, "user_id": str(uuid.uuid4()),
         "created_at": "2026-11-30T12:00:00Z", "last_used_at": None, "revoked_at": None}


@pytest.mark.parametrize("method, path, status, content_type, body, complaint", [
    # The bugs this test suite was written for: a wrapper declared as a bare list, a bare object sent as a wrapper.
    ("GET", "/api/v1/loops", 200, "application/json", [], "is not of type 'object'"),
    ("POST", f"/api/v1/memories/{MISSING_MEMORY}/checks", 201, "application/json",
     {"id": "chk_1", "outcome": "pass"}, "'check' is a required property"),
    ("GET", "/api/v1/me", 404, "application/json", {}, "status not documented for me"),
    ("GET", "/api/v1/projects", 200, "application/json", {"results": [{"slug": "a", "name": "A", "extra": 1}]},
     "Additional properties are not allowed ('extra' was unexpected)"),
    ("GET", "/api/v1/org/settings", 200, "application/json", {"require_supersede_reason": None},
     "None is not of type 'boolean'"),
    ("POST", "/api/v1/memories", 400, "text/html", b"<h1>Bad Request (400)</h1>", "Content-Type 'text/html'"),
    ("POST", "/api/v1/memories", 413, "application/json", {"error": {"code": "too_large", "message": "Too large."}},
     "'details' is a required property"),
    ("DELETE", "/api/v1/tokens/tok_1", 204, None, b"{}", "documented without a body"),
    ("POST", "/api/v1/nothing/here", 403, "text/html", b"CSRF", "should answer 404 or 405"),
    ("GET", "/api/v1/tokens", 200, "application/json", {"results": [TOKEN | {"writer": "robot"}]},
     "'robot' is not one of ['agent', 'human', 'watcher']"),
])
def test_the_validator_rejects_responses_the_document_does_not_describe(method, path, status, content_type, body,
                                                                        complaint):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(ResponseMismatch, match=re.escape(complaint)):
        check_response(method, path, status, content_type, raw)


def test_the_validator_rejects_a_schema_that_does_not_describe_the_response(api, acme, remember):
    """The pair the document had before: loops declared as a bare list of memories, sent as {"results": [...]}."""
    remember(acme.member_token, "Write the runbook.", kind="task")
    sent = api(acme.member_token).get("/api/v1/loops").json()
    old_declaration = validator({"type": "array", "items": {"$ref": "#/components/schemas/MemoryOutput"}})
    assert [error.message for error in old_declaration.iter_errors(sent)] == [f"{sent!r} is not of type 'array'"]
    current = document()["paths"]["/api/v1/loops"]["get"]["responses"]["200"]["content"]["application/json"]
    assert list(validator(current["schema"]).iter_errors(sent)) == []
    assert check_response("GET", "/api/v1/loops", 200, "application/json", json.dumps(sent).encode()) == "loops"
