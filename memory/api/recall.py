"""POST /api/v1/recall."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from memory import recall
from memory.api.objects import (
    MAX_CONTENT_CHARS,
    CheckOutput,
    MemoryOutput,
    namespace_field,
)
from memory.embeddings import embed_one
from memory.models import Memory
from memory.vocabulary import RECALL_FLAGS
from plumbing.fields import StrictBooleanField, StrictCharField, StrictIntegerField, StrictSlugField
from plumbing.schema import error
from plumbing.timing import StepTimer
from tenants.auth import Principal
from tenants.views import TenantAPIView, validated

_TIME = serializers.DateTimeField()  # as the memory objects write their times


class RecallView(TenantAPIView):
    timed = {"POST": "recall"}
    reads_only = True  # a POST that reads: a read-only OAuth grant recalls

    class Input(serializers.Serializer):
        query = StrictCharField(max_length=MAX_CONTENT_CHARS)
        project = StrictSlugField(required=False, allow_null=True)
        scope = serializers.ChoiceField(choices=["personal", "project", "all"], default="all")
        kinds = serializers.ListField(child=serializers.ChoiceField(choices=Memory.Kind.choices), required=False,
                                      allow_null=True, allow_empty=False)
        k = StrictIntegerField(min_value=1, max_value=50, default=10)
        include_history = StrictBooleanField(default=False)
        as_of = serializers.DateTimeField(required=False, allow_null=True)
        namespace_prefix = namespace_field(required=False, allow_null=True)

    class Output(serializers.Serializer):
        class RecallWarning(serializers.Serializer):
            memory = MemoryOutput()
            check = CheckOutput()

        class RecallResult(serializers.Serializer):
            class RecallWhy(serializers.Serializer):
                vector_rank = serializers.IntegerField(allow_null=True)
                vector_distance = serializers.FloatField(allow_null=True)
                text_rank = serializers.IntegerField(allow_null=True)
                note = serializers.CharField(allow_blank=True)

            memory = MemoryOutput()
            rank = serializers.IntegerField(min_value=1)
            score = serializers.FloatField()
            flags = serializers.ListField(child=serializers.ChoiceField(choices=RECALL_FLAGS))
            superseded_by = serializers.CharField(allow_null=True)
            class Disagreeing(serializers.Serializer):
                id = serializers.CharField()
                created_at = serializers.DateTimeField()

            conflicts_with = serializers.ListField(child=serializers.CharField())
            disagrees_with = Disagreeing(many=True, help_text="Other returned memories that give another value for"
                                         " the same thing (flag `disagrees`), and when each was written.")
            why = RecallWhy()

        warnings = RecallWarning(many=True)
        results = RecallResult(many=True)
        trace = serializers.DictField(help_text="How the answer was found: filters, channels, fusion, timings.")

    def prepare_post(self, request) -> tuple[dict, object]:
        return self.prepare(request.data)

    @classmethod
    def prepare(cls, body: object) -> tuple[dict, object]:
        """Outside the transaction: validate and embed the query (REST and MCP's recall)."""
        data = validated(cls.Input, body)
        return data, embed_one(data["query"])

    @extend_schema(operation_id="recall", request=Input, responses={
        200: Output, 404: error("No such project (or not a member).")})
    def post(self, request):
        return Response(self.recall(self.principal, self.prepared, self.steps))

    @staticmethod
    def recall(principal: Principal, prepared: tuple[dict, object], steps: StepTimer) -> dict:
        """Inside the caller's transaction: the body of the answer."""
        data, vector = prepared
        result = recall.memory_recall(principal=principal, vector=vector, steps=steps, q=recall.RecallQuery(
            query=data["query"], k=data["k"], project=data.get("project"), scope=data["scope"],
            kinds=data.get("kinds"), include_history=data["include_history"], as_of=data.get("as_of"),
            namespace_prefix=data.get("namespace_prefix"),
        ))
        # One serializer for the whole list: DRF builds a serializer's fields per instance, which cost more per
        # result than everything else in rendering it.
        memories = MemoryOutput([hit.memory for hit in result.hits], many=True).data
        results = [
            {
                "memory": memory,
                "rank": rank,
                "score": round(hit.score, 6),
                "flags": hit.flags,
                "superseded_by": hit.memory.superseded_by_id if "superseded" in hit.flags else None,
                "conflicts_with": hit.conflicts_with,
                "disagrees_with": [{"id": other.id, "created_at": _TIME.to_representation(other.created_at)}
                                   for other in hit.disagrees_with],
                "why": _why(hit),
            }
            for rank, (hit, memory) in enumerate(zip(result.hits, memories), start=1)
        ]
        warnings = [{"memory": MemoryOutput(m).data, "check": CheckOutput(c).data} for m, c in result.warnings]
        return {"warnings": warnings, "results": results, "trace": result.trace}


def _why(hit: recall.Hit) -> dict:
    found = []
    if hit.vector_rank:
        found.append(f"by meaning (rank {hit.vector_rank}, cosine distance {hit.vector_distance:.3f})")
    if hit.text_rank:
        found.append(f"by words (rank {hit.text_rank})")
    notes = ["found " + " and ".join(found)] if found else []
    if hit.found_via:
        notes.append(f"through its earlier version {hit.found_via}")
    if hit.partner_of and hit.stands_for:
        notes.append(f"shown because it has replaced {', '.join(hit.stands_for)}, which is in an open conflict with"
                     f" {hit.partner_of}")
    elif hit.partner_of:
        notes.append(f"shown because it is in an open conflict with {hit.partner_of}")
    if hit.probably_replaces and hit.stands_for:
        notes.append(f"ranked before {', '.join(hit.probably_replaces)}: the judge found {', '.join(hit.stands_for)}"
                     " probably replaces it (open conflict, not yet decided), and this memory has replaced that one")
    elif hit.probably_replaces:
        notes.append(f"ranked before {', '.join(hit.probably_replaces)}: the judge found it probably replaces it"
                     " (open conflict, not yet decided)")
    if hit.probably_replaced_by:
        # A successor it is not in conflict with stands in for one it is (memory/recall/ordering.py): say through which.
        through = [i for i in hit.probably_replaced_by if i not in hit.conflicts_with]
        notes.append(f"probably replaced by {', '.join(hit.probably_replaced_by)} (judged in an open conflict, not yet"
                     " decided" + (f"; {', '.join(through)} has replaced the memory of that conflict since" if through
                                   else "") + "): ranked after it, still live")
    for other in hit.disagrees_with:
        written = f"written {other.created_at:%Y-%m-%d %H:%M} UTC"
        values = hit.disagreement_values[other.id]
        if other.id in hit.updates:
            notes.append(f"ranked before {other.id} ({written}): gives another value for the same thing ({values})"
                         f" and says it is an update (\"{hit.updates[other.id]}\")")
        elif other.id in hit.updated_by:
            notes.append(f"probably updated by {other.id} ({written}), which gives another value ({values}) and says"
                         f" it is an update (\"{hit.updated_by[other.id]}\"): ranked after it, still live")
        else:
            notes.append(f"disagrees with {other.id} ({written}): another value for the same thing ({values});"
                         " neither says which is current")
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
