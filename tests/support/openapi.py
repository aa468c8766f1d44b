"""Every response of the API tests, checked against the OpenAPI document that /api/schema/ serves.

The test client (tests/conftest.py) passes each response through `check_response`: the operation must list the status,
and the body must match the operation's schema for that status. Objects are checked closed (a field the document does
not name is a difference too), although the document itself leaves them open so that fields can be added later.
"""
import json
import re
import threading
import uuid
from datetime import datetime
from functools import cache

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from rest_framework.test import APIClient

API_PREFIX = "/api/v1/"
_generate = threading.Lock()  # the concurrency tests send their first requests from several threads at once


class ResponseMismatch(AssertionError):
    """A response that the OpenAPI document does not describe."""


@cache
def _document() -> dict:
    return json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))


def document() -> dict:
    with _generate:
        return _document()


def _closed(schema):
    """A copy in which every object with named properties admits no others."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed = {key: _closed(value) for key, value in schema.items()}
    if "properties" in closed and "additionalProperties" not in closed:
        closed["additionalProperties"] = False
    return closed


# jsonschema checks date-time only with an optional package; these are the formats our document uses.
FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value) -> bool:
    return not isinstance(value, str) or datetime.fromisoformat(value).tzinfo is not None


@FORMATS.checks("uuid", raises=ValueError)
def _is_uuid(value) -> bool:
    return not isinstance(value, str) or bool(uuid.UUID(value))


@FORMATS.checks("email")
def _is_email(value) -> bool:
    return not isinstance(value, str) or "@" in value


def validator(schema: dict, components: dict | None = None) -> Draft202012Validator:
    """A JSON Schema 2020-12 validator (OpenAPI 3.1) whose `#/components/...` references resolve in `components`."""
    components = components if components is not None else document()["components"]
    return Draft202012Validator({"components": _closed(components), **_closed(schema)}, format_checker=FORMATS)


# Path parameters that may hold a "/" (memory/urls.py routes them with Django's path converter): a source id is
# often a file's path in a repository.
SLASHED_PARAMETERS = {"source_id"}


@cache
def _routes() -> list[tuple[re.Pattern, str]]:
    routes = []
    for template in document()["paths"]:
        pattern = re.escape(template)
        for name in SLASHED_PARAMETERS:
            pattern = pattern.replace(re.escape("{" + name + "}"), ".+")
        pattern = re.sub(r"\\\{[^}/]+\\\}", "[^/]+", pattern)
        routes.append((re.compile(pattern + "$"), template))
    return sorted(routes, key=lambda route: route[1].count("{"))  # literal paths before templated ones


@cache
def _body_validator(template: str, method: str, status: str) -> Draft202012Validator | None:
    response = document()["paths"][template][method]["responses"][status]
    if "content" not in response:
        return None
    return validator(response["content"]["application/json"]["schema"])


def _error_validator() -> Draft202012Validator:
    return validator({"$ref": "#/components/schemas/Error"})


def check_response(method: str, path: str, status: int, content_type: str | None, body: bytes) -> str | None:
    """Raise ResponseMismatch when the document does not describe this response; return its operationId.

    Paths outside /api/v1/ are not in the document (None). Under it, a path or method that the document does not
    list must be answered 404 or 405 in the error envelope.
    """
    if not path.startswith(API_PREFIX):
        return None
    method = method.lower()
    where = f"{method.upper()} {path} -> {status}"
    template = next((template for pattern, template in _routes() if pattern.match(path)), None)
    operation = document()["paths"][template].get(method) if template else None
    if operation is None:
        if status not in (404, 405):
            raise ResponseMismatch(f"{where}: not in the document, so it should answer 404 or 405")
        _check_json(where, _error_validator(), content_type, body)
        return None
    if str(status) not in operation["responses"]:
        documented = ", ".join(operation["responses"])
        raise ResponseMismatch(f"{where}: status not documented for {operation['operationId']} ({documented})")
    body_validator = _body_validator(template, method, str(status))
    if body_validator is None:
        if body:
            raise ResponseMismatch(f"{where}: documented without a body, but sent {body[:200]!r}")
    else:
        _check_json(where, body_validator, content_type, body)
    return operation["operationId"]


def _check_json(where: str, body_validator: Draft202012Validator, content_type: str | None, body: bytes) -> None:
    if (content_type or "").split(";")[0].strip() != "application/json":
        raise ResponseMismatch(f"{where}: Content-Type {content_type!r}, documented application/json")
    try:
        data = json.loads(body)
    except ValueError:
        raise ResponseMismatch(f"{where}: not JSON: {body[:200]!r}") from None
    error = best_match(body_validator.iter_errors(data))
    if error is not None:
        schema_path = "/".join(str(part) for part in error.schema_path)
        raise ResponseMismatch(f"{where}: {error.message[:500]} (at {error.json_path}; schema rule {schema_path})")


class ValidatingClient(APIClient):
    """The API client of the tests: every response is checked against the document, and (operationId, status) of
    each documented one is appended to `calls`."""

    def __init__(self, *args, calls: list[tuple[str, int]] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls = calls if calls is not None else []

    def request(self, **request):
        response = super().request(**request)
        operation = check_response(request["REQUEST_METHOD"], request["PATH_INFO"], response.status_code,
                                   response.get("Content-Type"), response.content)
        if operation is not None:
            self.calls.append((operation, response.status_code))
        return response


# The operations of the document, and paths to them that name nothing (the rate limit and error-status tests).
MISSING_MEMORY = "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"


def operations() -> list[tuple[str, str, dict]]:
    return [
        (method.upper(), path, operation)
        for path, item in document()["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def documented(statuses: range) -> set[tuple[str, int]]:
    return {
        (operation["operationId"], int(status))
        for _, _, operation in operations()
        for status in operation["responses"]
        if int(status) in statuses
    }


def concrete(path: str) -> str:
    """The path with a parameter value that names nothing (a well-formed one, so routing and parsing pass)."""
    values = {"memory_id": MISSING_MEMORY, "user_id": str(uuid.uuid4()), "conflict_id": "cfl_missing",
              "token_id": "tok_missing", "slug": "no-such-project", "source_id": "no-such-source"}
    return re.sub(r"\{(\w+)\}", lambda match: values[match.group(1)], path)
