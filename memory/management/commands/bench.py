"""Benchmarks that the project ships: numbers printed, results kept in bench-results/."""
import json
import platform
from datetime import datetime, timezone
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

RESULTS_DIR = Path(settings.BASE_DIR) / "bench-results"


class Command(BaseCommand):
    help = ("Run a benchmark: remember (write latency), retrieval (quality on the eval set), recall (read latency), "
            "judge (the hygiene judge on labeled pairs).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("which", choices=["remember", "retrieval", "recall", "judge"])
        parser.add_argument("--n", type=int, default=10_000, help="number of writes (remember)")
        parser.add_argument("--memories", type=int, default=100_000, help="memories in the big tenant (recall)")
        parser.add_argument("--store", type=int, default=0,
                            help="fill other tenants until the store holds about this many memories (recall)")
        parser.add_argument("--queries", type=int, default=200, help="queries per filter and tenant (recall)")
        parser.add_argument("--check", action="store_true", help="exit 1 below the floors (retrieval)")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--no-save", action="store_true", help="print only, keep no result file")

    def handle(self, *args, which: str, n: int, seed: int, no_save: bool, memories: int, queries: int,
               store: int, check: bool, **options) -> None:
        if min(n, memories, queries) < 1:
            raise CommandError("--n, --memories and --queries must be at least 1")
        if store < 0:
            raise CommandError("--store must be 0 or more")
        say = lambda line: self.stdout.write(line)  # noqa: E731
        if which == "remember":
            from memory.bench.remember import bench_remember

            say(f"bench remember: {n} writes through memory_remember into a fresh organization")
            report = bench_remember(n=n, seed=seed, say=say)
            for series in ("undeclared", "declared"):
                if series in report:
                    r = report[series]
                    say(f"  {series:<10} n={r['count']:<6} p50={r['p50_ms']:.1f} ms  p95={r['p95_ms']:.1f} ms  "
                        f"embedding {r['embedding_share']:.0%} of the time")
        if which == "retrieval":
            from memory.bench.retrieval import evaluate, floor_violations, format_table

            say("bench retrieval: the evaluation set (tests/eval/dataset.json) through remember and recall")
            report = evaluate(say=say)
            for line in format_table(report):
                say(line)
            violations = floor_violations(report)
            report["floor_violations"] = violations
            for violation in violations:
                say(f"  BELOW FLOOR: {violation}")
        if which == "recall":
            from memory.bench.recall import bench_recall

            say(f"bench recall: 10k and {memories} memories per tenant, {queries} queries per filter")
            report = bench_recall(memories=memories, queries=queries, seed=seed, store=store, say=say)
            say(f"  store: about {report['store_rows']} memories in all; EXPLAIN of a filtered vector search at "
                f"{max(report['explain'], key=int)} memories:")
            for line in report["explain"][max(report["explain"], key=int)].splitlines():
                say(f"    {line}")
        if which == "judge":
            from hygiene.bench import evaluate as evaluate_judge
            from hygiene.bench import format_report

            say("bench judge: the configured judge on tests/eval/judge_pairs.json")
            report = evaluate_judge()
            for line in format_report(report):
                say(line)
        report = {
            "benchmark": which,
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()} {platform.processor() or ''} cpus={__import__('os').cpu_count()}",
            **report,
        }
        if not no_save:
            RESULTS_DIR.mkdir(exist_ok=True)
            path = RESULTS_DIR / f"{which}-{report['at'].replace(':', '')}.json"
            path.write_text(json.dumps(report, indent=2) + "\n")
            say(f"saved {path.relative_to(settings.BASE_DIR)}")
        if check and report.get("floor_violations"):
            raise CommandError("retrieval quality is below its floors")
