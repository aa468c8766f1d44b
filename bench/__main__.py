"""`python -m bench WHICH [options]`: run one benchmark, print its numbers, keep them in bench-results/.

`make bench ARGS="..."` runs this through embedded_stack.launcher, which starts the embedded services first.
Each benchmark is a module of this package with `run(args, say) -> dict` (measures, returns the report) and
`report(result, say)` (prints it); this file holds the command line and what every benchmark shares: Django's setup,
the saved result file and the exit status.
"""
import argparse
import importlib
import json
import os
import platform
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import django

RESULTS_DIR = Path(__file__).resolve().parent.parent / "bench-results"
DATASETS = ["dataset", "conversations", "longchat-tune", "longchat-heldout", "longchat-tune-words",
            "longchat-heldout-words", "beam-100k"]  # bench/retrieval.py's DATASETS


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _at_least_zero(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _client_counts(text: str) -> list[int]:
    counts = [_at_least_one(c) for c in text.split(",") if c.strip()]
    if not counts:
        raise argparse.ArgumentTypeError("name at least one count of clients")
    return counts


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run one benchmark (`WHICH --help`: its "
                                     "options), print its numbers and keep them in bench-results/.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=int, default=7)
    common.add_argument("--no-save", action="store_true", help="print only, keep no result file")
    benches = parser.add_subparsers(dest="which", required=True, metavar="WHICH")

    def bench(name: str, summary: str) -> argparse.ArgumentParser:
        # No abbreviations: each bench has its own options, and `recall --n` must not pass for --no-save.
        return benches.add_parser(name, parents=[common], help=summary, description=summary, allow_abbrev=False)

    def memories(sub: argparse.ArgumentParser, default: int, what: str) -> None:
        sub.add_argument("--memories", type=_at_least_one, default=default, help=f"{what} (default {default})")

    sub = bench("remember", "write latency through the real service, with and without a declared supersede")
    sub.add_argument("--n", type=_at_least_one, default=10_000, help="number of writes")

    sub = bench("retrieval", "quality on an evaluation set, through remember and recall")
    sub.add_argument("--dataset", choices=DATASETS, default="dataset",
                     help="evaluation set in tests/eval/: dataset (the first set), conversations (long conversations, "
                          "nothing fitted on it), longchat-tune and longchat-heldout (long chats of untyped turns: the "
                          "half tuned on, the half only reported), longchat-tune-words and longchat-heldout-words (the "
                          "same chats asked in the writer's own words), beam-100k (public long conversations, BEAM: "
                          "tune and held-out halves by conversation); each but the words variants has floors")
    sub.add_argument("--check", action="store_true", help="exit 1 below the set's floors")

    sub = bench("recall", "read latency at 10k and --memories memories per tenant, several tenants")
    memories(sub, 100_000, "memories in the big tenant")
    sub.add_argument("--store", type=_at_least_zero, default=0,
                     help="fill other tenants until the store holds about this many memories")
    sub.add_argument("--queries", type=_at_least_one, default=200, help="queries per filter and tenant")

    sub = bench("judge", "the hygiene judge on the labelled pairs of tests/eval/judge_pairs.json")
    sub.add_argument("--fit", action="store_true",
                     help="refit the embedded judge on the tuning pairs first (writes local_model.json)")
    sub.add_argument("--ablate", action="store_true", help="the embedded judge without each signal group")
    sub.add_argument("--part", choices=["held_out", "tuning", "all"], default="held_out",
                     help="which labelled pairs to score (report on held_out)")
    sub.add_argument("--backend", choices=["local", "vllm"], default=None, help="judge backend (default JUDGE_BACKEND)")
    sub.add_argument("--url", default=None, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    sub.add_argument("--model", default=None, help="model name on that server (default JUDGE_VLLM_MODEL)")
    sub.add_argument("--check", action="store_true", help="exit 1 when the judge is not safe to retire on its own")

    sub = bench("http", "remember and recall over HTTP against the served stack, beside the same calls in process")
    memories(sub, 20_000, "memories in the tenant")
    sub.add_argument("--requests", type=_at_least_one, default=300,
                     help="requests per operation and concurrency level")
    sub.add_argument("--clients", type=_client_counts, default=[1, 4, 16],
                     help="concurrent keep-alive clients, comma-separated (default 1,4,16)")

    sub = bench("mcp", "remember and recall as MCP tool calls beside the same calls over REST, against the served "
                "stack")
    memories(sub, 20_000, "memories in the tenant")
    sub.add_argument("--requests", type=_at_least_one, default=300, help="calls per way and operation")

    sub = bench("soak", "client processes for a bounded time against the served stack, then the lifecycle invariants "
                "in SQL")
    sub.add_argument("--seconds", type=float, default=600, help="how long the clients run")
    sub.add_argument("--soak-clients", type=int, default=4, help="client processes")

    sub = bench("telemetry", "what metrics, the request log and disabled tracing add to remember and recall (p50)")
    memories(sub, 2_000, "memories in the tenant")
    sub.add_argument("--requests", type=_at_least_one, default=1000, help="requests per side and operation")

    sub = bench("pages", "render time of each web page in a tenant of --memories")
    memories(sub, 10_000, "memories in the tenant")
    sub.add_argument("--renders", type=_at_least_one, default=20, help="renders of each page after a warm-up")

    sub = bench("load", "a store of --memories in --tenants organizations, loaded fast into its own database: "
                "remember and recall per tenant, throughput, sizes, RSS, plans; then a plot of latency against store "
                "size from the results of every size")
    memories(sub, 100_000, "memories in the whole store")
    sub.add_argument("--tenants", type=_at_least_one, default=100, help="organizations in the store")
    sub.add_argument("--queries", type=_at_least_one, default=200, help="queries per filter and tenant")
    sub.add_argument("--plot-only", action="store_true",
                     help="only draw bench-results/load-latency.png from the saved load results")
    return parser


def _result_name(args: argparse.Namespace) -> str:
    """The result file's name before its time: the benchmark, and the evaluation set when it is not the first."""
    if args.which == "retrieval" and args.dataset != "dataset":
        return f"retrieval-{args.dataset}"
    return args.which


def _failed(args: argparse.Namespace, result: dict, say) -> bool:
    """Exit 1: a soak with a 5xx, a request without an answer or a broken invariant, or --check not passed."""
    if args.which == "soak" and (result["server_errors"] or any(result["invariants"].values())):
        say("soak FAILED: a 5xx or a request without an answer, or an invariant broken")
        return True
    if getattr(args, "check", False) and result.get("floor_violations"):
        say("retrieval quality is below its floors")
        return True
    return bool(getattr(args, "check", False) and result.get("retirement_refusals"))


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.which == "load":
        from bench.load import use_bench_database

        use_bench_database()  # its own database, before the settings are read
    if args.which == "telemetry":
        # Metrics as `make run` keeps them (one file per process); prometheus-client reads this when first imported.
        os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="zm-bench-metrics-"))
    django.setup()
    from django.conf import settings

    # The in-process benches call as one caller thousands of times a minute: they measure the work, not the limit.
    settings.RATE_LIMIT_PER_MINUTE = 0

    def say(line: str) -> None:
        print(line, flush=True)

    module = importlib.import_module(f"bench.{args.which}")
    if args.which == "load" and args.plot_only:
        module.plot(RESULTS_DIR, say)
        return 0
    result = module.run(args, say)
    module.report(result, say)
    result = {
        "benchmark": args.which,
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()}",
        **result,
    }
    if not args.no_save:
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"{_result_name(args)}-{result['at'].replace(':', '')}.json"
        path.write_text(json.dumps(result, indent=2) + "\n")
        say(f"saved {path.relative_to(RESULTS_DIR.parent)}")
        if args.which == "load":
            module.plot(RESULTS_DIR, say)
    return 1 if _failed(args, result, say) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
