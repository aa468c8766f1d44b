"""The base class of every tenant endpoint: authenticate, prepare, then one transaction as the caller."""
from contextlib import ExitStack

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from plumbing.errors import Code, Forbidden
from plumbing.parsers import check_path_and_query
from plumbing.timing import StepTimer
from tenants import entry
from tenants.auth import Principal, require_write
from tenants.entry import roll_back_on_error


# What the services answer for an id that does not exist, per path parameter.
MISSING = {"memory_id": "No such memory.", "conflict_id": "No such conflict.", "source_id": "No such source.",
           "slug": "No such project.", "token_id": "No such token."}


def missing(name: str) -> str:
    return MISSING.get(name, "No such resource.")


class TenantAPIView(APIView):
    """Each request runs in exactly one transaction, as the caller (the rule in tenants/rls.py).

    Order: DRF authenticates (the token or session resolves to an ``Identity``, nothing read as it yet), then the
    optional ``prepare_<method>`` runs outside any transaction for slow work such as embedding, and its return value
    becomes ``self.prepared``; then the transaction opens with the caller's identity, the principal is loaded and the
    handler runs. An error response rolls the whole transaction back (config/errors.py).
    """

    # The docstring above is also the description of every operation without one of its own in /api/schema/, so it
    # is kept word for word while the schema must stay byte-identical. The order it describes is tenants/entry.py's,
    # and the rollback of an error response happens in dispatch below (it was in config/errors.py).

    admin_only = False
    timed: dict[str, str] = {}  # method -> the operation whose steps the metrics keep (remember, recall)
    reads_only = False  # a POST that only reads (recall): a read-only OAuth grant may send it

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Nested serializers are all called Input/Output; give each a unique name in the OpenAPI document.
        for role in ("Input", "Output"):
            serializer = cls.__dict__.get(role)
            if serializer is not None:
                extend_schema_serializer(component_name=cls.__name__.removesuffix("View") + role)(serializer)

    def dispatch(self, request, *args, **kwargs):
        self.steps = StepTimer(self.timed.get(request.method))  # what each step cost, sent back as Server-Timing
        self._transaction_open = False
        with ExitStack() as self._transaction:
            response = super().dispatch(request, *args, **kwargs)
            if self._transaction_open:
                roll_back_on_error(response.status_code)
        self.steps.lap("commit")
        response["Server-Timing"] = self.steps.server_timing()
        self.steps.finish()
        return response

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)  # authentication and IsAuthenticated
        self.steps.lap("authenticate")
        prepare = getattr(self, f"prepare_{request.method.lower()}", None)
        # Middleware would run too early: DRF authenticates inside the view.
        entered = self._transaction.enter_context(entry.enter(
            request.auth, self.steps,
            check=lambda: check_path_and_query(kwargs, dict(request.query_params.lists()), missing),
            prepare=(lambda: prepare(request, *args, **kwargs)) if prepare else None,
        ))
        self._transaction_open = True
        self.principal: Principal = entered.principal
        self.prepared = entered.prepared
        if self.admin_only:
            self.require_admin()
        if request.method not in ("GET", "HEAD", "OPTIONS") and not self.reads_only:
            require_write(self.principal, f"{request.method} {request.path}")

    def finalize_response(self, request, response, *args, **kwargs):
        self.steps.lap("render")  # the handler's work since the service's last step: mostly serialization
        return super().finalize_response(request, response, *args, **kwargs)

    def require_admin(self) -> None:
        if not self.principal.is_admin:
            raise Forbidden(Code.ADMIN_ONLY, "Only organization admins may do this.")

    def validated(self, serializer_class: type[serializers.Serializer]) -> dict:
        return validated(serializer_class, self.request.data)


def validated(serializer_class: type[serializers.Serializer], data: object) -> dict:
    """The input checked by the endpoint's serializer (invalid: 400 in the envelope); the MCP tools use it too."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data

