"""`make bench ARGS=remember`: remember latency through the real service, with and without a declared supersede."""
import argparse
import random
import time
from collections.abc import Callable

import numpy as np

from bench import calls
from bench.texts import synthetic_memory
from memory import services
from memory.embeddings import embed_one
from memory.models import Memory
from plumbing.timing import StepTimer
from tenants import rls
from tenants.auth import load_principal
from tenants.ids import ulid
from tenants.services import org_bootstrap

SUPERSEDE_SHARE = 0.2  # one write in five declares that it replaces an earlier version of its topic


def drop_reviews(scope: rls.Scope) -> None:
    """The benchmark's writes were queued for review like any others; nobody needs them judged."""
    from memory.models import Review
    from memory.outbox import review_queue

    with rls.tenant_scope(scope):
        ids = list(Review.objects.values_list("id", flat=True))
        Review.objects.update(state=Review.State.DONE, last_error="benchmark write: review skipped")
    for review_id in ids:
        review_queue().remove(f"review-{review_id}")


def latency_percentiles(values) -> dict[str, float]:
    """p50, p95 and p99 in ms, rounded for the reports."""
    return {p: round(float(np.percentile(values, int(p[1:]))), 2) for p in ("p50", "p95", "p99")}


def step_percentiles(runs: list[dict[str, float]]) -> dict[str, float]:
    """p50 of each step over the calls, in ms, plus the p50 of everything but the model (`outside_model`: all steps
    but the entry's `prepare`, where the content is embedded)."""
    steps = list(dict.fromkeys(step for run in runs for step in run))
    table = {step: round(float(np.percentile([run.get(step, 0.0) for run in runs], 50)), 2) for step in steps}
    outside = [sum(ms for step, ms in run.items() if step != "prepare") for run in runs]
    table["outside_model"] = round(float(np.percentile(outside, 50)), 2)
    return table


def bench_remember(*, n: int, seed: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed)
    boot = org_bootstrap(org_slug=f"bench-{ulid().lower()}", admin_email="bench@example.com", project_slugs=["bench"])
    scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=boot.token.id)
    embed_one("warm up the model")

    latest_by_topic: dict[str, str] = {}
    timings: dict[str, list[float]] = {"undeclared": [], "declared": []}
    steps: dict[str, list[dict[str, float]]] = {"undeclared": [], "declared": []}
    started = time.perf_counter()
    try:
        for i in range(n):
            topic, kind, content = synthetic_memory(rng)
            previous = latest_by_topic.get(topic)
            declare = previous is not None and rng.random() < SUPERSEDE_SHARE
            links = (services.LinkSpec("supersedes", previous, "newer version"),) if declare else ()
            timer = StepTimer()
            start = time.perf_counter()
            result = calls.remember(principal, content, steps=timer, kind=kind, project="bench", links=links)
            elapsed = time.perf_counter() - start
            series = "declared" if declare else "undeclared"
            timings[series].append(elapsed)
            steps[series].append(timer.ms)
            if result.memory.status == Memory.Status.LIVE:
                latest_by_topic[topic] = result.memory.id
            if (i + 1) % 500 == 0 or i + 1 == n:
                say(f"  {i + 1}/{n} writes, {(i + 1) / (time.perf_counter() - started):.0f}/s")
    finally:
        drop_reviews(scope)

    report = {"n": n, "org": boot.org.slug, "seed": seed}
    for series, values in timings.items():
        if not values:
            continue
        ms = np.array(values) * 1000
        report[series] = {
            "count": len(values),
            "p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "p50_ms_per_step": step_percentiles(steps[series]),
        }
    return report


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench remember: {args.n} writes through memory_remember into a fresh organization")
    return bench_remember(n=args.n, seed=args.seed, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    for series in ("undeclared", "declared"):
        if series in result:
            r = result[series]
            say(f"  {series:<10} n={r['count']:<6} p50={r['p50_ms']:.1f} ms  p95={r['p95_ms']:.1f} ms")
            say("    p50 per step (ms): " + ", ".join(f"{k} {v}" for k, v in r["p50_ms_per_step"].items()))
