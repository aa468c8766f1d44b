"""`make bench ARGS=judge`: the configured judge on the labeled pairs of tests/eval/judge_pairs.json.

Prints a confusion matrix (true label x predicted relation), the precision of automatic retirement at the
auto-resolve threshold (of the pairs the judge would retire, how many really were a replacement or a duplicate),
how many true replacements it would retire, and the false-retirement rate on complementary pairs: complementary
pairs it would retire, the mistake that silently loses a true fact.
"""
import json
import time
from collections import Counter
from pathlib import Path

from django.conf import settings

from hygiene.judge import RELATIONS, Pair, get_judge

PAIRS = Path(settings.BASE_DIR) / "tests" / "eval" / "judge_pairs.json"
RETIRING = {"supersedes", "duplicate"}
BATCH = 32


def evaluate(*, path: Path = PAIRS) -> dict:
    data = json.loads(path.read_text())["pairs"]
    judge, threshold = get_judge(), settings.JUDGE_AUTO_RESOLVE_THRESHOLD
    verdicts, started = [], time.perf_counter()
    for start in range(0, len(data), BATCH):
        chunk = data[start:start + BATCH]
        verdicts += judge.judge([Pair(p["a"], p["b"], p["kind_a"], p["kind_b"]) for p in chunk])
    elapsed = time.perf_counter() - started
    matrix = {label: Counter() for label in RELATIONS}
    retired = [(p, v) for p, v in zip(data, verdicts) if v.relation in RETIRING and v.confidence >= threshold]
    for pair, verdict in zip(data, verdicts):
        matrix[pair["label"]][verdict.relation] += 1
    true_retiring = [p for p in data if p["label"] in RETIRING]
    complementary = [p for p in data if p["label"] == "complementary"]
    correct = sum(1 for p, _ in retired if p["label"] in RETIRING)
    return {
        "judge": judge.name,
        "threshold": threshold,
        "pairs": len(data),
        "confusion": {label: dict(matrix[label]) for label in RELATIONS},
        "accuracy": round(sum(matrix[label][label] for label in RELATIONS) / len(data), 3),
        "auto_retired": len(retired),
        "auto_retire_precision": round(correct / len(retired), 3) if retired else None,
        "auto_retire_recall": round(correct / len(true_retiring), 3) if true_retiring else None,
        "false_retirement_rate_complementary": round(
            sum(1 for p, _ in retired if p["label"] == "complementary") / len(complementary), 4
        ) if complementary else None,
        "hard_pairs_accuracy": round(
            sum(1 for p, v in zip(data, verdicts) if p.get("hard") and v.relation == p["label"])
            / max(1, sum(1 for p in data if p.get("hard"))), 3
        ),
        "calibration": _calibration(data, verdicts),
        "ms_per_pair": round(elapsed * 1000 / len(data), 2),
    }


def _calibration(data: list[dict], verdicts: list) -> list[dict]:
    """Accuracy per confidence band: a confidence that means something rises with it."""
    bands = [(0.0, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]
    rows = []
    for low, high in bands:
        hits = [p["label"] == v.relation for p, v in zip(data, verdicts) if low <= v.confidence < high]
        rows.append({"confidence": f"{low:.1f}-{min(high, 1.0):.1f}", "pairs": len(hits),
                     "accuracy": round(sum(hits) / len(hits), 3) if hits else None})
    return rows


def format_report(report: dict) -> list[str]:
    short = {"supersedes": "supers", "duplicate": "dup", "complementary": "compl", "contradicts": "contra",
             "unrelated": "unrel"}
    lines = [f"  judge {report['judge']}, threshold {report['threshold']}, {report['pairs']} pairs",
             "  true \\ predicted " + "".join(f"{short[r]:>8}" for r in RELATIONS)]
    for label in RELATIONS:
        row = report["confusion"][label]
        lines.append(f"  {label:<17}" + "".join(f"{row.get(r, 0):>8}" for r in RELATIONS))
    lines.append(f"  accuracy {report['accuracy']}, on hard pairs {report['hard_pairs_accuracy']}")
    lines.append(f"  auto-retired {report['auto_retired']}: precision {report['auto_retire_precision']}, "
                 f"recall of true replacements/duplicates {report['auto_retire_recall']}")
    lines.append(f"  false retirements of complementary pairs: {report['false_retirement_rate_complementary']}")
    lines.append("  calibration: " + ", ".join(
        f"{row['confidence']}: {row['accuracy']} (n={row['pairs']})" for row in report["calibration"]))
    lines.append(f"  {report['ms_per_pair']} ms per pair")
    return lines
