"""`python -m bench WHICH [options]`: run one benchmark, print its numbers, keep them in bench-results/.

`make bench ARGS="..."` runs this through embedded_stack.launcher, which starts the embedded services first.
"""
import argparse
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import django

RESULTS_DIR = Path(__file__).resolve().parent.parent / "bench-results"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="remember (write latency), retrieval (quality on the eval set), recall (read latency), "
                    "judge (the hygiene judge on labeled pairs), http (remember and recall over HTTP against the "
                    "served stack, beside the same calls in process), mcp (remember and recall as MCP tool calls beside "
                    "the same calls over REST, against the served stack), soak (client processes for a bounded time "
                    "against the served stack, then the lifecycle invariants in SQL), pages (render time of each "
                    "web page in a tenant of --memories, default 10000), load (a store of --memories in --tenants organizations, "
                    "loaded fast into its own database: remember and recall per tenant, throughput, sizes, RSS, plans; "
                    "then a plot of latency against store size from the results of every size)",
    )
    parser.add_argument("which", choices=["remember", "retrieval", "recall", "judge", "http", "mcp", "soak", "pages",
                                                "load"])
    parser.add_argument("--n", type=int, default=10_000, help="number of writes (remember)")
    parser.add_argument("--memories", type=int, default=None,
                        help="memories in the big tenant (recall: default 100000; http and mcp: default 20000; "
                             "pages: default 10000); memories in the whole store (load: default 100000)")
    parser.add_argument("--tenants", type=int, default=100, help="organizations in the store (load)")
    parser.add_argument("--plot-only", action="store_true",
                        help="only draw bench-results/load-latency.png from the saved load results (load)")
    parser.add_argument("--store", type=int, default=0,
                        help="fill other tenants until the store holds about this many memories (recall)")
    parser.add_argument("--queries", type=int, default=200, help="queries per filter and tenant (recall)")
    parser.add_argument("--requests", type=int, default=300,
                        help="requests per operation and concurrency level (http); calls per way and operation (mcp)")
    parser.add_argument("--clients", default="1,4,16", help="concurrent keep-alive clients, comma-separated (http)")
    parser.add_argument("--renders", type=int, default=20, help="renders of each page after a warm-up (pages)")
    parser.add_argument("--seconds", type=float, default=600, help="how long the clients run (soak)")
    parser.add_argument("--soak-clients", type=int, default=4, help="client processes (soak)")
    parser.add_argument("--dataset", choices=["dataset", "conversations", "longchat-tune", "longchat-heldout"],
                        default="dataset",
                        help="evaluation set in tests/eval/ (retrieval): dataset (the first set), conversations (long "
                             "conversations, nothing fitted on it), longchat-tune and longchat-heldout (long chats of "
                             "untyped turns: the half tuned on, the half only reported); each has CI floors")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 below the set's floors (retrieval), or when the judge is not safe to retire on "
                             "its own (judge)")
    parser.add_argument("--fit", action="store_true",
                        help="refit the embedded judge on the tuning pairs first (judge; writes local_model.json)")
    parser.add_argument("--ablate", action="store_true", help="the embedded judge without each signal group (judge)")
    parser.add_argument("--part", choices=["held_out", "tuning", "all"], default="held_out",
                        help="which labelled pairs to score (judge; report on held_out)")
    parser.add_argument("--backend", choices=["local", "vllm"], default=None,
                        help="judge backend (judge; default JUDGE_BACKEND)")
    parser.add_argument("--url", default=None, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (judge)")
    parser.add_argument("--model", default=None, help="model name on that server (judge; default JUDGE_VLLM_MODEL)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-save", action="store_true", help="print only, keep no result file")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    clients = [int(c) for c in args.clients.split(",") if c.strip()]
    if min(args.n, args.memories or 1, args.queries, args.requests, args.renders, *clients) < 1:
        sys.exit("--n, --memories, --queries, --requests, --renders and --clients must be at least 1")
    if args.store < 0:
        sys.exit("--store must be 0 or more")
    if args.tenants < 1:
        sys.exit("--tenants must be at least 1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.which == "load":
        from bench.load import use_bench_database

        use_bench_database()  # its own database, before the settings are read
    django.setup()
    from django.conf import settings

    # The in-process benches call as one caller thousands of times a minute: they measure the work, not the limit.
    settings.RATE_LIMIT_PER_MINUTE = 0

    def say(line: str) -> None:
        print(line, flush=True)

    which = args.which
    if which == "remember":
        from bench.remember import bench_remember

        say(f"bench remember: {args.n} writes through memory_remember into a fresh organization")
        report = bench_remember(n=args.n, seed=args.seed, say=say)
        for series in ("undeclared", "declared"):
            if series in report:
                r = report[series]
                say(f"  {series:<10} n={r['count']:<6} p50={r['p50_ms']:.1f} ms  p95={r['p95_ms']:.1f} ms")
                say("    p50 per step (ms): " + ", ".join(f"{k} {v}" for k, v in r["p50_ms_per_step"].items()))
    if which == "retrieval":
        from bench.retrieval import DATASETS, evaluate, floor_violations, format_table

        path = DATASETS[args.dataset]
        say(f"bench retrieval: the evaluation set (tests/eval/{path.name}) through remember and recall")
        report = evaluate(say=say, dataset_path=path)
        for line in format_table(report):
            say(line)
        violations = floor_violations(report, args.dataset)
        report["floor_violations"] = violations
        for violation in violations:
            say(f"  BELOW FLOOR: {violation}")
    if which == "recall":
        from bench.recall import bench_recall

        memories = args.memories or 100_000
        say(f"bench recall: 10k and {memories} memories per tenant, {args.queries} queries per filter")
        report = bench_recall(memories=memories, queries=args.queries, seed=args.seed, store=args.store, say=say)
        say(f"  store: about {report['store_rows']} memories in all; EXPLAIN of a filtered vector search at "
            f"{max(report['explain'], key=int)} memories:")
        for line in report["explain"][max(report["explain"], key=int)].splitlines():
            say(f"    {line}")
    if which == "judge":
        from bench import judge as judge_bench

        if args.fit:
            say(f"bench judge: fitted the embedded judge on the tuning pairs -> {judge_bench.write_local_model()}")
        judge = judge_bench.judge_from_args(backend=args.backend, url=args.url, model=args.model)
        say(f"bench judge: {judge.name} on the {args.part} pairs of tests/eval/judge_pairs.json")
        report = judge_bench.evaluate(judge=judge, part=args.part)
        for line in judge_bench.format_report(report):
            say(line)
        if args.ablate:
            say("  ablation (the embedded judge refitted on the tuning pairs without each group; held-out pairs):")
            report["ablation"] = judge_bench.ablation()
            for line in judge_bench.format_ablation(report["ablation"]):
                say(line)
    if which == "http":
        from bench.http import bench_http, format_table

        memories = args.memories or 20_000
        say(f"bench http: remember and recall over HTTP and in process, a tenant of {memories} memories, "
            f"{args.requests} requests per operation and level, clients {clients}")
        report = bench_http(memories=memories, requests=args.requests, clients=clients, seed=args.seed, say=say)
        for line in format_table(report):
            say(line)
    if which == "mcp":
        from bench.mcp import bench_mcp
        from bench.mcp import format_table as format_mcp

        memories = args.memories or 20_000
        say(f"bench mcp: remember and recall as MCP tool calls and over REST, a tenant of {memories} memories, "
            f"{args.requests} calls per way and operation")
        report = bench_mcp(memories=memories, requests=args.requests, seed=args.seed, say=say)
        for line in format_mcp(report):
            say(line)
    if which == "soak":
        from bench.soak import bench_soak
        from bench.soak import format_report as format_soak

        say(f"bench soak: {args.soak_clients} client processes for {args.seconds:.0f} s against the served stack")
        report = bench_soak(seconds=args.seconds, clients=args.soak_clients, seed=args.seed, say=say)
        for line in format_soak(report):
            say(line)
    if which == "pages":
        from bench.pages import bench_pages
        from bench.pages import format_table as format_pages

        memories = args.memories or 10_000
        say(f"bench pages: each web page rendered {args.renders} times in process, a tenant of {memories} memories")
        report = bench_pages(memories=memories, renders=args.renders, seed=args.seed, say=say)
        for line in format_pages(report):
            say(line)
    if which == "load":
        from bench.load import bench_load, plot

        if args.plot_only:
            plot(RESULTS_DIR, say)
            return 0
        memories = args.memories or 100_000
        say(f"bench load: {memories} memories in {args.tenants} organizations, {args.queries} queries per filter")
        report = bench_load(memories=memories, tenants=args.tenants, queries=args.queries, seed=args.seed, say=say)
    report = {
        "benchmark": which,
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()}",
        **report,
    }
    if not args.no_save:
        RESULTS_DIR.mkdir(exist_ok=True)
        name = f"{which}-{args.dataset}" if which == "retrieval" and args.dataset != "dataset" else which
        path = RESULTS_DIR / f"{name}-{report['at'].replace(':', '')}.json"
        path.write_text(json.dumps(report, indent=2) + "\n")
        say(f"saved {path.relative_to(RESULTS_DIR.parent)}")
    if which == "load" and not args.no_save:
        plot(RESULTS_DIR, say)
    if which == "soak" and (report["server_errors"] or any(report["invariants"].values())):
        say("soak FAILED: a 5xx or a request without an answer, or an invariant broken")
        return 1
    if args.check and report.get("floor_violations"):
        say("retrieval quality is below its floors")
        return 1
    if args.check and report.get("retirement_refusals"):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
