"""How every operation of the OpenAPI document lists its error answers, in one place.

Views declare their success answers (and the few errors no rule can see, such as a 409) with
`@extend_schema(responses={...})`; the error statuses that follow from the operation's shape are added here, all with
the one envelope of plumbing/errors.py. tests/support/openapi.py checks every response of the API tests against the result.
"""
from functools import cache

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorBody(serializers.Serializer):
    code = serializers.CharField(help_text="snake_case, stable: clients branch on it.")
    message = serializers.CharField(help_text="A human sentence.")
    details = serializers.DictField(help_text="Context; for invalid input, `fields` maps each field to its errors.")


class Error(serializers.Serializer):
    """The one error envelope: {"error": {"code", "message", "details"}}."""

    error = ErrorBody()


def error(description: str) -> OpenApiResponse:
    """An error answer a view lists itself, e.g. `409: error("The slug is taken.")`."""
    return OpenApiResponse(Error, description=description)


@cache
def results_of(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The list answer of API.md, {"results": [item, ...]}: UserOutput -> component UserList."""
    name = item.__name__.removesuffix("Output") + "List"
    return type(name, (serializers.Serializer,), {"results": item(many=True), "__module__": item.__module__})


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction: str = "response") -> dict:
        # Every operation names its success statuses: drf-spectacular would otherwise guess 200 or 201.
        declared = self.get_response_serializers()
        assert isinstance(declared, dict), f"{self.method} {self.path}: declare responses as {{status: body}}"
        bodies = super()._get_response_bodies(direction)
        for status, description in self._error_statuses().items():
            bodies.setdefault(str(status), self._get_response_for_code(error(description), str(status)))
        return dict(sorted(bodies.items()))

    def _error_statuses(self) -> dict[int, str]:
        """The errors that follow from the operation's shape (its body, parameters, method and permissions)."""
        statuses = {401: "No token, or a bad or revoked one (or no organization chosen in the session)."}
        if self.method in ("POST", "PUT", "PATCH") and self.get_request_serializer() is not None:
            statuses[400] = "Invalid input: a field, a body that is not a JSON object, or malformed JSON."
            statuses[413] = "The body or one of its fields is over its size limit."
            statuses[415] = "The body is not `application/json`."
        elif self.get_override_parameters():
            statuses[400] = "An invalid query parameter."
        if self.method not in ("GET", "HEAD", "OPTIONS") or getattr(self.view, "admin_only", False):
            # Unsafe methods: a session without its CSRF token, and the per-operation rules (admins, watchers).
            statuses[403] = "Not allowed for this user or token."
        if "{" in self.path:
            statuses[404] = "Not found, or not visible to the caller (the two answer alike)."
        statuses[429] = ("More than `RATE_LIMIT_PER_MINUTE` requests from this token in its window (`rate_limited`);"
                         " `Retry-After` says when to retry.")
        statuses[503] = ("A statement ran past the statement timeout (`statement_timeout`: nothing changed), or the "
                         "database is unavailable for a moment (`database_unavailable`); retry.")
        return statuses
