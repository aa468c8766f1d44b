"""Reads of the hygiene domain: the conflict queue and the stats that show how the queue is doing."""
from django.db.models import Aggregate, Count, FloatField, Q, QuerySet

from memory.models import Conflict, Link, Memory, Review, Verdict
from plumbing.errors import Code, NotFound

# Written by an actor who knew what it overturned (everyone but the judge).
EXPLICIT_ORIGINS = [origin for origin in Link.Origin if origin != Link.Origin.JUDGE]


def conflict_list(*, status: str | None) -> QuerySet[Conflict]:
    conflicts = Conflict.objects.order_by("-created_at", "-id")
    return conflicts.filter(status=status) if status else conflicts


def conflict_get(*, conflict_id: str) -> Conflict:
    conflict = Conflict.objects.filter(pk=conflict_id).first()
    if conflict is None:
        raise NotFound(Code.NOT_FOUND, "No such conflict.")
    return conflict


class Percentile(Aggregate):
    """percentile_cont: the same linear interpolation as numpy's default, computed where the rows are."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, fraction: float, **extra) -> None:
        super().__init__(expression, fraction=float(fraction), **extra)


def stats() -> dict:
    """Counts over what the caller can see (RLS decides)."""
    memories = dict(Memory.objects.values_list("status").annotate(n=Count("id")))
    retirements = dict(
        Link.objects.filter(retired_dst=True, undone_at__isnull=True).values_list("origin").annotate(n=Count("id"))
    )
    supersedes = {origin.value: retirements.get(origin, 0) for origin in Link.Origin}
    total = sum(supersedes.values())
    conflicts = Conflict.objects.aggregate(
        open=Count("id", filter=Q(status=Conflict.Status.OPEN)),
        resolved=Count("id", filter=Q(status=Conflict.Status.RESOLVED)),
    )
    verdicts = Verdict.objects.aggregate(
        calls=Count("id"),
        auto_resolved=Count("id", filter=Q(decision=Verdict.Decision.AUTO_RETIRED)),
        queued=Count("id", filter=Q(decision=Verdict.Decision.CONFLICT)),
        queued_same_token=Count("id", filter=Q(decision=Verdict.Decision.CONFLICT, same_token=True)),
        # In the same scan: every verdict row costs two visibility checks under RLS (its two memories).
        latency_p50=Percentile("latency_ms", 0.5),
        latency_p95=Percentile("latency_ms", 0.95),
    )
    return {
        "memories": {status: memories.get(status, 0) for status in ("live", "superseded", "forgotten")},
        "supersedes": supersedes,
        "conflicts": {**conflicts, "auto_resolved": verdicts["auto_resolved"]},
        "explicit_link_ratio": round(sum(supersedes[o] for o in EXPLICIT_ORIGINS) / total, 4) if total else 0.0,
        "judge": {
            "calls": verdicts["calls"],
            "latency_ms_p50": _rounded(verdicts["latency_p50"]),
            "latency_ms_p95": _rounded(verdicts["latency_p95"]),
        },
        "queue": {
            "pending": Review.objects.exclude(state=Review.State.DONE).count(),
            "same_writer_share": round(verdicts["queued_same_token"] / verdicts["queued"], 4) if verdicts["queued"]
            else 0.0,
        },
    }


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None
