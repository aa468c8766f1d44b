"""Hygiene endpoints of API.md: the conflict queue, its resolution, and the stats."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from hygiene import selectors, services
from memory.api.objects import MEMORY_ID, MemoryOutput
from memory.models import Conflict
from memory.vocabulary import Resolution
from plumbing.schema import error, results_of
from tenants.views import TenantAPIView


class ConflictMemories(serializers.Serializer):
    a = MemoryOutput()
    b = MemoryOutput()


class ConflictOutput(serializers.Serializer):
    id = serializers.CharField()
    a = serializers.CharField(source="a_id")
    b = serializers.CharField(source="b_id")
    relation = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)
    judge = serializers.CharField()
    rationale = serializers.CharField()
    status = serializers.ChoiceField(choices=Conflict.Status.choices)
    resolution = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    memories = ConflictMemories(source="*")


class ConflictsView(TenantAPIView):
    class Query(serializers.Serializer):
        status = serializers.ChoiceField(choices=Conflict.Status.choices, required=False)

    @extend_schema(operation_id="conflicts_list", parameters=[Query], responses={200: results_of(ConflictOutput)})
    def get(self, request):
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(self.results(query.validated_data.get("status")))

    @staticmethod
    def results(status: str | None) -> dict:
        """The visible conflicts, with both memories (REST and MCP's list_conflicts)."""
        conflicts = selectors.conflict_list(status=status).select_related(
            "a__owner", "a__project", "b__owner", "b__project"
        )
        return {"results": ConflictOutput(conflicts, many=True).data}


class ConflictResolveView(TenantAPIView):
    class Input(serializers.Serializer):
        decision = serializers.ChoiceField(choices=list(Resolution))
        winner = serializers.RegexField(MEMORY_ID, required=False, allow_null=True)

        def validate(self, data: dict) -> dict:
            if data["decision"] == Resolution.SUPERSEDE and not data.get("winner"):
                raise serializers.ValidationError({"winner": ["Required when the decision is 'supersede'."]})
            return data

    class Output(serializers.Serializer):
        conflict = ConflictOutput()

    @extend_schema(operation_id="conflicts_resolve", request=Input, responses={
        200: Output, 409: error("The conflict is already resolved, or the winner is no longer live.")})
    def post(self, request, conflict_id: str):
        data = self.validated(self.Input)
        conflict = services.conflict_resolve(
            principal=self.principal, conflict_id=conflict_id, decision=data["decision"], winner=data.get("winner")
        )
        return Response({"conflict": ConflictOutput(conflict).data})


class StatsView(TenantAPIView):
    class Output(serializers.Serializer):
        class MemoryCounts(serializers.Serializer):
            live = serializers.IntegerField()
            superseded = serializers.IntegerField()
            forgotten = serializers.IntegerField()

        class SupersedeCounts(serializers.Serializer):
            declared = serializers.IntegerField()
            judge = serializers.IntegerField()
            review = serializers.IntegerField()
            check = serializers.IntegerField()
            source = serializers.IntegerField()
            key = serializers.IntegerField(help_text="Replaced by a write of the same namespace and key.")

        class ConflictCounts(serializers.Serializer):
            open = serializers.IntegerField()
            resolved = serializers.IntegerField()
            auto_resolved = serializers.IntegerField()

        class JudgeStats(serializers.Serializer):
            calls = serializers.IntegerField()
            latency_ms_p50 = serializers.FloatField(allow_null=True)
            latency_ms_p95 = serializers.FloatField(allow_null=True)

        class QueueStats(serializers.Serializer):
            pending = serializers.IntegerField()
            same_writer_share = serializers.FloatField(min_value=0, max_value=1)

        memories = MemoryCounts()
        supersedes = SupersedeCounts()
        conflicts = ConflictCounts()
        explicit_link_ratio = serializers.FloatField(min_value=0, max_value=1)
        judge = JudgeStats()
        queue = QueueStats()

    @extend_schema(operation_id="stats", responses={200: Output})
    def get(self, request):
        return Response(selectors.stats())
