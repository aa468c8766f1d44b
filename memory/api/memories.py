"""Memory endpoints of API.md: remember, read (detail, history, feed), forget, restore, purge, links."""
import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from memory import purge, selectors, services
from memory.api.objects import (
    MAX_CONTENT_CHARS,
    MAX_LINKS,
    MAX_METADATA_BYTES,
    MEMORY_ID,
    CheckOutput,
    EventOutput,
    LinkInput,
    LinkOutput,
    MemoryOutput,
    key_field,
    namespace_field,
)
from memory.models import Link, Memory
from memory.vocabulary import Dedup, SkipReason
from plumbing.errors import Code, Invalid, TooLarge
from plumbing.fields import StrictBooleanField, StrictCharField, StrictSlugField
from plumbing.schema import error
from plumbing.timing import StepTimer
from tenants.auth import Principal
from tenants.views import TenantAPIView, validated


class MemoriesView(TenantAPIView):
    """POST: remember. GET: the feed."""

    timed = {"POST": "remember"}

    class Input(serializers.Serializer):
        content = StrictCharField(trim_whitespace=False)
        kind = serializers.ChoiceField(choices=Memory.Kind.choices, default=Memory.Kind.NOTE)
        scope = serializers.ChoiceField(choices=Memory.Scope.choices, required=False, allow_null=True)
        project = StrictSlugField(required=False, allow_null=True)
        links = LinkInput(many=True, required=False, default=list)
        session_id = StrictCharField(required=False, allow_null=True, max_length=200)
        valid_from = serializers.DateTimeField(required=False, allow_null=True)
        valid_until = serializers.DateTimeField(required=False, allow_null=True)
        source = serializers.DictField(required=False, allow_null=True)
        metadata = serializers.DictField(required=False, default=dict)
        namespace = namespace_field(required=False, allow_null=True)
        key = key_field(required=False, allow_null=True)

        def validate(self, data: dict) -> dict:
            if data.get("valid_from") and data.get("valid_until") and data["valid_until"] <= data["valid_from"]:
                raise serializers.ValidationError({"valid_until": ["Must be later than valid_from."]})
            return data

    class Output(serializers.Serializer):
        class SkippedLink(serializers.Serializer):
            dst = serializers.CharField()
            reason = serializers.ChoiceField(choices=list(SkipReason))

        class SimilarMemory(serializers.Serializer):
            id = serializers.CharField()
            kind = serializers.ChoiceField(choices=Memory.Kind.choices)
            scope = serializers.ChoiceField(choices=Memory.Scope.choices)
            project = serializers.CharField(allow_null=True)
            content_preview = serializers.CharField()
            distance = serializers.FloatField()
            age_seconds = serializers.IntegerField()

        memory = MemoryOutput()
        created = serializers.BooleanField()
        dedup = serializers.ChoiceField(choices=list(Dedup), allow_null=True)
        absorbed_into = serializers.CharField(allow_null=True)
        superseded = serializers.ListField(child=serializers.CharField())
        skipped = SkippedLink(many=True)
        similar_existing = SimilarMemory(many=True, allow_null=True)  # null when the write declared a supersede
        hint = serializers.CharField(allow_null=True)

    class FeedOutput(serializers.Serializer):
        results = MemoryOutput(many=True)
        next_cursor = serializers.CharField(allow_null=True)

    def prepare_post(self, request) -> tuple[dict, object]:
        return self.prepare(request.data)

    @classmethod
    def prepare(cls, body: object) -> tuple[dict, object]:
        """Outside the transaction: check the limits, validate, and embed the content (REST and MCP's remember)."""
        # Size limits first, with their own status, before anything else looks at the body.
        if isinstance(body, dict):
            if isinstance(body.get("content"), str) and len(body["content"]) > MAX_CONTENT_CHARS:
                raise TooLarge(Code.CONTENT_TOO_LARGE, f"content is longer than {MAX_CONTENT_CHARS} characters.",
                               {"limit": MAX_CONTENT_CHARS, "length": len(body["content"])})
            if isinstance(body.get("metadata"), dict) and len(json.dumps(body["metadata"])) > MAX_METADATA_BYTES:
                raise TooLarge(Code.METADATA_TOO_LARGE, "metadata is larger than 8 KB.", {"limit": MAX_METADATA_BYTES})
            # Before validating them: 5,000 links took 9 s to check and store, and a 300 KB answer.
            if isinstance(body.get("links"), list) and len(body["links"]) > MAX_LINKS:
                raise Invalid(Code.TOO_MANY_LINKS, f"A write may carry at most {MAX_LINKS} links.",
                              {"limit": MAX_LINKS, "count": len(body["links"])})
        data = validated(cls.Input, body)
        return data, services.memory_embedding(data["content"])

    @extend_schema(operation_id="remember", request=Input, responses={
        201: Output, 200: Output, 404: error("No such project (or not a member).")})
    def post(self, request):
        body, created = self.remember(self.principal, self.prepared, self.steps)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @classmethod
    def remember(cls, principal: Principal, prepared: tuple[dict, object], steps: StepTimer) -> tuple[dict, bool]:
        """Inside the caller's transaction: the body of the answer, and whether a row was stored."""
        data, embedded = prepared
        draft = services.MemoryDraft(
            content=data["content"], kind=data["kind"], scope=data.get("scope"), project=data.get("project"),
            links=tuple(services.LinkSpec(link["type"], link["dst"], link.get("reason")) for link in data["links"]),
            session_id=data.get("session_id"), valid_from=data.get("valid_from"), valid_until=data.get("valid_until"),
            source=data.get("source"), metadata=data["metadata"], namespace=data.get("namespace"), key=data.get("key"),
        )
        result = services.memory_remember(principal=principal, draft=draft, embedded=embedded, steps=steps)
        return cls.Output(result.__dict__).data, result.created

    class FeedInput(serializers.Serializer):
        lifecycle = serializers.ChoiceField(choices=sorted(selectors.LIFECYCLES), default="live")
        kind = serializers.ChoiceField(choices=Memory.Kind.choices, required=False)
        project = serializers.SlugField(required=False)
        scope = serializers.ChoiceField(choices=Memory.Scope.choices, required=False)
        limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
        cursor = serializers.CharField(required=False)
        namespace = namespace_field(strict=False, required=False, help_text="Exact namespace, one label per"
                                    " parameter, in order.")
        key = key_field(strict=False, required=False)
        namespace_prefix = namespace_field(strict=False, required=False, help_text="Namespaces that start with"
                                           " these labels, one per parameter.")

    @extend_schema(operation_id="feed", parameters=[FeedInput], responses={
        200: FeedOutput, 404: error("No such project (or not a member).")})
    def get(self, request):
        query = self.FeedInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        results, next_cursor = selectors.memory_feed(
            user=self.principal.user, lifecycle=params["lifecycle"], kind=params.get("kind"),
            project_slug=params.get("project"), scope=params.get("scope"), limit=params["limit"],
            cursor=params.get("cursor"), namespace=params.get("namespace"), key=params.get("key"),
            namespace_prefix=params.get("namespace_prefix"),
        )
        return Response({"results": MemoryOutput(results, many=True).data, "next_cursor": next_cursor})


MAX_INT = 2**31 - 1  # what Postgres takes for an array bound; an offset past it could never find anything anyway


class NamespacesView(TenantAPIView):
    """The distinct namespaces of the live memories the caller can see."""

    class Input(serializers.Serializer):
        prefix = namespace_field(strict=False, required=False, help_text="Namespaces that start with these labels"
                                 " (`*` matches any one label).")
        suffix = namespace_field(strict=False, required=False, help_text="Namespaces that end with these labels"
                                 " (`*` matches any one label).")
        max_depth = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False, help_text="Cut each"
                                             " namespace to this many labels (then listed once).")
        limit = serializers.IntegerField(min_value=1, max_value=1000, default=100)
        offset = serializers.IntegerField(min_value=0, max_value=MAX_INT, default=0)

    class Output(serializers.Serializer):
        results = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))

    @extend_schema(operation_id="namespaces", parameters=[Input], responses={200: Output})
    def get(self, request):
        query = self.Input(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        return Response({"results": selectors.namespace_list(
            prefix=params.get("prefix", []), suffix=params.get("suffix", []), max_depth=params.get("max_depth"),
            limit=params["limit"], offset=params["offset"],
        )})


class ConflictSummary(serializers.Serializer):
    """A conflict as the memory detail lists it (the full object is in GET /conflicts)."""

    id = serializers.CharField()
    a = serializers.CharField()
    b = serializers.CharField()
    relation = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)
    judge = serializers.CharField()
    rationale = serializers.CharField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemoryDetailView(TenantAPIView):
    class Output(serializers.Serializer):
        memory = MemoryOutput()
        chain = MemoryOutput(many=True)
        links = LinkOutput(many=True)
        events = EventOutput(many=True)
        checks = CheckOutput(many=True)
        conflicts = ConflictSummary(many=True)

    @extend_schema(operation_id="memory_detail", responses={200: Output})
    def get(self, request, memory_id: str):
        return Response(self.detail(memory_id))

    @classmethod
    def detail(cls, memory_id: str) -> dict:
        """The memory with its chain, links, events, checks and conflicts (REST and MCP's get_memory)."""
        memory = selectors.memory_get(memory_id=memory_id)
        return cls.Output({
            "memory": memory,
            "chain": selectors.memory_chain(memory=memory),
            "links": selectors.memory_links(memory=memory),
            "events": selectors.memory_events(memory=memory),
            "checks": selectors.memory_checks(memory=memory),
            "conflicts": [
                {"id": c.id, "a": c.a_id, "b": c.b_id, "relation": c.relation, "confidence": c.confidence,
                 "judge": c.judge, "rationale": c.rationale, "status": c.status, "created_at": c.created_at}
                for c in selectors.memory_conflicts(memory=memory)
            ],
        }).data


class MemoryHistoryView(TenantAPIView):
    class Output(serializers.Serializer):
        chain = MemoryOutput(many=True)

    @extend_schema(operation_id="memory_history", responses={200: Output})
    def get(self, request, memory_id: str):
        memory = selectors.memory_get(memory_id=memory_id)
        return Response({"chain": MemoryOutput(selectors.memory_chain(memory=memory), many=True).data})


class MemoryOnlyOutput(serializers.Serializer):
    memory = MemoryOutput()


class ForgetView(TenantAPIView):
    class Input(serializers.Serializer):
        reason = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=2000)

    @extend_schema(operation_id="memory_forget", request=Input, responses={
        200: MemoryOnlyOutput, 409: error("The memory is not live.")})
    def post(self, request, memory_id: str):
        data = self.validated(self.Input)
        memory = services.memory_forget(principal=self.principal, memory_id=memory_id, reason=data.get("reason"))
        return Response({"memory": MemoryOutput(memory).data})


class RestoreView(TenantAPIView):
    class Input(serializers.Serializer):
        """No fields; a body, when sent, is still checked like any other (JSON, an object, at most 1 MiB)."""

    # An empty serializer leaves the body out of the document: say "any JSON object (ignored)" instead.
    @extend_schema(operation_id="memory_restore", request={"application/json": OpenApiTypes.OBJECT}, responses={
        200: MemoryOnlyOutput, 409: error("The memory is already live.")})
    def post(self, request, memory_id: str):
        self.validated(self.Input)  # a bad body changes nothing
        memory = services.memory_restore(principal=self.principal, memory_id=memory_id)
        return Response({"memory": MemoryOutput(memory).data})


class PurgeView(TenantAPIView):
    """The privacy purge: the one deletion (memory/purge.py). Org admins only; a member is refused before any lookup."""

    admin_only = True

    class Input(serializers.Serializer):
        reason = StrictCharField(max_length=purge.MAX_REASON_CHARS)  # required and not blank: the audit row's "why"
        whole_chain = StrictBooleanField(required=False, default=False)

    @extend_schema(operation_id="memory_purge", request=Input, responses={204: None})
    def post(self, request, memory_id: str):
        data = self.validated(self.Input)
        purge.memory_purge(principal=self.principal, memory_id=memory_id, reason=data["reason"],
                           whole_chain=data["whole_chain"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class LinksView(TenantAPIView):
    class Input(serializers.Serializer):
        src = serializers.RegexField(MEMORY_ID)
        dst = serializers.RegexField(MEMORY_ID)
        type = serializers.ChoiceField(choices=Link.Type.choices)
        reason = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=2000)

    class Output(serializers.Serializer):
        link = LinkOutput()

    @extend_schema(operation_id="link_create", request=Input, responses={
        201: Output, 404: error("An end of the link does not exist or is not visible.")})
    def post(self, request):
        data = self.validated(self.Input)
        link = services.memory_link(principal=self.principal, **data)
        return Response({"link": LinkOutput(link).data}, status=status.HTTP_201_CREATED)
