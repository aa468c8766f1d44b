"""Bodies, paths, query strings and headers that Postgres or the parser cannot take answer 4xx in the envelope,
never 500."""
import base64
import http.client
import json

import pytest

from tests.support.tenants import build_tenant
from tests.support.stack import served, stack_env

MEM = "mem_01HZZZZZZZZZZZZZZZZZZZZZZZ"
CON = "cfl_01HZZZZZZZZZZZZZZZZZZZZZZZ"

# Every operation that reads a JSON body.
BODY_ENDPOINTS = [
    "/api/v1/memories", "/api/v1/recall", "/api/v1/links", "/api/v1/sources", f"/api/v1/memories/{MEM}/checks",
    f"/api/v1/memories/{MEM}/forget", "/api/v1/users", "/api/v1/projects", "/api/v1/projects/web/members",
    "/api/v1/tokens", "/api/v1/org/settings", f"/api/v1/conflicts/{CON}/resolve",
]


def nested(depth: int) -> str:
    """A JSON object whose `metadata` value makes the whole body `depth` levels deep."""
    return '{"content": "deep", "metadata": ' + '{"a": ' * (depth - 2) + "{}" + "}" * (depth - 2) + "}"


def post_raw(api, token: str, path: str, body: str):
    return api(token).generic("POST", path, body.encode("utf-8", "surrogatepass"), content_type="application/json")


def error_of(response, status: int) -> dict:
    assert response.status_code == status, response.content
    return response.json()["error"]


@pytest.mark.parametrize("path", BODY_ENDPOINTS)
def test_json_nested_thousands_of_levels_is_400_everywhere(api, acme, path):
    body = '{"x": ' + "[" * 5000 + "]" * 5000 + "}"
    error = error_of(post_raw(api, acme.admin_token, path, body), 400)
    assert error["code"] == "nesting_too_deep" and error["details"] == {"limit": 32}


def test_nesting_up_to_32_levels_is_stored_and_33_is_refused(api, acme, visible_count):
    assert post_raw(api, acme.admin_token, "/api/v1/memories", nested(32)).status_code == 201
    assert error_of(post_raw(api, acme.admin_token, "/api/v1/memories", nested(33)), 400)["code"] == "nesting_too_deep"
    # About 7 KB: inside the 8 KB metadata limit, and deep enough to break json's recursive decoder.
    assert error_of(post_raw(api, acme.admin_token, "/api/v1/memories", nested(1000)), 400)["code"] == "nesting_too_deep"
    assert visible_count(acme.admin_token) == 1


@pytest.mark.parametrize(("body", "field"), [
    ('{"content": "c", "metadata": {"a": "x\\u0000y"}}', "metadata.a"),
    ('{"content": "c", "metadata": {"a": ["ok", "\\ud800"]}}', "metadata.a[1]"),
    ('{"content": "c", "metadata": {"a\\u0000": 1}}', "metadata"),
    ('{"content": "c", "metadata": {"a": 1e400}}', "metadata.a"),
    ('{"content": "c", "metadata": {"a": -1e400}}', "metadata.a"),
    ('{"content": "c", "metadata": {"a": NaN}}', None),
    ('{"content": "c", "metadata": {"a": Infinity}}', None),
    ('{"content": "c", "source": {"url": "https://x.test/\\u0000"}}', "source.url"),
    ('{"content": "c", "source": {"sha": "\\udfff"}}', "source.sha"),
    ('{"content": "c\\u0000d"}', "content"),
    ('{"content": "\\ud800 lone"}', "content"),
])
def test_text_and_numbers_postgres_cannot_store_are_400_naming_the_field(api, acme, visible_count, body, field):
    error = error_of(post_raw(api, acme.admin_token, "/api/v1/memories", body), 400)
    if field is None:  # NaN and Infinity are not JSON at all
        assert error["code"] == "malformed_json"
    else:
        assert error["code"] == "invalid" and field in error["details"]["fields"], error
    assert visible_count(acme.admin_token) == 0


# A value of another JSON type where the contract names a string (or a boolean): DRF would store 5 as "5", take 5 as
# a slug and "yes" as true.
WRONG_TYPES = [
    ("/api/v1/memories", {"content": 5}, "content"),
    ("/api/v1/memories", {"content": 5.5, "project": "web"}, "content"),
    ("/api/v1/memories", {"content": "c", "project": 7}, "project"),
    ("/api/v1/memories", {"content": "c", "session_id": 12}, "session_id"),
    ("/api/v1/memories", {"content": "c", "links": [{"type": "relates_to", "dst": MEM, "reason": 3}]}, "links[0].reason"),
    ("/api/v1/memories", {"content": ["c"]}, "content"),
    ("/api/v1/recall", {"query": "q", "project": 7}, "project"),
    ("/api/v1/sources", {"source_id": 5, "content": "c"}, "source_id"),
    ("/api/v1/sources", {"source_id": "s", "content": {"c": 1}}, "content"),
    ("/api/v1/sources", {"source_id": "s", "content": "c", "version": 2}, "version"),
    ("/api/v1/links", {"src": MEM, "dst": MEM, "type": "relates_to", "reason": True}, "reason"),
    (f"/api/v1/memories/{MEM}/checks", {"outcome": "pass", "detail": 1}, "detail"),
    (f"/api/v1/memories/{MEM}/forget", {"reason": 0}, "reason"),
    ("/api/v1/projects", {"slug": 42}, "slug"),
    ("/api/v1/projects", {"slug": "ok", "name": 42}, "name"),
    ("/api/v1/tokens", {"name": 1, "writer": "agent"}, "name"),
    ("/api/v1/tokens", {"name": "n", "writer": "agent", "project": 1}, "project"),
    ("/api/v1/users", {"email": 1}, "email"),
    ("/api/v1/org/settings", {"require_supersede_reason": "yes"}, "require_supersede_reason"),
    ("/api/v1/org/settings", {"require_supersede_reason": 1}, "require_supersede_reason"),
]


@pytest.mark.parametrize(("path", "body", "field"), WRONG_TYPES)
def test_a_value_of_the_wrong_json_type_is_400_naming_the_field_and_changes_nothing(
        api, acme, visible_count, path, body, field):
    before = [api(acme.admin_token).get(p).json() for p in ("/api/v1/projects", "/api/v1/tokens", "/api/v1/org/settings")]
    error = error_of(api(acme.admin_token).post(path, body, format="json"), 400)
    assert error["code"] == "invalid" and field in error["details"]["fields"], error
    assert error["message"].startswith(f"{field}: "), error  # docs/API.md: the message starts with the field
    assert visible_count(acme.admin_token) == 0
    assert [api(acme.admin_token).get(p).json() for p in ("/api/v1/projects", "/api/v1/tokens", "/api/v1/org/settings")] == before


@pytest.mark.parametrize("path", [
    "/api/v1/sources", "/api/v1/recall", "/api/v1/tokens", "/api/v1/links", "/api/v1/projects",
])
def test_unstorable_text_is_refused_on_every_body(api, acme, path):
    error = error_of(post_raw(api, acme.admin_token, path, '{"name": "a\\u0000b", "z": [1e999]}'), 400)
    assert error["code"] == "invalid" and {"name", "z[0]"} & set(error["details"]["fields"])


@pytest.mark.parametrize(("method", "path"), [
    ("get", "/api/v1/memories/mem_%00"),
    ("get", "/api/v1/memories/mem_%00/history"),
    ("post", "/api/v1/memories/mem_%00/forget"),
    ("post", "/api/v1/memories/mem_%00/restore"),
    ("post", "/api/v1/memories/mem_%00/checks"),
    ("get", f"/api/v1/memories/{MEM[:-1]}%00"),
    ("delete", "/api/v1/tokens/tok_%00"),
    ("get", "/api/v1/sources/a%00b/versions"),
    ("post", "/api/v1/conflicts/cfl_%00/resolve"),
])
def test_a_nul_in_a_path_id_is_404(api, acme, method, path):
    body = {"checks": {"outcome": "pass", "detail": "d"}, "resolve": {"decision": "keep_both"}}.get(
        path.rsplit("/", 1)[-1], {})
    response = getattr(api(acme.admin_token), method)(path, body, format="json")
    # Answered like any id that does not exist (API.md: missing things answer identically).
    missing = getattr(api(acme.admin_token), method)(path.replace("%00", "0"), body, format="json")
    assert error_of(response, 404) == error_of(missing, 404) and error_of(response, 404)["code"] == "not_found"


@pytest.mark.parametrize("query", [
    "project=%00", "cursor=%00", "kind=%00", "lifecycle=%00", "limit=%00", "scope=%00",
    "cursor=" + base64.urlsafe_b64encode(f"2026-01-01T00:00:00+00:00|{MEM[:-1]}\x00".encode()).decode(),
    "cursor=" + base64.urlsafe_b64encode(b"2026-01-01T00:00:00\x00|x").decode(),
])
def test_a_nul_in_a_query_string_or_a_feed_cursor_is_400(api, acme, query):
    response = api(acme.admin_token).get(f"/api/v1/memories?{query}")
    assert error_of(response, 400)["code"] == "invalid"


@pytest.mark.parametrize("path", ["/api/v1/loops?project=%00", "/api/v1/conflicts?status=%00"])
def test_a_nul_in_other_query_strings_is_400(api, acme, path):
    assert error_of(api(acme.admin_token).get(path), 400)["code"] == "invalid"


@pytest.mark.parametrize("length", [255, 300, 320])
def test_an_email_longer_than_the_column_is_400(api, acme, length):
    email = "a" * 64 + "@" + ".".join(["b" * 60] * 4)
    email = email[: length - 5] + ".test"
    response = api(acme.admin_token).post("/api/v1/users", {"email": email}, format="json")
    error = error_of(response, 400)
    assert error["code"] == "invalid" and "email" in error["details"]["fields"]


def test_a_70_kb_authorization_header_that_reaches_django_is_401_in_the_envelope(api, acme):
    response = api("zm_" + "x" * 70_000).get("/api/v1/me")
    assert error_of(response, 401)["code"] == "unauthenticated"
    response = api().get("/api/v1/me", HTTP_AUTHORIZATION="Bearer " + "\u00e9" * 40_000)
    assert error_of(response, 401)["code"] == "unauthenticated"



@pytest.mark.slow
def test_oversized_headers_on_the_served_stack_are_401_in_the_envelope(committed, tmp_path):
    """make run's server (uvicorn with httptools) passes header blocks of any size seen on to Django, which answers
    them in the envelope (the issue saw an HTML 431 from another server in front)."""
    build_tenant("acme")
    with served(stack_env(), tmp_path / "server.log") as port:
        for value in ["zm_" + "x" * 8_000, "zm_" + "x" * 70_000, "zm_" + "x" * 200_000, "\u00e9" * 70_000]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                connection.request("GET", "/api/v1/me", headers={"Authorization": f"Bearer {value}"})
                response = connection.getresponse()
                assert (response.status, response.getheader("Content-Type")) == (401, "application/json")
                assert json.loads(response.read())["error"]["code"] == "unauthenticated"
            finally:
                connection.close()
