"""`make bench ARGS="pages --memories 10000"`: how long each web page takes to render in a tenant of that size.

The tenant is the recall bench's (bench/recall.py: real embeddings, bulk-inserted under RLS, one in five an older
version), plus what the pages show, written through the real services: a 20-version declared chain and shorter
chains, open conflicts, every task and question an open loop, sources with several versions. Each page is then
rendered in process by Django's test Client signed in as the org admin (the whole request: session, identity, one
transaction, selectors, template; a search also embeds its query), `--renders` times after a warm-up; p50 and p95
per page. The issue's target: under 100 ms per page at 10k memories.
"""
import argparse
import html
import random
import re
import statistics
import time
import urllib.parse
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.test import Client

from bench import calls
from bench.recall import bench_tenant
from bench.remember import drop_reviews
from bench.texts import SERVICES, synthetic_memory
from memory import services
from memory.embeddings import embed
from memory.models import Conflict, Memory, Verdict
from memory.passages import Embedded
from tenants import rls
from tenants.auth import SESSION_ORG_KEY, load_principal
from tenants.models import User

TARGET_MS = 100
LONG_CHAIN = 20
SHORT_CHAINS = 100  # two-version chains, declared
CONFLICTS = 300  # open ones; review opens about one per ten undeclared writes once the queue is kept in check
VERDICTS = 5000  # the judge's recorded verdicts (one per reviewed pair): what /stats and the queue count over
SOURCES = 30
SOURCE_VERSIONS = 3
CHAIN_MARK = "bench pages chain"  # the long chain's first version: its presence says the extras are loaded


def _extras(org, owners: list, rng: random.Random, say: Callable[[str], None]) -> dict:
    """What the pages show beyond plain memories, loaded once per tenant; returns the ids the pages open."""
    admin_scope = rls.Scope(org_id=org.id, user_id=owners[0])
    with rls.tenant_scope(admin_scope):
        admin = load_principal(admin_scope, token_id=None)
        first = Memory.objects.filter(content__startswith=CHAIN_MARK).order_by("created_at").first()
    if first is None:
        say(f"  adding a {LONG_CHAIN}-version chain, {SHORT_CHAINS} short chains, {CONFLICTS} conflicts, "
            f"{SOURCES} sources x {SOURCE_VERSIONS} versions, open loops")
        previous = None
        for step in range(1, LONG_CHAIN + 1):
            reason = f"step {step}: the cache moved again"
            links = (services.LinkSpec("supersedes", previous, reason),) if previous else ()
            result = calls.remember(admin, f"{CHAIN_MARK}: the build cache lives on runner {step}.", kind="fact",
                                    project="p1", links=links)
            previous = result.memory.id
        for i in range(SHORT_CHAINS):
            _, kind, content = synthetic_memory(rng)
            old = calls.remember(admin, f"{content} (chain {i}, first version)", kind=kind, project="p2").memory
            calls.remember(admin, f"{content} (chain {i}, corrected)", kind=kind, project="p2",
                           links=(services.LinkSpec("supersedes", old.id, "corrected"),))
        texts = [f"docs/{SERVICES[i % len(SERVICES)]}-{i}.md, version {v}: deploys run from branch release-{v}."
                 for i in range(SOURCES) for v in range(1, SOURCE_VERSIONS + 1)]
        vectors = iter(embed(texts))
        for i in range(SOURCES):
            for v in range(1, SOURCE_VERSIONS + 1):
                with rls.tenant_scope(admin_scope):
                    services.source_put(principal=load_principal(admin_scope, token_id=None),
                                        source_id=f"docs/{SERVICES[i % len(SERVICES)]}-{i}.md",
                                        content=texts[i * SOURCE_VERSIONS + v - 1],
                                        embedded=Embedded(next(vectors)),
                                        version=f"v{v}", project_slug="p1")
        for owner in owners:  # every task and question is a loop, open, as remember leaves it
            with rls.tenant_scope(rls.Scope(org_id=org.id, user_id=owner)):
                Memory.objects.filter(kind__in=Memory.LOOP_KINDS, loop__isnull=True).update(loop="open")
        with rls.tenant_scope(admin_scope):
            live = list(Memory.objects.filter(status="live", project__slug="p1").values_list("id", flat=True)[:2000])
            pairs = rng.sample(live, CONFLICTS * 2)
            Conflict.objects.bulk_create([
                Conflict(org=org, a_id=a, b_id=b, relation="contradicts", confidence=round(rng.uniform(0.5, 0.8), 2),
                         judge="bench", rationale="two versions of one fact, the judge is unsure which is newer")
                for a, b in zip(pairs[::2], pairs[1::2])
            ])
            judged = set()
            while len(judged) < VERDICTS:
                judged.add(tuple(rng.sample(live, 2)))
            Verdict.objects.bulk_create([
                Verdict(org=org, memory_id=newer, other_id=older, relation="complementary", confidence=0.8,
                        judge="bench", prompt_version="bench", latency_ms=rng.uniform(5, 40),
                        decision=Verdict.Decision.RECORDED)
                for newer, older in judged
            ])
        drop_reviews(admin_scope)
    with rls.tenant_scope(admin_scope):
        head = Memory.objects.filter(content__startswith=CHAIN_MARK, status="live").get()
        source_id = Memory.objects.filter(source__source_id__isnull=False).values_list(
            "source__source_id", flat=True).first()
        counts = {
            "memories_visible_to_admin": Memory.objects.count(),
            "open_conflicts": Conflict.objects.filter(status="open").count(),
            "verdicts": Verdict.objects.count(),
            "open_loops": Memory.objects.filter(loop="open").count(),
        }
    with rls.tenant_scope(rls.Scope(org_id=org.id, user_id=owners[1])):  # the member's personal ones: hidden above
        counts["memories"] = counts["memories_visible_to_admin"] + Memory.objects.filter(scope="personal").count()
    return {"chain_head": head.id, "source_id": source_id, **counts}


def _signed_in_client(org, user_id) -> Client:
    client = Client()
    with rls.tenant_scope(rls.Scope(org_id=org.id, user_id=user_id)):
        client.force_login(User.objects.get(pk=user_id))  # records last_login, as the user
    session = client.session
    session[SESSION_ORG_KEY] = str(org.id)
    session.save()
    return client


def bench_pages(*, memories: int, renders: int, seed: int, say: Callable[[str], None]) -> dict:
    rng = random.Random(seed)
    org, owners = bench_tenant(f"bench-pages-{memories}", memories, rng, say)
    loaded = _extras(org, owners, rng, say)
    say(f"  tenant: {loaded['memories']} memories ({loaded['memories_visible_to_admin']} visible to the admin who "
        f"signs in), {loaded['open_conflicts']} open conflicts, {loaded['verdicts']} verdicts, "
        f"{loaded['open_loops']} open loops")
    # The bench renders hundreds of pages a minute as one user: it measures the pages, not the rate limit, which
    # bench/__main__.py has set to 0 for every in-process bench.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = _signed_in_client(org, owners[0])
    pages = {
        "feed /": "/",
        "feed, search": "/?" + urllib.parse.urlencode({"q": "who owns the checkout service"}),
        "feed, older page": None,  # the "Older" link of the first page (keyset cursor)
        f"memory, {LONG_CHAIN}-version chain": f"/memories/{loaded['chain_head']}",
        "conflicts": "/conflicts",
        "loops": "/loops",
        "sources": "/sources",
        "source page": f"/sources/{urllib.parse.quote(loaded['source_id'])}",
        "org overview": "/org/",
        "org users": "/org/users",
        "org projects": "/org/projects",
        "org project": "/org/projects/p1",
        "org tokens": "/org/tokens",
        "org settings": "/org/settings",
        "org stats": "/org/stats",  # five GROUP BY date_trunc queries over the last 30 days
    }
    older = re.search(r'href="([^"]+)" rel="next"', client.get("/").content.decode())
    pages["feed, older page"] = "/" + html.unescape(older.group(1)).lstrip("/") if older else None
    report: dict = {"memories": loaded["memories"], "tenant": org.slug, "renders": renders, "target_ms": TARGET_MS,
                    "loaded": loaded, "pages": {}}
    for name, path in pages.items():
        if path is None:
            continue
        for _ in range(2):  # warm-up: templates compiled, connections and plans cached
            response = client.get(path)
            assert response.status_code == 200, (name, path, response.status_code, response.content[:300])
        times = []
        for _ in range(renders):
            start = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, (name, path, response.status_code)
        report["pages"][name] = {
            "path": path if len(path) < 80 else path[:77] + "...",
            "p50_ms": round(float(np.percentile(times, 50)), 1),
            "p95_ms": round(float(np.percentile(times, 95)), 1),
            "mean_ms": round(statistics.fmean(times), 1),
            "bytes": len(response.content),
        }
        row = report["pages"][name]
        say(f"  {name:<28} p50 {row['p50_ms']:6.1f} ms  p95 {row['p95_ms']:6.1f} ms")
    report["over_target"] = [name for name, row in report["pages"].items() if row["p95_ms"] >= TARGET_MS]
    return report


def format_table(report: dict) -> list[str]:
    lines = [f"  pages at {report['memories']} memories, {report['renders']} renders each (target < "
             f"{report['target_ms']} ms):",
             f"  {'page':<28} {'p50 ms':>8} {'p95 ms':>8} {'KB':>6}  path"]
    for name, row in report["pages"].items():
        lines.append(f"  {name:<28} {row['p50_ms']:>8.1f} {row['p95_ms']:>8.1f} {row['bytes'] / 1024:>6.0f}  "
                     f"{row['path']}")
    lines.append(f"  over the target at p95: {', '.join(report['over_target']) or 'none'}")
    return lines


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    say(f"bench pages: each web page rendered {args.renders} times in process, a tenant of {args.memories} memories")
    return bench_pages(memories=args.memories, renders=args.renders, seed=args.seed, say=say)


def report(result: dict, say: Callable[[str], None]) -> None:
    for line in format_table(result):
        say(line)
