"""Open dynamic client registration (RFC 7591): public clients only, redirect URIs that are https or loopback http,
small bodies, a limit per address; every refusal stores nothing."""
import json
import secrets

import pytest
from django.test import Client
from oauth2_provider.models import Application

from tests.support.oauth import REDIRECT, register


def test_a_public_client_registers_and_gets_its_metadata_back(db):
    status, client = register(Client(), client_name="Claude Code",
                              redirect_uris=[REDIRECT, "http://localhost:8765/cb", "http://[::1]:9/cb",
                                             "https://app.example.com/oauth/callback"],
                              grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                              scope="memory:read memory:write")
    assert status == 201
    assert client["client_id"] and "client_secret" not in client
    assert (client["token_endpoint_auth_method"], client["grant_types"], client["response_types"]) == (
        "none", ["authorization_code", "refresh_token"], ["code"])
    stored = Application.objects.get(client_id=client["client_id"])
    assert (stored.client_type, stored.authorization_grant_type, stored.name) == (
        "public", "authorization-code", "Claude Code")
    assert stored.redirect_uris.split() == client["redirect_uris"]


@pytest.mark.parametrize("uri", [
    "http://example.com/callback",  # http off loopback
    "http://127.0.0.1.example.com/cb",
    "https://*.example.com/cb",  # wildcard
    "https://example.com/cb#frag",  # fragment
    "https://user:pw@example.com/cb",  # user information
    "https://example.com/a b",  # whitespace would split the stored list
    "javascript:alert(1)",
    "myapp://callback",
    "/relative/cb",
    "https://example.com:notaport/cb",
    "https://example.com/" + "a" * 600,
    "",
    42,
])
def test_a_bad_redirect_uri_is_refused_and_nothing_is_stored(db, uri):
    status, answer = register(Client(), redirect_uris=[REDIRECT, uri])
    assert (status, answer["error"]) == (400, "invalid_redirect_uri"), answer
    assert Application.objects.count() == 0


@pytest.mark.parametrize("metadata, error", [
    ({"redirect_uris": []}, "invalid_redirect_uri"),
    ({"redirect_uris": [f"http://127.0.0.1:{port}/cb" for port in range(1000, 1006)]}, "invalid_redirect_uri"),
    ({"redirect_uris": REDIRECT}, "invalid_redirect_uri"),
    ({"token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"),
    ({"grant_types": ["authorization_code", "implicit"]}, "invalid_client_metadata"),
    ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
    ({"response_types": ["token"]}, "invalid_client_metadata"),
    ({"client_name": "x" * 101}, "invalid_client_metadata"),
    ({"client_name": "evil\u202eroot"}, "invalid_client_metadata"),
    ({"client_name": ["a"]}, "invalid_client_metadata"),
    ({"scope": "memory:read admin"}, "invalid_client_metadata"),
])
def test_bad_client_metadata_is_refused_and_nothing_is_stored(db, metadata, error):
    status, answer = register(Client(), **metadata)
    assert (status, answer["error"]) == (400, error), answer
    assert Application.objects.count() == 0


def test_a_body_that_is_not_small_json_is_refused(db):
    client = Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.0.1")  # an address of its own: the limit counts per address
    for body, content_type, status in (
        ("{", "application/json", 400),
        ("[]", "application/json", 400),
        ("redirect_uris=x", "application/x-www-form-urlencoded", 400),
        (json.dumps({"redirect_uris": [REDIRECT], "junk": "x" * 9000}), "application/json", 413),
    ):
        response = client.post("/oauth/register", body, content_type=content_type)
        assert (response.status_code, response.json()["error"]) == (status, "invalid_client_metadata")
    assert client.get("/oauth/register").status_code == 405
    assert Application.objects.count() == 0


def test_a_flood_of_registrations_from_one_address_is_rate_limited(db, settings):
    settings.OAUTH_REGISTRATIONS_PER_WINDOW = 3
    address = f"192.0.2.{secrets.randbelow(200) + 1}"  # Redis's window outlives the test: a second run starts afresh
    statuses = [register(Client(), address=address)[0] for _ in range(3)]
    status, answer = register(Client(), address=address)
    assert statuses == [201, 201, 201]
    assert (status, answer["error"]) == (429, "rate_limited")
    assert Application.objects.count() == 3
    assert register(Client(), address=f"198.18.{secrets.randbelow(250)}.1")[0] == 201  # the control: another address is not held back
