"""The base class of every tenant endpoint: authenticate, then tell Postgres who is asking."""
from drf_spectacular.utils import extend_schema_serializer
from django.db import transaction
from rest_framework import serializers
from rest_framework.views import APIView

from config.errors import Forbidden
from tenants import rls
from tenants.auth import Principal


class TenantAPIView(APIView):
    admin_only = False
    # Views that embed text opt out of the request-wide transaction: they embed first, then open a tenant_scope
    # for the database work only (the model never runs while a transaction holds locks).
    atomic_request = True

    @classmethod
    def as_view(cls, **initkwargs):
        view = super().as_view(**initkwargs)
        return view if cls.atomic_request else transaction.non_atomic_requests(view)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Nested serializers are all called Input/Output; give each a unique name in the OpenAPI document.
        for role in ("Input", "Output"):
            serializer = cls.__dict__.get(role)
            if serializer is not None:
                extend_schema_serializer(component_name=cls.__name__.removesuffix("View") + role)(serializer)

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)  # authentication and IsAuthenticated
        principal: Principal = request.auth
        # Middleware would run too early: DRF authenticates inside the view. The request runs in one transaction
        # (ATOMIC_REQUESTS), so this identity lasts exactly as long as the request.
        if self.atomic_request:
            self._rls_context = rls.activate(principal.scope)
        if self.admin_only:
            self.require_admin()

    def dispatch(self, request, *args, **kwargs):
        self._rls_context = None
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            if self._rls_context is not None:
                # The request's transaction ends right after this, and with it the identity in Postgres.
                rls.deactivate(self._rls_context, restore_database=False)

    @property
    def principal(self) -> Principal:
        return self.request.auth

    def require_admin(self) -> None:
        if not self.principal.is_admin:
            raise Forbidden("admin_only", "Only organization admins may do this.")

    def validated(self, serializer_class: type[serializers.Serializer]) -> dict:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
