"""Schemathesis over every operation of the served OpenAPI document, in process through Django's WSGI handler.

Each operation runs three times: with a valid token of the seeded tenant (admin or member), with an invalid one
(garbage, revoked, malformed, none) and with another tenant's token. Whatever is sent, the answer is never a 5xx,
its status is documented for the operation, and its body matches the document: schemathesis's own checks, and the
closed check of tests/support/openapi.py (every error in the envelope {"error": {"code", "message", "details"}}). Another
tenant's answers never carry an id of the seeded tenant that the request did not name itself, and an invalid token
gets 401 on every path that reaches a view, whatever else is wrong with the request.

The seeded rows are committed once per module; each operation's cases run in a transaction that is rolled back, so
one operation's writes (a revoked token, a forgotten memory) do not leak into the next. Ids in paths and bodies are
often replaced by real ones, so that cases reach existing rows and not only 404s.

ZM_FUZZ_EXAMPLES sets the generated examples per operation and token kind (default 25; `make fuzz` runs more);
schemathesis's coverage phase adds its own deterministic cases (boundary values, missing fields, wrong methods).
"""
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import unquote

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.urls import Resolver404, resolve
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory.models import Conflict
from plumbing import errors
from tenants import rls
from tenants.models import ApiToken
from tests.support.tenants import build_tenant, issue_token, truncate_all_tables
from tests.support.openapi import ValidatingClient, check_response

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("ZM_FUZZ_EXAMPLES", "25"))
# Reported by tests/fuzz/conftest.py after the run.
CASES: Counter = Counter()  # (operation label, token kind) -> cases sent
STATUSES: Counter = Counter()  # status -> answers

schema = schemathesis.openapi.from_wsgi("/api/schema/", WSGIHandler())
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@dataclass
class Seed:
    """The rows that cases can hit: ids of the seeded tenant (acme) and the tokens of each kind."""

    tokens: dict[str, list[str]] = field(default_factory=dict)
    memories: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    spare_tokens: list[str] = field(default_factory=list)  # never the ones the cases authenticate with
    users: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=lambda: ["web", "ops"])
    sources: list[str] = field(default_factory=lambda: ["pricing"])


SEED = Seed()


def _post(token: str, path: str, body: dict, expect: int = 201) -> dict:
    client = ValidatingClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.post(path, body, format="json")
    assert response.status_code == expect, response.content
    return response.json()


def _seed_memories(acme, globex) -> list[str]:
    """Live, superseded, forgotten, a loop, a personal one, a checked one and two source versions; one for globex."""
    remember = "/api/v1/memories"
    live = _post(acme.admin_token, remember, {"content": "Deploys go out on Monday.", "project": "web"})
    old = _post(acme.admin_token, remember, {"content": "The VPN host is vpn1.", "project": "web"})
    new = _post(acme.admin_token, remember, {
        "content": "The VPN host is vpn2.", "project": "web",
        "links": [{"type": "supersedes", "dst": old["memory"]["id"], "reason": "moved"}]})
    gone = _post(acme.admin_token, remember, {"content": "Lunch is at noon.", "project": "ops"})
    _post(acme.admin_token, f"/api/v1/memories/{gone['memory']['id']}/forget", {"reason": "wrong"}, 200)
    task = _post(acme.member_token, remember, {"content": "Rotate the API keys.", "kind": "task"})
    mine = _post(acme.member_token, remember, {"content": "I prefer tabs.", "scope": "personal"})
    _post(acme.admin_token, f"/api/v1/memories/{live['memory']['id']}/checks",
          {"outcome": "pass", "detail": "seen in the calendar"})
    for version, content in (("1", "Pro costs $29."), ("2", "Pro costs $39.")):
        _post(acme.admin_token, "/api/v1/sources",
              {"source_id": "pricing", "content": content, "version": version, "project": "web"})
    _post(globex.admin_token, remember, {"content": "Globex ships on Fridays.", "project": "web"})
    return [m["memory"]["id"] for m in (live, old, new, gone, task, mine)]


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker):
    """Two tenants with real rows (memories, a conflict, a spare and a revoked token), committed for the whole
    module and emptied afterwards."""
    with django_db_blocker.unblock():
        try:
            acme, globex = build_tenant("acme"), build_tenant("globex")
            SEED.memories = _seed_memories(acme, globex)
            with rls.tenant_scope(acme.scope):
                conflict = Conflict.objects.create(org=acme.org, a_id=SEED.memories[0], b_id=SEED.memories[2],
                                                   relation="contradicts", confidence=0.7, judge="local:test")
                spare, _ = issue_token(acme, acme.member, "spare", ApiToken.Writer.AGENT, acme.web)
                revoked, revoked_secret = issue_token(acme, acme.admin, "revoked", ApiToken.Writer.HUMAN)
            client = ValidatingClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {acme.admin_token}")
            assert client.delete(f"/api/v1/tokens/{revoked.id}").status_code == 204
            SEED.tokens = {
                "valid": [acme.admin_token, acme.member_token],
                "invalid": [revoked_secret, "zm_" + "x" * 43, "not-a-token", ""],  # "": no Authorization header
                "other": [globex.admin_token, globex.member_token],
            }
            SEED.conflicts = [conflict.id]
            SEED.spare_tokens = [spare.id, revoked.id]
            SEED.users = [str(acme.member.id), str(acme.admin.id)]
            yield SEED
        finally:
            truncate_all_tables()


@pytest.fixture
def wsgi_in_test_transaction(db):
    """Django's WSGI handler closes unusable connections at each request's start and end, which would end the test's
    transaction: its test client disconnects the same handler for the same reason."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


# What a path or body field names, and the seeded ids that can stand in for it.
def _pool(name: str) -> list[str]:
    return {
        "memory_id": SEED.memories, "src": SEED.memories, "dst": SEED.memories, "corrected_by": SEED.memories,
        "winner": SEED.memories, "conflict_id": SEED.conflicts, "token_id": SEED.spare_tokens, "user_id": SEED.users,
        "slug": SEED.projects, "project": SEED.projects, "source_id": SEED.sources,
    }.get(name, [])


def _substituted(value, draw):
    """`value` with some fields that name a seeded kind of thing replaced by a real id of that kind."""
    if isinstance(value, dict):
        replaced = {}
        for key, item in value.items():
            pool = _pool(key) if isinstance(item, str) else []
            replaced[key] = draw(st.sampled_from([item, *pool])) if pool else _substituted(item, draw)
        return replaced
    if isinstance(value, list):
        return [_substituted(item, draw) for item in value]
    return value


@schema.hook
def flatmap_case(context, case):
    """Often aim the case at rows that exist."""

    @st.composite
    def aimed(draw):
        if case.path_parameters:
            case.path_parameters = _substituted(case.path_parameters, draw)
        if isinstance(case.body, dict):
            case.body = _substituted(case.body, draw)
        return case

    return aimed()


def _routed(path: str) -> bool:
    """Whether the path reaches an operation's view (a slug or user id of the wrong shape is an unknown path)."""
    try:
        return resolve(unquote(path)).func is not errors.not_found
    except Resolver404:  # a path no pattern takes (a newline in it, say): Django's 404 handler answers
        return False


@pytest.mark.parametrize("kind", ["valid", "invalid", "other"])
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None,  # a shared, seeded database on purpose; generated bodies may be big
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
def test_every_operation_answers_in_its_schema_whatever_the_token(case, kind, seeded, wsgi_in_test_transaction):
    # The token goes on here, not in a hook: the coverage phase's cases pass no hook. Round robin over the kind.
    tokens = seeded.tokens[kind]
    token = tokens[sum(n for (_, k), n in CASES.items() if k == kind) % len(tokens)]
    headers = {key: value for key, value in (case.headers or {}).items() if key.lower() != "authorization"}
    case.headers = {**headers, "Authorization": f"Bearer {token}"} if token else headers
    response = case.call()
    CASES[(case.operation.label, kind)] += 1
    STATUSES[response.status_code] += 1
    case.validate_response(response, checks=CHECKS)
    path = case.formatted_path
    content_type = (response.headers.get("content-type") or [None])[0]  # lowercase keys, list values
    if case.method.lower() == case.operation.method.lower():
        check_response(case.method, path, response.status_code, content_type, response.content)
    else:  # schemathesis also tries methods the path does not have: authentication and admin rights come first
        assert response.status_code in (401, 403, 405), response.status_code
    if response.status_code >= 400:
        assert content_type == "application/json", content_type
        assert set(json.loads(response.content)["error"]) == {"code", "message", "details"}
    if kind == "invalid":  # authentication comes before anything else, once the path names a route
        assert response.status_code == 401 or not _routed(path), (path, response.content[:500])
    if kind == "other":
        sent = f"{path} {case.query} {json.dumps(case.body, default=str)}"
        hidden = [*seeded.memories, *seeded.conflicts, *seeded.spare_tokens, *seeded.users]
        assert [i for i in hidden if i not in sent and i.encode() in response.content] == [], response.content[:500]
