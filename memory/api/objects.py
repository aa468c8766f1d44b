"""The shapes every memory endpoint shares: the memory object of API.md, links, events, checks."""
from rest_framework import serializers

from plumbing.fields import StrictCharField

from memory.models import Check, Event, Link, Memory

MAX_CONTENT_CHARS = 16000
MAX_METADATA_BYTES = 8 * 1024
MAX_LINKS = 50  # API.md "Limits": more than 50 links on a write -> 400
MEMORY_ID = r"^mem_[0-9A-HJKMNP-TV-Z]{26}$"
MAX_NAMESPACE_LABELS = 10
MAX_LABEL_CHARS = 200
MAX_KEY_CHARS = 512


def namespace_field(strict: bool = True, **options) -> serializers.ListField:
    """A namespace (or a prefix of one): 1..10 labels of 1..200 characters, kept exactly as given. ``strict``: JSON
    bodies, where a label must be a string; a query string's values are strings already."""
    label = StrictCharField if strict else serializers.CharField
    return serializers.ListField(child=label(max_length=MAX_LABEL_CHARS, trim_whitespace=False), min_length=1,
                                 max_length=MAX_NAMESPACE_LABELS, **options)


def key_field(strict: bool = True, **options) -> serializers.CharField:
    field = StrictCharField if strict else serializers.CharField
    return field(max_length=MAX_KEY_CHARS, trim_whitespace=False, **options)


class OwnerOutput(serializers.Serializer):
    id = serializers.UUIDField()
    email = serializers.EmailField()


class ProvenanceOutput(serializers.Serializer):
    writer = serializers.ChoiceField(choices=Memory.Writer.choices)
    authoritative = serializers.BooleanField()
    token = serializers.CharField(source="token_id", allow_null=True)
    session_id = serializers.CharField(allow_null=True)


class MemoryOutput(serializers.Serializer):
    """The memory object of API.md."""

    id = serializers.CharField()
    content = serializers.CharField()
    kind = serializers.ChoiceField(choices=Memory.Kind.choices)
    scope = serializers.ChoiceField(choices=Memory.Scope.choices)
    project = serializers.CharField(source="project.slug", allow_null=True)
    owner = OwnerOutput()
    status = serializers.ChoiceField(choices=Memory.Status.choices)
    superseded_by = serializers.CharField(source="superseded_by_id", allow_null=True)
    invalidated_at = serializers.DateTimeField(allow_null=True)
    invalidated_reason = serializers.CharField(allow_null=True)
    provenance = ProvenanceOutput(source="*")
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    expired = serializers.BooleanField()
    loop = serializers.ChoiceField(choices=Memory.Loop.choices, allow_null=True)
    closed_by = serializers.CharField(source="closed_by_id", allow_null=True)
    # Sources write {"source_id", "version", "url"}; remember stores the object its caller sent.
    source = serializers.DictField(allow_null=True)
    metadata = serializers.DictField()
    created_at = serializers.DateTimeField()
    namespace = serializers.ListField(child=serializers.CharField(), allow_null=True)
    key = serializers.CharField(allow_null=True)
    key_since = serializers.DateTimeField(allow_null=True, help_text="For a keyed memory: when the first version of"
                                          " its chain was written (a key-value item's creation time); else null.")


class LinkOutput(serializers.Serializer):
    id = serializers.CharField()
    src = serializers.CharField(source="src_id")
    dst = serializers.CharField(source="dst_id")
    type = serializers.ChoiceField(choices=Link.Type.choices)
    reason = serializers.CharField(allow_null=True)
    retired_dst = serializers.BooleanField()
    origin = serializers.CharField(allow_null=True)
    created_by = serializers.CharField(source="created_by_id", allow_null=True)
    created_at = serializers.DateTimeField()
    undone_at = serializers.DateTimeField(allow_null=True)


class EventOutput(serializers.Serializer):
    action = serializers.ChoiceField(choices=Event.Action.choices)
    actor = serializers.CharField(source="actor_id", allow_null=True)
    token = serializers.CharField(source="token_id", allow_null=True)
    payload = serializers.DictField()
    created_at = serializers.DateTimeField()


class LinkInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=Link.Type.choices)
    dst = serializers.RegexField(MEMORY_ID, error_messages={"invalid": "Not a memory id (mem_ + 26-char ULID)."})
    reason = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=2000)


class CheckOutput(serializers.Serializer):
    id = serializers.CharField()
    memory = serializers.CharField(source="memory_id")
    outcome = serializers.ChoiceField(choices=Check.Outcome.choices)
    detail = serializers.CharField()
    corrected_by = serializers.CharField(source="corrected_by_id", allow_null=True)
    created_at = serializers.DateTimeField()
