"""Hygiene endpoints of API.md: the conflict queue, its resolution, and the stats."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from hygiene import selectors, services
from memory.api.objects import MEMORY_ID, MemoryOutput
from tenants.views import TenantAPIView


class ConflictOutput(serializers.Serializer):
    id = serializers.CharField()
    a = serializers.CharField(source="a_id")
    b = serializers.CharField(source="b_id")
    relation = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)
    judge = serializers.CharField()
    rationale = serializers.CharField()
    status = serializers.CharField()
    resolution = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    memories = serializers.SerializerMethodField()

    def get_memories(self, conflict) -> dict:
        return {"a": MemoryOutput(conflict.a).data, "b": MemoryOutput(conflict.b).data}


class ConflictsView(TenantAPIView):
    class Query(serializers.Serializer):
        status = serializers.ChoiceField(choices=["open", "resolved"], required=False)

    @extend_schema(operation_id="conflicts_list", parameters=[Query], responses=ConflictOutput(many=True))
    def get(self, request):
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        conflicts = selectors.conflict_list(status=query.validated_data.get("status")).select_related(
            "a__owner", "a__project", "b__owner", "b__project"
        )
        return Response({"results": ConflictOutput(conflicts, many=True).data})


class ConflictResolveView(TenantAPIView):
    class Input(serializers.Serializer):
        decision = serializers.ChoiceField(choices=["supersede", "keep_both"])
        winner = serializers.RegexField(MEMORY_ID, required=False, allow_null=True)

        def validate(self, data: dict) -> dict:
            if data["decision"] == "supersede" and not data.get("winner"):
                raise serializers.ValidationError({"winner": ["Required when the decision is 'supersede'."]})
            return data

    @extend_schema(operation_id="conflicts_resolve", request=Input, responses={"200": ConflictOutput})
    def post(self, request, conflict_id: str):
        data = self.validated(self.Input)
        conflict = services.conflict_resolve(
            principal=self.principal, conflict_id=conflict_id, decision=data["decision"], winner=data.get("winner")
        )
        return Response({"conflict": ConflictOutput(conflict).data})


class StatsView(TenantAPIView):
    @extend_schema(operation_id="stats", responses={"200": OpenApiTypes.OBJECT})
    def get(self, request):
        return Response(selectors.stats())
