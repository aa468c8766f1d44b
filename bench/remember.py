"""`make bench ARGS=remember`: remember latency through the real service, with and without a declared supersede."""
import random
import time
from collections.abc import Callable

import numpy as np

from bench.texts import synthetic_memory
from memory import services
from memory.embeddings import embed_one
from memory.models import Memory
from tenants import rls
from tenants.auth import load_principal
from tenants.ids import ulid
from tenants.services import org_bootstrap

SUPERSEDE_SHARE = 0.2  # one write in five declares that it replaces an earlier version of its topic


def drop_reviews(scope: rls.Scope) -> None:
    """The benchmark's writes were queued for review like any others; nobody needs them judged."""
    from hygiene.models import Review
    from hygiene.outbox import review_queue

    with rls.tenant_scope(scope):
        ids = list(Review.objects.values_list("id", flat=True))
        Review.objects.update(state=Review.State.DONE, last_error="benchmark write: review skipped")
    for review_id in ids:
        review_queue().remove(f"review-{review_id}")


def _embedding_seconds(texts: list[str]) -> float:
    """The model's share, timed apart from the writes: the same texts embedded one by one, as remember does."""
    started = time.perf_counter()
    for text in texts:
        embed_one(text)
    return time.perf_counter() - started


def bench_remember(*, n: int, seed: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed)
    boot = org_bootstrap(org_slug=f"bench-{ulid().lower()}", admin_email="bench@example.com", project_slugs=["bench"])
    scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=boot.token.id)
    embed_one("warm up the model")

    latest_by_topic: dict[str, str] = {}
    timings: dict[str, list[float]] = {"undeclared": [], "declared": []}
    contents: dict[str, list[str]] = {"undeclared": [], "declared": []}
    started = time.perf_counter()
    try:
        for i in range(n):
            topic, kind, content = synthetic_memory(rng)
            previous = latest_by_topic.get(topic)
            declare = previous is not None and rng.random() < SUPERSEDE_SHARE
            links = [services.LinkSpec("supersedes", previous, "newer version")] if declare else []
            start = time.perf_counter()
            result = services.memory_remember(
                principal=principal, content=content, kind=kind, project_slug="bench", links=links
            )
            elapsed = time.perf_counter() - start
            series = "declared" if declare else "undeclared"
            timings[series].append(elapsed)
            contents[series].append(content)
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
            "embedding_share": round(_embedding_seconds(contents[series]) / sum(values), 3),
        }
    return report
