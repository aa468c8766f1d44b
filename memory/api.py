"""Memory endpoints of API.md: remember, read (detail, history, feed), forget, restore, links."""
import json

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from config.errors import Invalid, TooLarge
from memory import recall, selectors, services, sources
from memory.models import Link, Memory
from tenants import rls
from tenants.views import TenantAPIView

MAX_CONTENT_CHARS = 16000
MAX_METADATA_BYTES = 8 * 1024
MEMORY_ID = r"^mem_[0-9A-HJKMNP-TV-Z]{26}$"


class MemoryOutput(serializers.Serializer):
    """The memory object of API.md."""

    id = serializers.CharField()
    content = serializers.CharField()
    kind = serializers.CharField()
    scope = serializers.CharField()
    project = serializers.CharField(source="project.slug", allow_null=True)
    owner = serializers.SerializerMethodField()
    status = serializers.CharField()
    superseded_by = serializers.CharField(source="superseded_by_id", allow_null=True)
    invalidated_at = serializers.DateTimeField(allow_null=True)
    invalidated_reason = serializers.CharField(allow_null=True)
    provenance = serializers.SerializerMethodField()
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    expired = serializers.BooleanField()
    loop = serializers.CharField(allow_null=True)
    closed_by = serializers.CharField(source="closed_by_id", allow_null=True)
    source = serializers.JSONField(allow_null=True)
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()

    def get_owner(self, memory: Memory) -> dict:
        return {"id": str(memory.owner_id), "email": memory.owner.email}

    def get_provenance(self, memory: Memory) -> dict:
        return {
            "writer": memory.writer,
            "authoritative": memory.authoritative,
            "token": memory.token_id,
            "session_id": memory.session_id,
        }


class LinkOutput(serializers.Serializer):
    id = serializers.CharField()
    src = serializers.CharField(source="src_id")
    dst = serializers.CharField(source="dst_id")
    type = serializers.CharField()
    reason = serializers.CharField(allow_null=True)
    retired_dst = serializers.BooleanField()
    origin = serializers.CharField(allow_null=True)
    created_by = serializers.CharField(source="created_by_id", allow_null=True)
    created_at = serializers.DateTimeField()
    undone_at = serializers.DateTimeField(allow_null=True)


class EventOutput(serializers.Serializer):
    action = serializers.CharField()
    actor = serializers.CharField(source="actor_id", allow_null=True)
    token = serializers.CharField(source="token_id", allow_null=True)
    payload = serializers.JSONField()
    created_at = serializers.DateTimeField()


class LinkInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=Link.Type.choices)
    dst = serializers.RegexField(MEMORY_ID, error_messages={"invalid": "Not a memory id (mem_ + 26-char ULID)."})
    reason = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=2000)


class MemoriesView(TenantAPIView):
    """POST: remember. GET: the feed."""

    atomic_request = False  # remember embeds first, then opens its own transaction

    class Input(serializers.Serializer):
        content = serializers.CharField(trim_whitespace=False)
        kind = serializers.ChoiceField(choices=Memory.Kind.choices, default=Memory.Kind.NOTE)
        scope = serializers.ChoiceField(choices=Memory.Scope.choices, required=False, allow_null=True)
        project = serializers.SlugField(required=False, allow_null=True)
        links = LinkInput(many=True, required=False, default=list)
        session_id = serializers.CharField(required=False, allow_null=True, max_length=200)
        valid_from = serializers.DateTimeField(required=False, allow_null=True)
        valid_until = serializers.DateTimeField(required=False, allow_null=True)
        source = serializers.DictField(required=False, allow_null=True)
        metadata = serializers.DictField(required=False, default=dict)

        def validate(self, data: dict) -> dict:
            if data.get("valid_from") and data.get("valid_until") and data["valid_until"] <= data["valid_from"]:
                raise serializers.ValidationError({"valid_until": ["Must be later than valid_from."]})
            return data

    class Output(serializers.Serializer):
        class Similar(serializers.Serializer):
            id = serializers.CharField()
            kind = serializers.CharField()
            scope = serializers.CharField()
            project = serializers.CharField(allow_null=True)
            content_preview = serializers.CharField()
            distance = serializers.FloatField()
            age_seconds = serializers.IntegerField()

        memory = MemoryOutput()
        created = serializers.BooleanField()
        dedup = serializers.CharField(allow_null=True)
        absorbed_into = serializers.CharField(allow_null=True)
        superseded = serializers.ListField(child=serializers.CharField())
        skipped = serializers.ListField(child=serializers.DictField())
        similar_existing = Similar(many=True, allow_null=True)
        hint = serializers.CharField(allow_null=True)

    class FeedOutput(serializers.Serializer):
        results = MemoryOutput(many=True)
        next_cursor = serializers.CharField(allow_null=True)

    @extend_schema(operation_id="remember", request=Input, responses={201: Output, 200: Output})
    def post(self, request):
        body = request.data
        # Size limits first, with their own status, before anything else looks at the body.
        if isinstance(body, dict):
            if isinstance(body.get("content"), str) and len(body["content"]) > MAX_CONTENT_CHARS:
                raise TooLarge("content_too_large", f"content is longer than {MAX_CONTENT_CHARS} characters.",
                               {"limit": MAX_CONTENT_CHARS, "length": len(body["content"])})
            if isinstance(body.get("metadata"), dict) and len(json.dumps(body["metadata"])) > MAX_METADATA_BYTES:
                raise TooLarge("metadata_too_large", "metadata is larger than 8 KB.", {"limit": MAX_METADATA_BYTES})
        data = self.validated(self.Input)
        supersedes = [link for link in data["links"] if link["type"] == Link.Type.SUPERSEDES]
        if len(supersedes) > services.MAX_SUPERSEDES:
            raise Invalid("too_many_supersedes", f"A write may supersede at most {services.MAX_SUPERSEDES} memories.",
                          {"count": len(supersedes)})
        result = services.memory_remember(
            principal=self.principal,
            content=data["content"],
            kind=data["kind"],
            scope=data.get("scope"),
            project_slug=data.get("project"),
            links=[services.LinkSpec(link["type"], link["dst"], link.get("reason")) for link in data["links"]],
            session_id=data.get("session_id"),
            valid_from=data.get("valid_from"),
            valid_until=data.get("valid_until"),
            source=data.get("source"),
            metadata=data["metadata"],
        )
        with rls.tenant_scope(self.principal.scope):
            memory = selectors.memory_get(memory_id=result.memory.id)
        body = self.Output({**result.__dict__, "memory": memory}).data
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    class FeedInput(serializers.Serializer):
        lifecycle = serializers.ChoiceField(choices=sorted(selectors.LIFECYCLES), default="live")
        kind = serializers.ChoiceField(choices=Memory.Kind.choices, required=False)
        project = serializers.SlugField(required=False)
        scope = serializers.ChoiceField(choices=Memory.Scope.choices, required=False)
        limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
        cursor = serializers.CharField(required=False)

    @extend_schema(operation_id="feed", parameters=[FeedInput], responses=FeedOutput)
    def get(self, request):
        query = self.FeedInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        with rls.tenant_scope(self.principal.scope):
            results, next_cursor = selectors.memory_feed(
                user=self.principal.user, lifecycle=params["lifecycle"], kind=params.get("kind"),
                project_slug=params.get("project"), scope=params.get("scope"), limit=params["limit"],
                cursor=params.get("cursor"),
            )
            return Response({"results": MemoryOutput(results, many=True).data, "next_cursor": next_cursor})


class MemoryDetailView(TenantAPIView):
    class Output(serializers.Serializer):
        memory = MemoryOutput()
        chain = MemoryOutput(many=True)
        links = LinkOutput(many=True)
        events = EventOutput(many=True)
        checks = serializers.ListField(child=serializers.DictField())
        conflicts = serializers.ListField(child=serializers.DictField())


    @extend_schema(operation_id="memory_detail", responses=Output)
    def get(self, request, memory_id: str):
        memory = selectors.memory_get(memory_id=memory_id)
        return Response(self.Output({
            "memory": memory,
            "chain": selectors.memory_chain(memory=memory),
            "links": selectors.memory_links(memory=memory),
            "events": selectors.memory_events(memory=memory),
            "checks": CheckOutput(selectors.memory_checks(memory=memory), many=True).data,
            "conflicts": [
                {"id": c.id, "a": c.a_id, "b": c.b_id, "relation": c.relation, "confidence": c.confidence,
                 "judge": c.judge, "rationale": c.rationale, "status": c.status, "created_at": c.created_at}
                for c in selectors.memory_conflicts(memory=memory)
            ],
        }).data)


class MemoryHistoryView(TenantAPIView):
    class Output(serializers.Serializer):
        chain = MemoryOutput(many=True)

    @extend_schema(operation_id="memory_history", responses=Output)
    def get(self, request, memory_id: str):
        memory = selectors.memory_get(memory_id=memory_id)
        return Response({"chain": MemoryOutput(selectors.memory_chain(memory=memory), many=True).data})


class MemoryOnlyOutput(serializers.Serializer):
    memory = MemoryOutput()


class ForgetView(TenantAPIView):
    atomic_request = False

    class Input(serializers.Serializer):
        reason = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=2000)

    @extend_schema(operation_id="memory_forget", request=Input, responses=MemoryOnlyOutput)
    def post(self, request, memory_id: str):
        data = self.validated(self.Input)
        services.memory_forget(principal=self.principal, memory_id=memory_id, reason=data.get("reason"))
        return _memory_response(self.principal, memory_id)


class RestoreView(TenantAPIView):
    atomic_request = False

    @extend_schema(operation_id="memory_restore", request=None, responses=MemoryOnlyOutput)
    def post(self, request, memory_id: str):
        services.memory_restore(principal=self.principal, memory_id=memory_id)
        return _memory_response(self.principal, memory_id)


def _memory_response(principal, memory_id: str) -> Response:
    with rls.tenant_scope(principal.scope):
        return Response({"memory": MemoryOutput(selectors.memory_get(memory_id=memory_id)).data})


class LinksView(TenantAPIView):
    atomic_request = False

    class Input(serializers.Serializer):
        src = serializers.RegexField(MEMORY_ID)
        dst = serializers.RegexField(MEMORY_ID)
        type = serializers.ChoiceField(choices=Link.Type.choices)
        reason = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=2000)

    class Output(serializers.Serializer):
        link = LinkOutput()

    @extend_schema(operation_id="link_create", request=Input, responses={201: Output})
    def post(self, request):
        data = self.validated(self.Input)
        link = services.memory_link(principal=self.principal, **data)
        return Response({"link": LinkOutput(link).data}, status=status.HTTP_201_CREATED)


class StrictIntegerField(serializers.IntegerField):
    """An integer in the JSON, not a string or a float that looks like one."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class CheckOutput(serializers.Serializer):
    id = serializers.CharField()
    memory = serializers.CharField(source="memory_id")
    outcome = serializers.CharField()
    detail = serializers.CharField()
    corrected_by = serializers.CharField(source="corrected_by_id", allow_null=True)
    created_at = serializers.DateTimeField()


class RecallView(TenantAPIView):
    atomic_request = False  # recall embeds the query first, then reads in its own transaction

    class Input(serializers.Serializer):
        query = serializers.CharField(max_length=MAX_CONTENT_CHARS)
        project = serializers.SlugField(required=False, allow_null=True)
        scope = serializers.ChoiceField(choices=["personal", "project", "all"], default="all")
        kinds = serializers.ListField(child=serializers.ChoiceField(choices=Memory.Kind.choices), required=False,
                                      allow_null=True, allow_empty=False)
        k = StrictIntegerField(min_value=1, max_value=50, default=10)
        include_history = StrictBooleanField(default=False)
        as_of = serializers.DateTimeField(required=False, allow_null=True)

    class Output(serializers.Serializer):
        class Warning(serializers.Serializer):
            memory = MemoryOutput()
            check = CheckOutput()

        class Result(serializers.Serializer):
            memory = MemoryOutput()
            rank = serializers.IntegerField()
            score = serializers.FloatField()
            flags = serializers.ListField(child=serializers.CharField())
            superseded_by = serializers.CharField(allow_null=True)
            conflicts_with = serializers.ListField(child=serializers.CharField())
            why = serializers.DictField()

        warnings = Warning(many=True)
        results = Result(many=True)
        trace = serializers.DictField()

    @extend_schema(operation_id="recall", request=Input, responses=Output)
    def post(self, request):
        data = self.validated(self.Input)
        result = recall.memory_recall(principal=self.principal, q=recall.RecallQuery(
            query=data["query"], k=data["k"], project=data.get("project"), scope=data["scope"],
            kinds=data.get("kinds"), include_history=data["include_history"], as_of=data.get("as_of"),
        ))
        results = [
            {
                "memory": MemoryOutput(hit.memory).data,
                "rank": rank,
                "score": round(hit.score, 6),
                "flags": hit.flags,
                "superseded_by": hit.memory.superseded_by_id if "superseded" in hit.flags else None,
                "conflicts_with": hit.conflicts_with,
                "why": _why(hit),
            }
            for rank, hit in enumerate(result.hits, start=1)
        ]
        warnings = [{"memory": MemoryOutput(m).data, "check": CheckOutput(c).data} for m, c in result.warnings]
        return Response({"warnings": warnings, "results": results, "trace": result.trace})


def _why(hit: recall.Hit) -> dict:
    found = []
    if hit.vector_rank:
        found.append(f"by meaning (rank {hit.vector_rank}, cosine distance {hit.vector_distance:.3f})")
    if hit.text_rank:
        found.append(f"by words (rank {hit.text_rank})")
    notes = ["found " + " and ".join(found)] if found else []
    if hit.found_via:
        notes.append(f"through its earlier version {hit.found_via}")
    if hit.partner_of:
        notes.append(f"shown because it is in an open conflict with {hit.partner_of}")
    if "superseded" in hit.flags:
        reason = f": {hit.supersede_reason}" if hit.supersede_reason else ""
        notes.append(f"superseded by {hit.memory.superseded_by_id}{reason}")
    if "expired" in hit.flags:
        notes.append(f"expired: valid until {hit.memory.valid_until.isoformat()}")
    if "failed_check" in hit.flags:
        notes.append("a check of this memory failed: see warnings")
    return {
        "vector_rank": hit.vector_rank,
        "vector_distance": round(hit.vector_distance, 4) if hit.vector_distance is not None else None,
        "text_rank": hit.text_rank,
        "note": "; ".join(notes),
    }


class ChecksView(TenantAPIView):
    atomic_request = False  # the service opens its own tenant_scope

    class Input(serializers.Serializer):
        outcome = serializers.ChoiceField(choices=["pass", "fail"])
        detail = serializers.CharField(max_length=2000)
        corrected_by = serializers.RegexField(MEMORY_ID, required=False, allow_null=True)

    @extend_schema(operation_id="memory_check", request=Input, responses={201: CheckOutput})
    def post(self, request, memory_id: str):
        data = self.validated(self.Input)
        check = services.memory_check_record(principal=self.principal, memory_id=memory_id, **data)
        return Response({"check": CheckOutput(check).data}, status=status.HTTP_201_CREATED)


class SourcesView(TenantAPIView):
    atomic_request = False  # embeds first

    class Input(serializers.Serializer):
        source_id = serializers.CharField(max_length=500)
        content = serializers.CharField(max_length=MAX_CONTENT_CHARS, trim_whitespace=False)
        version = serializers.CharField(max_length=100, required=False, allow_null=True)
        url = serializers.URLField(max_length=2000, required=False, allow_null=True)
        kind = serializers.ChoiceField(choices=Memory.Kind.choices, default=Memory.Kind.FACT)
        project = serializers.SlugField(required=False, allow_null=True)

    class Output(serializers.Serializer):
        memory = MemoryOutput()
        created = serializers.BooleanField()
        superseded = serializers.CharField(allow_null=True)

    @extend_schema(operation_id="source_put", request=Input, responses={201: Output, 200: Output})
    def post(self, request):
        data = self.validated(self.Input)
        result = sources.source_put(
            principal=self.principal, source_id=data["source_id"], content=data["content"],
            version=data.get("version"), url=data.get("url"), kind=data["kind"], project_slug=data.get("project"),
        )
        with rls.tenant_scope(self.principal.scope):
            memory = selectors.memory_get(memory_id=result.memory.id)
        body = {"memory": MemoryOutput(memory).data, "created": result.created, "superseded": result.superseded}
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class SourceVersionsView(TenantAPIView):
    @extend_schema(operation_id="source_versions", responses=MemoryOutput(many=True))
    def get(self, request, source_id: str):
        return Response({"results": MemoryOutput(sources.source_versions(source_id=source_id), many=True).data})


class LoopsView(TenantAPIView):
    class Query(serializers.Serializer):
        project = serializers.SlugField(required=False)
        state = serializers.ChoiceField(choices=["open", "closed"], default="open")

    @extend_schema(operation_id="loops", parameters=[Query], responses=MemoryOutput(many=True))
    def get(self, request):
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        loops = selectors.loop_list(user=self.principal.user, state=query.validated_data["state"],
                                    project_slug=query.validated_data.get("project"))
        return Response({"results": MemoryOutput(loops, many=True).data})
