"""Memories, the links between them and the append-only event log.

Every table is tenant-owned (``org`` first in every unique constraint and index, ready to be distributed by
organization) and under row-level security (migrations/0002_row_level_security.py). Retiring (supersede, forget) is a
reversible change of status; the one deletion is the privacy purge (memory/purge.py), which the app role can only ask
of an owner-defined function (migration 0009).

Memories are partitioned by organization (migration 0010): the primary key in the database is (org_id, id), and every
reference to a memory is a composite foreign key (org_id, x_id) written in SQL, so it cannot cross organizations.
Those ForeignKeys say ``db_constraint=False`` here: Django still joins on ``id`` (unique in practice, 80 random bits).
"""
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from memory.embeddings import DIMENSIONS
from tenants.ids import new_id
from tenants.models import ApiToken, Organization, Project, User
from tenants.rls import OrgPartitionedManager, TenantManager


def _memory_id() -> str:
    return new_id("mem")


def _link_id() -> str:
    return new_id("lnk")


class MemoryKind(models.TextChoices):
    """Memory.Kind (defined out here so that Memory's Meta can make an index per kind)."""

    FACT = "fact"
    DECISION = "decision"
    LESSON = "lesson"
    PREFERENCE = "preference"
    PLAN = "plan"
    DIAGNOSIS = "diagnosis"
    TASK = "task"
    OPEN_QUESTION = "open-question"
    NOTE = "note"


def kind_index_name(kind: str) -> str:
    return f"memory_kind_{kind.replace('-', '_')}_hnsw"


class Memory(models.Model):
    class Scope(models.TextChoices):
        PERSONAL = "personal"
        PROJECT = "project"

    Kind = MemoryKind

    LOOP_KINDS = {Kind.TASK, Kind.OPEN_QUESTION}

    class Status(models.TextChoices):
        LIVE = "live"
        SUPERSEDED = "superseded"
        FORGOTTEN = "forgotten"

    class Writer(models.TextChoices):
        AGENT = "agent"
        HUMAN = "human"
        WATCHER = "watcher"
        HYGIENE = "hygiene"
        REVIEW = "review"
        CHECK = "check"
        SOURCE = "source"

    class Loop(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    id = models.CharField(primary_key=True, max_length=30, default=_memory_id, editable=False)
    # No index of its own: every index below starts with org, and a bare org index drew the planner into walking a
    # whole tenant whenever its row estimate for the tenant was stale (a tenant that grew since the last ANALYZE).
    org = models.ForeignKey(Organization, on_delete=models.PROTECT, db_index=False)
    scope = models.CharField(max_length=16, choices=Scope.choices)
    owner = models.ForeignKey(User, on_delete=models.PROTECT, related_name="memories")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.PROTECT)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.NOTE)
    content = models.TextField()
    content_hash = models.CharField(max_length=64)  # sha256 of the normalized content, for exact dedup
    embedding = VectorField(dimensions=DIMENSIONS)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LIVE)
    superseded_by = models.ForeignKey(  # indexed with org below
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    invalidated_at = models.DateTimeField(null=True, blank=True)
    invalidated_reason = models.TextField(null=True, blank=True)
    invalidated_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    writer = models.CharField(max_length=16, choices=Writer.choices)
    authoritative = models.BooleanField(default=True)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    session_id = models.CharField(max_length=200, null=True, blank=True)

    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    loop = models.CharField(max_length=8, choices=Loop.choices, null=True, blank=True)
    closed_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                                  db_constraint=False)
    source = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # A key names one fact in a namespace (memory/keys.py): a keyed write supersedes the live holder of its key, and
    # a unique index keeps one live holder per key. The indexes hold key_hash, since labels and keys together can be
    # longer than a btree entry may be.
    namespace = ArrayField(models.TextField(), null=True, blank=True)
    key = models.TextField(null=True, blank=True)
    key_hash = models.CharField(max_length=64, null=True, blank=True, editable=False)
    # When the first version of a keyed memory's chain was written: carried from version to version, so that a
    # key-value client dates its item without reading the whole chain.
    key_since = models.DateTimeField(null=True, blank=True)

    objects = OrgPartitionedManager()

    class Meta:
        # save(), refresh_from_db() and related lookups name the organization too (see OrgPartitionedManager).
        base_manager_name = "objects"
        indexes = [
            # Exact dedup and the caller's own memories (similar_existing).
            models.Index(fields=["org", "owner", "scope", "project", "content_hash"], name="memory_dedup_idx"),
            # The feed: newest first, keyset pagination.
            models.Index(fields=["org", "status", "-created_at", "-id"], name="memory_feed_idx"),
            models.Index(fields=["org", "superseded_by"], name="memory_superseded_by_idx"),
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # One HNSW graph per kind, for recall's kind filter (memory/recall/channels.py nearest_query): filtered
            # on the graph of every kind, a rare kind is found only after thousands of other memories are read.
            *[HnswIndex(name=kind_index_name(kind), fields=["embedding"], m=16, ef_construction=64,
                        opclasses=["vector_cosine_ops"], condition=Q(kind=kind)) for kind in MemoryKind.values],
            # Every version of a key, for the feed's key filter and the store's history.
            models.Index(fields=["org", "key_hash"], condition=Q(key_hash__isnull=False), name="memory_key_idx"),
        ]
        constraints = [
            # One live holder per key and organization (memory/keys.py). A new version takes the key's hash once
            # the version it replaces has let go of it, in the same transaction.
            models.UniqueConstraint(fields=["org", "key_hash"], condition=Q(status="live", key_hash__isnull=False),
                                    name="memory_one_live_holder_per_key"),
        ]

    @property
    def expired(self) -> bool:
        return self.valid_until is not None and self.valid_until < timezone.now()

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE


class Passage(models.Model):
    """One statement sentence of a memory of several, with its own vector (memory/passages.py). Written once with
    the memory and deleted with it; scope, owner and project are the memory's, copied for row-level security
    (migration 0011 holds the table, its partitions and its HNSW index)."""

    pk = models.CompositePrimaryKey("org", "memory", "position")
    org = models.ForeignKey(Organization, on_delete=models.PROTECT, db_index=False, db_constraint=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="passages", db_index=False,
                               db_constraint=False)
    position = models.PositiveSmallIntegerField()
    scope = models.CharField(max_length=16)
    owner = models.ForeignKey(User, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False)
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                                db_index=False, db_constraint=False)
    embedding = VectorField(dimensions=DIMENSIONS)

    objects = OrgPartitionedManager()

    class Meta:
        base_manager_name = "objects"


class Link(models.Model):
    class Type(models.TextChoices):
        SUPERSEDES = "supersedes"
        RELATES_TO = "relates_to"
        DERIVED_FROM = "derived_from"
        CONTRADICTS = "contradicts"
        DEPENDS_ON = "depends_on"

    class Origin(models.TextChoices):
        """Who retired the link's dst: the writer's declaration, or an actor who knew what it overturned."""

        DECLARED = "declared"
        JUDGE = "judge"
        REVIEW = "review"
        CHECK = "check"
        SOURCE = "source"
        KEY = "key"  # a write of the same namespace and key (memory/keys.py)

    id = models.CharField(primary_key=True, max_length=30, default=_link_id, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    src = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="links_out", db_constraint=False)
    dst = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="links_in", db_constraint=False)
    type = models.CharField(max_length=16, choices=Type.choices)
    reason = models.TextField(null=True, blank=True)
    # True when this link retired dst (a supersede by a write, the judge, a review, a check or a source);
    # False for a plain graph edge from POST /links, which never retires anything.
    retired_dst = models.BooleanField(default=False)
    origin = models.CharField(max_length=16, choices=Origin.choices, null=True, blank=True)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    undone_at = models.DateTimeField(null=True, blank=True)  # set when restore reverses the retirement

    objects = TenantManager()

    class Meta:
        indexes = [
            models.Index(fields=["org", "src"], name="link_src_idx"),
            models.Index(fields=["org", "dst"], name="link_dst_idx"),
        ]


class Event(models.Model):
    """Append-only: the app role may INSERT and SELECT, never UPDATE or DELETE (see tenants/db_roles.py).

    A purge (memory/purge.py) redacts the payloads of a purged memory's events and adds a ``purged`` one; the rows
    outlive the memory, so ``memory`` has no database constraint and may name a memory that no longer exists.
    """

    class Action(models.TextChoices):
        REMEMBERED = "remembered"
        ABSORBED = "absorbed"
        SUPERSEDED = "superseded"
        FORGOT = "forgot"
        RESTORED = "restored"
        LINKED = "linked"
        LOOP_CLOSED = "loop_closed"
        LOOP_REOPENED = "loop_reopened"
        CHECKED = "checked"
        SOURCE_VERSION = "source_version"
        PURGED = "purged"

    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    memory = models.ForeignKey(Memory, on_delete=models.DO_NOTHING, related_name="events", db_constraint=False)
    action = models.CharField(max_length=32, choices=Action.choices)
    actor = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantManager()

    class Meta:
        indexes = [models.Index(fields=["org", "memory", "created_at"], name="event_memory_idx")]


def _check_id() -> str:
    return new_id("chk")


class Check(models.Model):
    """Someone tried a memory and it held (pass) or did not (fail). A failure is shown above recall results."""

    class Outcome(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"

    id = models.CharField(primary_key=True, max_length=30, default=_check_id, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="checks", db_constraint=False)
    outcome = models.CharField(max_length=8, choices=Outcome.choices)
    detail = models.TextField(blank=True, default="")
    corrected_by = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                                     db_constraint=False)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantManager()

    class Meta:
        indexes = [models.Index(fields=["org", "memory", "created_at"], name="check_memory_idx")]


# The review of undeclared writes: the judge's verdicts on pairs, the conflicts it leaves to a person, and the outbox
# row of each review. The tables keep their first names (hygiene_*): they moved here, the data did not.

def new_conflict_id() -> str:
    return new_id("cfl")


class Conflict(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"  # in the queue: a person's decision is asked for
        # Another disagreement of a thing the queue already asks about (hygiene/services.py, one open conflict per
        # disagreeing thing): shown at read time like an open one, queued when the one before it is settled.
        SHOWN = "shown"
        RESOLVED = "resolved"

    UNRESOLVED = (Status.OPEN, Status.SHOWN)

    id = models.CharField(primary_key=True, max_length=30, default=new_conflict_id, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    a = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_constraint=False)
    b = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_constraint=False)
    relation = models.CharField(max_length=16)
    confidence = models.FloatField(null=True, blank=True)
    judge = models.CharField(max_length=200, blank=True, default="")
    prompt_version = models.CharField(max_length=32, blank=True, default="")  # the judge's prompt, as on its verdict
    rationale = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    resolution = models.CharField(max_length=16, null=True, blank=True)
    resolved_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantManager()

    class Meta:
        db_table = "hygiene_conflict"
        indexes = [
            models.Index(fields=["org", "status", "created_at"], name="conflict_status_idx"),
            models.Index(fields=["org", "a"], name="conflict_a_idx"),
            models.Index(fields=["org", "b"], name="conflict_b_idx"),
        ]


class Review(models.Model):
    """The outbox row of one undeclared write's review: written in the write's transaction, so a queue outage at
    commit time loses nothing (``manage.py hygiene_flush`` queues what is still pending)."""

    class State(models.TextChoices):
        PENDING = "pending"  # recorded, maybe not queued yet
        RUNNING = "running"  # claimed by a worker
        DONE = "done"
        UNAVAILABLE = "unavailable"  # the judge failed after every retry; `manage.py hygiene_rerun` tries again

    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_constraint=False)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = TenantManager()

    class Meta:
        db_table = "hygiene_review"
        constraints = [models.UniqueConstraint(fields=["org", "memory"], name="review_org_memory_uniq")]
        indexes = [models.Index(fields=["org", "state", "created_at"], name="review_state_idx")]


class Verdict(models.Model):
    """What the judge said about one pair (newer memory, older candidate), and what was done about it."""

    class Decision(models.TextChoices):
        AUTO_RETIRED = "auto_retired"
        CONFLICT = "conflict"
        SHOWN = "shown"  # a conflict shown at read time, not queued (Conflict.Status.SHOWN)
        RECORDED = "recorded"  # complementary, unrelated, or nothing to do any more

    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_constraint=False)  # the newer one
    other = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_constraint=False)  # the older candidate
    relation = models.CharField(max_length=16)
    confidence = models.FloatField()
    rationale = models.TextField(blank=True, default="")
    judge = models.CharField(max_length=200)  # backend and model
    prompt_version = models.CharField(max_length=32)
    latency_ms = models.FloatField()
    decision = models.CharField(max_length=16, choices=Decision.choices)
    same_token = models.BooleanField(default=False)  # both memories written with one token (counted in the stats)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantManager()

    class Meta:
        db_table = "hygiene_verdict"
        constraints = [models.UniqueConstraint(fields=["org", "memory", "other"], name="verdict_org_pair_uniq")]

