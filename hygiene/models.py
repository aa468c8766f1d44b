"""The conflict review queue: pairs of live memories that disagree, waiting for a human (or resolved)."""
from django.db import models
from django.utils import timezone

from memory.models import Memory
from tenants.ids import new_id
from tenants.rls import TenantManager
from tenants.models import Organization, User


def _conflict_id() -> str:
    return new_id("cfl")


class Conflict(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"

    id = models.CharField(primary_key=True, max_length=30, default=_conflict_id, editable=False)
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
        constraints = [models.UniqueConstraint(fields=["org", "memory"], name="review_org_memory_uniq")]
        indexes = [models.Index(fields=["org", "state", "created_at"], name="review_state_idx")]


class Verdict(models.Model):
    """What the judge said about one pair (newer memory, older candidate), and what was done about it."""

    class Decision(models.TextChoices):
        AUTO_RETIRED = "auto_retired"
        CONFLICT = "conflict"
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
    same_token = models.BooleanField(default=False)  # both memories written with one token (seed 000's count)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "memory", "other"], name="verdict_org_pair_uniq")]
