"""Checks, sources and loops (seeds 003 and 004)."""
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory import selectors, services, sources
from memory.api.objects import MAX_CONTENT_CHARS, MEMORY_ID, CheckOutput, MemoryOutput
from memory.models import Check, Memory
from plumbing.fields import StrictCharField, StrictSlugField
from plumbing.schema import error, results_of
from tenants.views import TenantAPIView

ABSOLUTE_URI = RegexValidator(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$", "Enter an absolute URL or URI (scheme:...), without spaces.")


class ChecksView(TenantAPIView):
    class Input(serializers.Serializer):
        outcome = serializers.ChoiceField(choices=Check.Outcome.choices)
        detail = StrictCharField(max_length=2000)
        corrected_by = serializers.RegexField(MEMORY_ID, required=False, allow_null=True)

    class Output(serializers.Serializer):
        check = CheckOutput()

    @extend_schema(operation_id="memory_check", request=Input, responses={
        201: Output, 409: error("The correction (`corrected_by`) is not live.")})
    def post(self, request, memory_id: str):
        data = self.validated(self.Input)
        check = services.memory_check_record(principal=self.principal, memory_id=memory_id, **data)
        return Response({"check": CheckOutput(check).data}, status=status.HTTP_201_CREATED)


class SourcesView(TenantAPIView):
    class Input(serializers.Serializer):
        source_id = StrictCharField(max_length=500)
        content = StrictCharField(max_length=MAX_CONTENT_CHARS, trim_whitespace=False)
        version = StrictCharField(max_length=100, required=False, allow_null=True)
        # Any absolute URI: an intranet wiki (http://wiki/page) or a bucket (s3://docs/a.md) is a source too. Pages
        # show it as text, never as a link, so no scheme can run anything.
        url = StrictCharField(max_length=2000, required=False, allow_null=True, validators=[ABSOLUTE_URI])
        kind = serializers.ChoiceField(choices=Memory.Kind.choices, default=Memory.Kind.FACT)
        project = StrictSlugField(required=False, allow_null=True)

    class Output(serializers.Serializer):
        memory = MemoryOutput()
        created = serializers.BooleanField()
        superseded = serializers.CharField(allow_null=True)
        conflict = serializers.CharField(
            allow_null=True, help_text="The conflict opened by a watcher's provisional version (it retires nothing).")

    def prepare_post(self, request) -> tuple[dict, object]:
        """Outside the transaction: validate and embed."""
        data = self.validated(self.Input)
        return data, services.memory_embedding(data["content"])

    @extend_schema(operation_id="source_put", request=Input, responses={
        201: Output, 200: Output, 404: error("No such project (or not a member).")})
    def post(self, request):
        data, embedded = self.prepared
        result = services.source_put(
            principal=self.principal, source_id=data["source_id"], content=data["content"], embedded=embedded,
            version=data.get("version"), url=data.get("url"), kind=data["kind"], project_slug=data.get("project"),
        )
        memory = selectors.memory_get(memory_id=result.memory.id)
        body = {"memory": MemoryOutput(memory).data, "created": result.created, "superseded": result.superseded,
                "conflict": result.conflict}
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class SourceVersionsView(TenantAPIView):
    @extend_schema(operation_id="source_versions", responses={200: results_of(MemoryOutput)})
    def get(self, request, source_id: str):
        return Response({"results": MemoryOutput(sources.source_versions(source_id=source_id), many=True).data})


class LoopsView(TenantAPIView):
    class Query(serializers.Serializer):
        project = serializers.SlugField(required=False)
        state = serializers.ChoiceField(choices=["open", "closed"], default="open")

    @extend_schema(operation_id="loops", parameters=[Query], responses={
        200: results_of(MemoryOutput), 404: error("No such project (or not a member).")})
    def get(self, request):
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        loops = selectors.loop_list(user=self.principal.user, state=query.validated_data["state"],
                                    project_slug=query.validated_data.get("project"))
        return Response({"results": MemoryOutput(loops, many=True).data})
