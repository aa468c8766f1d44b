"""The conflict review queue: pairs of live memories that disagree, waiting for a human (or resolved)."""
from django.db import models
from django.utils import timezone

from memory.models import Memory
from tenants.ids import new_id
from tenants.models import Organization, User


def _conflict_id() -> str:
    return new_id("cfl")


class Conflict(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"

    id = models.CharField(primary_key=True, max_length=30, default=_conflict_id, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    a = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    b = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    relation = models.CharField(max_length=16)
    confidence = models.FloatField(null=True, blank=True)
    judge = models.CharField(max_length=200, blank=True, default="")
    rationale = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    resolution = models.CharField(max_length=16, null=True, blank=True)
    resolved_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["org", "status", "created_at"], name="conflict_status_idx"),
            models.Index(fields=["org", "a"], name="conflict_a_idx"),
            models.Index(fields=["org", "b"], name="conflict_b_idx"),
        ]
