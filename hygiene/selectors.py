"""Reads of the hygiene domain: the conflict queue and the stats that show how the queue is doing."""
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Aggregate, Count, FloatField, Q, QuerySet
from django.db.models.functions import TruncDay
from django.utils import timezone

from memory.models import Conflict, Link, Memory, Review, Verdict
from memory.vocabulary import Relation
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


def stats_daily(*, days: int = 30, today: date | None = None) -> dict:
    """The last ``days`` UTC days (today included), day by day, over what the caller can see (RLS decides, as for
    ``stats``): memories written, supersedes by origin, conflicts opened and resolved, verdicts by decision, and the
    window's verdicts by relation and decision. One GROUP BY date_trunc query per table; a day with nothing is 0."""
    today = today or timezone.now().astimezone(UTC).date()
    axis = [today - timedelta(days=back) for back in range(days - 1, -1, -1)]
    since = datetime.combine(axis[0], time.min, tzinfo=UTC)
    retired = Link.objects.filter(retired_dst=True, undone_at__isnull=True)  # the same rows as stats() counts
    written = _per_day(Memory.objects.all(), "created_at", since)
    supersedes = _per_day(retired, "created_at", since, "origin")
    opened = _per_day(Conflict.objects.all(), "created_at", since)
    resolved = _per_day(Conflict.objects.filter(status=Conflict.Status.RESOLVED), "resolved_at", since)
    verdicts = _per_day(Verdict.objects.all(), "created_at", since, "decision", "relation")
    by_decision = Counter()
    relations = {relation: Counter() for relation in Relation}
    for (day, decision, relation), n in verdicts.items():
        by_decision[day, decision] += n
        relations.setdefault(relation, Counter())[decision] += n
    return {
        "days": axis,
        "written": _series(written, axis),
        "supersedes": {origin.value: _series(supersedes, axis, origin) for origin in Link.Origin},
        "conflicts": {"opened": _series(opened, axis), "resolved": _series(resolved, axis)},
        "verdicts": {decision.value: _series(by_decision, axis, decision) for decision in Verdict.Decision},
        "relations": {str(relation): {decision.value: counts[decision] for decision in Verdict.Decision}
                      for relation, counts in relations.items()},
    }


def _per_day(rows: QuerySet, field: str, since: datetime, *by: str) -> Counter:
    """{(day, *by values): count} of the rows whose ``field`` is at or after ``since``, counted by Postgres."""
    counted = (rows.filter(**{f"{field}__gte": since}).order_by()  # no model ordering in the GROUP BY
               .annotate(day=TruncDay(field, tzinfo=UTC)).values("day", *by).annotate(n=Count("pk")))
    return Counter({(row["day"].date(), *(row[name] for name in by)): row["n"] for row in counted})


def _series(counts: Counter, axis: list[date], *key) -> list[int]:
    return [counts[(day, *key)] for day in axis]
