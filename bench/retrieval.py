"""`make bench ARGS=retrieval`: the project's own evaluation set, loaded through the real services into a fresh
organization, then every query through the real recall selector.

Metrics per query type and overall: recall@1 (a correct current answer at rank 1), MRR (over the top 10),
nDCG@5 (binary relevance), stale@1 (a superseded or replaced version at rank 1), and recall latency.
"""
import json
import math
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings

from bench import calls
from bench.ceiling import ceiling
from memory import recall, services
from tenants import rls
from tenants.auth import load_principal
from tenants.ids import ulid
from tenants.models import Membership
from tenants.services import api_token_issue, org_bootstrap, project_member_add, user_add

DATASET = Path(settings.BASE_DIR) / "tests" / "eval" / "dataset.json"
FLOORS = Path(settings.BASE_DIR) / "tests" / "eval" / "floors.json"
METRICS = ("recall@1", "mrr", "ndcg@5", "stale@1")


def _principals(dataset: dict) -> dict:
    """A fresh organization with the dataset's users and projects; an agent token (principal) per user."""
    users = dataset["users"]
    projects = sorted({p for spec in users.values() for p in spec["projects"]})
    first, *others = users
    boot = org_bootstrap(org_slug=f"eval-{ulid().lower()}", admin_email=f"{first}@eval.test", project_slugs=projects)
    admin_scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    user_ids = {first: boot.user.id}
    with rls.tenant_scope(admin_scope):
        admin = load_principal(admin_scope, token_id=None)
        for name in others:
            member = user_add(principal=admin, email=f"{name}@eval.test", role=Membership.Role.MEMBER).user
            user_ids[name] = member.id
            for project in users[name]["projects"]:
                project_member_add(principal=admin, project_slug=project, user_id=member.id)
    principals = {}
    for name, user_id in user_ids.items():
        scope = rls.Scope(org_id=boot.org.id, user_id=user_id)
        with rls.tenant_scope(scope):
            me = load_principal(scope, token_id=None)
            token, _ = api_token_issue(principal=me, name="eval agent", writer="agent", project_slug=None, user_id=None)
            principals[name] = load_principal(scope, token_id=token.id)
    return principals


def load(dataset: dict, principals: dict, say: Callable[[str], None]) -> dict[str, str]:
    ids: dict[str, str] = {}
    for i, spec in enumerate(dataset["memories"], start=1):
        links = [services.LinkSpec("supersedes", ids[key], spec.get("reason")) for key in spec["supersedes"]]
        result = calls.remember(
            principals[spec["user"]], spec["content"], kind=spec["kind"],
            scope="project" if spec["project"] else "personal", project=spec["project"], links=tuple(links),
        )
        ids[spec["key"]] = result.memory.id
        if i % 50 == 0:
            say(f"  loaded {i}/{len(dataset['memories'])} memories")
    return ids


def review_all(ids: dict[str, str], principals: dict, say: Callable[[str], None]) -> dict[str, int]:
    """Run the hygiene review of every undeclared write now, in order, as the worker would (configured judge)."""
    from hygiene.models import Review
    from hygiene.jobs import review_run

    outcomes: dict[str, int] = defaultdict(int)
    for principal in principals.values():
        with rls.tenant_scope(principal.scope):
            reviews = list(Review.objects.filter(memory__owner_id=principal.user.id).order_by("id")
                           .values_list("id", flat=True))
        for review_id in reviews:
            for outcome in review_run(review_id=review_id, scope=principal.scope).split(","):
                outcomes[outcome] += 1
    say(f"  hygiene reviews: {dict(outcomes)}")
    return dict(outcomes)


def hygiene_audit(dataset: dict, ids: dict[str, str], principals: dict) -> dict:
    """What review did with the dataset's undeclared replacements, and how long the queue a person must read is.

    Per labelled pair (old, new): did it reach the judge (a verdict on it), was the old one retired, or queued (an
    open conflict between the two)? Open conflicts are counted per 100 writes of the whole set.
    """
    from hygiene.models import Conflict, Verdict
    from memory.models import Link, Memory

    pairs = [(ids[old], ids[m["key"]]) for m in dataset["memories"] for old in m["replaces_undeclared"]]
    judged, conflicts, retired_by, by_judge = set(), {}, {}, set()
    for principal in principals.values():  # each sees what RLS shows them; together, the whole organization
        with rls.tenant_scope(principal.scope):
            judged |= set(Verdict.objects.values_list("memory_id", "other_id"))
            conflicts |= {c.id: (c.a_id, c.b_id) for c in Conflict.objects.filter(status=Conflict.Status.OPEN)}
            retired_by |= dict(Memory.objects.exclude(superseded_by=None).values_list("id", "superseded_by_id"))
            by_judge |= set(Link.objects.filter(origin=Link.Origin.JUDGE).values_list("dst_id", "src_id"))
    open_pairs = {frozenset(pair) for pair in conflicts.values()}
    reached = sum((new, old) in judged for old, new in pairs)
    retired = sum(old in retired_by for old, _ in pairs)
    queued = sum(old not in retired_by and frozenset((old, new)) in open_pairs for old, new in pairs)
    writes = len(dataset["memories"])
    content = {ids[m["key"]]: m["content"] for m in dataset["memories"]}
    # Retirements the labels do not call a replacement: each one a fact lost without anyone asking.
    unlabelled = [{"older": content[old], "newer": content[new]} for old, new in sorted(by_judge)
                  if (old, new) not in set(pairs)]
    with rls.tenant_scope(next(iter(principals.values())).scope):
        verdicts = [
            {"relation": v.relation, "confidence": v.confidence, "decision": v.decision, "rationale": v.rationale,
             "labelled_replacement": (v.other_id, v.memory_id) in set(pairs),
             "older": content.get(v.other_id, ""), "newer": content.get(v.memory_id, "")}
            for v in Verdict.objects.all()
        ]
    # Kept in the result file: what was acted on, and every verdict on a labelled replacement (the rest is noise).
    verdicts = [v for v in verdicts if v["decision"] != "recorded" or v["labelled_replacement"]]
    return {
        "verdicts": verdicts,
        "undeclared_pairs": len(pairs), "reached_judge": reached, "retired": retired, "queued": queued,
        "retired_or_queued": round((retired + queued) / len(pairs), 3) if pairs else None,
        "judge_retired": len(by_judge), "judge_retired_unlabelled": unlabelled,
        "open_conflicts": len(conflicts), "open_conflicts_per_100_writes": round(100 * len(conflicts) / writes, 1),
    }


def _ndcg_at_5(ranked: list[str], answers: set[str]) -> float:
    dcg = sum(1 / math.log2(rank + 1) for rank, memory_id in enumerate(ranked[:5], start=1) if memory_id in answers)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(answers), 5) + 1))
    return dcg / ideal if ideal else 0.0


def evaluate(*, say: Callable[[str], None] = print, dataset_path: Path = DATASET) -> dict:
    dataset = json.loads(dataset_path.read_text())
    principals = _principals(dataset)
    ids = load(dataset, principals, say)
    hygiene = review_all(ids, principals, say)
    audit = hygiene_audit(dataset, ids, principals)
    per_type: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies, misses, retired_returned = [], [], 0
    for query in dataset["queries"]:
        answers = {ids[key] for key in query["answers"]}
        stale = {ids[key] for key in query["stale"]}
        start = time.perf_counter()
        result = calls.recall_as(principals[query["user"]], recall.RecallQuery(
            query=query["query"], k=10, project=query.get("project"), kinds=query.get("kinds"),
        ))
        latencies.append(time.perf_counter() - start)
        ranked = [hit.memory.id for hit in result.hits]
        retired_returned += sum(hit.memory.status != "live" for hit in result.hits)  # at any rank, not only the first
        first_hit = next((rank for rank, memory_id in enumerate(ranked, start=1) if memory_id in answers), None)
        scores = {
            "recall@1": float(bool(ranked) and ranked[0] in answers),
            "mrr": 1 / first_hit if first_hit else 0.0,
            "ndcg@5": _ndcg_at_5(ranked, answers),
            "stale@1": float(bool(ranked) and ranked[0] in stale),
        }
        for bucket in (query["type"], "overall"):
            for metric, value in scores.items():
                per_type[bucket][metric].append(value)
        if not scores["recall@1"]:
            misses.append({"id": query["id"], "type": query["type"], "query": query["query"], "answer_rank": first_hit})
    table = {
        bucket: {"queries": len(values["recall@1"]), **{m: round(float(np.mean(values[m])), 3) for m in METRICS}}
        for bucket, values in sorted(per_type.items(), key=lambda item: (item[0] == "overall", item[0]))
    }
    ms = np.array(latencies) * 1000
    return {
        "ceiling": ceiling(dataset),
        "memories": len(dataset["memories"]),
        "hygiene": hygiene,
        "audit": audit,
        "queries": len(dataset["queries"]),
        "table": table,
        "retired_returned": retired_returned,
        "latency_ms": {"p50": round(float(np.percentile(ms, 50)), 2), "p95": round(float(np.percentile(ms, 95)), 2)},
        "misses": misses,
    }


def floor_violations(report: dict) -> list[str]:
    """Each floor in tests/eval/floors.json that the report falls below (or, for stale@1, rises above)."""
    violations = []
    for bucket, floors in json.loads(FLOORS.read_text()).items():
        for metric, floor in floors.items():
            value = report["table"].get(bucket, {}).get(metric)
            failed = value is None or (value > floor if metric == "stale@1" else value < floor)
            if failed:
                bound = "at most" if metric == "stale@1" else "at least"
                violations.append(f"{bucket} {metric} = {value}, must be {bound} {floor}")
    return violations


def format_table(report: dict) -> list[str]:
    lines = [f"  {'type':<22}{'queries':>8}" + "".join(f"{m:>10}" for m in METRICS) + f"{'ceiling@1':>11}"]
    for bucket, row in report["table"].items():
        lines.append(f"  {bucket:<22}{row['queries']:>8}" + "".join(f"{row[m]:>10.3f}" for m in METRICS)
                     + f"{report['ceiling'].get(bucket, 0.0):>11.3f}")
    lines.append("  ceiling@1: recall@1 of the embedding model alone with perfect supersession (bench/ceiling.py)")
    audit = report["audit"]
    lines.append(f"  undeclared replacements: {audit['undeclared_pairs']}, reached the judge {audit['reached_judge']}, "
                 f"retired {audit['retired']}, queued {audit['queued']} (retired or queued "
                 f"{audit['retired_or_queued']}); open conflicts {audit['open_conflicts']} = "
                 f"{audit['open_conflicts_per_100_writes']} per 100 writes")
    lines.append(f"  retired by the judge: {audit['judge_retired']}, of them not a labelled undeclared replacement: "
                 f"{len(audit['judge_retired_unlabelled'])}")
    for pair in audit["judge_retired_unlabelled"]:
        lines.append(f"    {pair['older'][:70]!r} -> {pair['newer'][:70]!r}")
    lines.append(f"  superseded or forgotten memories returned, at any rank: {report['retired_returned']}")
    latency = report["latency_ms"]
    lines.append(f"  recall latency p50 {latency['p50']} ms, p95 {latency['p95']} ms")
    return lines
