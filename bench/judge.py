"""`make bench ARGS=judge`: a judge on the held-out part of the labelled pairs (tests/eval/judge_pairs.json, split by
tests/eval/judge_split.json: a fixed, seeded split stratified by label; the embedded judge is fitted on `tuning` only).

Prints a confusion matrix (true label x predicted relation), what the review would do with each verdict (the rule of
hygiene/services.py, one writer assumed: retire at the auto-resolve threshold when the pair has the shape of an
update, queue a conflict at JUDGE_QUEUE_THRESHOLD, or only record), the precision of
automatic retirement, the recall of true replacements, how many true replacements are retired or queued, false
retirements of complementary pairs (the mistake that silently loses a true fact), and a reliability table: per
confidence band, the mean confidence beside the share of verdicts that were right.

  --fit                 refit the embedded judge on the tuning pairs (writes hygiene/judge/local_model.json)
  --ablate              the embedded judge refitted without each group of signals, on the held-out pairs
  --backend vllm --url URL [--model M]   any OpenAI-compatible server, the same held-out pairs
  --check               exit 1 when the judge is not safe to retire on its own (retirement_refusals)
"""
import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from hygiene.judge import RELATIONS, Judge, Pair, get_judge
from hygiene.services import Action, action_for, queue_refusal, retire_refusal

EVAL = Path(settings.BASE_DIR) / "tests" / "eval"
PAIRS = EVAL / "judge_pairs.json"
SPLIT = EVAL / "judge_split.json"
RETIRING = {"supersedes", "duplicate"}
BATCH = 32
BANDS = [(0.0, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]


def load_pairs(part: str = "held_out") -> list[dict]:
    """`held_out`, `tuning` or `all`: the split is fixed in judge_split.json, never drawn again."""
    pairs = json.loads(PAIRS.read_text())["pairs"]
    if part == "all":
        return pairs
    ids = set(json.loads(SPLIT.read_text())[part])
    return [p for p in pairs if p["id"] in ids]


def as_pair(p: dict) -> Pair:
    return Pair(p["a"], p["b"], p["kind_a"], p["kind_b"])


def evaluate(*, judge: Judge | None = None, part: str = "held_out") -> dict:
    data = load_pairs(part)
    judge = judge or get_judge()
    threshold = settings.JUDGE_AUTO_RESOLVE_THRESHOLD
    verdicts, started = [], time.perf_counter()
    for start in range(0, len(data), BATCH):
        verdicts += judge.judge([as_pair(p) for p in data[start:start + BATCH]])
    elapsed = time.perf_counter() - started
    return {"judge": judge.name, "prompt_version": judge.prompt_version, "part": part,
            "ms_per_pair": round(elapsed * 1000 / len(data), 2),
            **score(data, verdicts, threshold, _similarities(data))}


def _similarities(data: list[dict]) -> list[float]:
    import numpy as np

    from memory.embeddings import embed

    vectors = embed([text for p in data for text in (p["a"], p["b"])])
    return [float(s) for s in np.clip((vectors[0::2] * vectors[1::2]).sum(axis=1), -1, 1)]


def review_action(pair: dict, verdict, threshold: float, similarity: float) -> Action:
    """The review's rule (hygiene/services.py) on one labelled pair, as if one writer wrote both: the pairs name no
    writer, and another writer's pair is only ever queued."""
    return action_for(
        verdict, threshold,
        retire_refused=retire_refusal(older=pair["a"], older_kind=pair["kind_a"], newer=pair["b"],
                                      newer_kind=pair["kind_b"], same_writer=True),
        queue_refused=queue_refusal(older=pair["a"], newer=pair["b"], similarity=similarity, older_kind=pair["kind_a"],
                                    newer_kind=pair["kind_b"], same_writer=True),
    )


def score(data: list[dict], verdicts: list, threshold: float, similarities: list[float]) -> dict:
    matrix = {label: Counter() for label in RELATIONS}
    actions = [review_action(p, v, threshold, s) for p, v, s in zip(data, verdicts, similarities)]
    for pair, verdict in zip(data, verdicts):
        matrix[pair["label"]][verdict.relation] += 1
    retired = [p for p, a in zip(data, actions) if a == Action.RETIRE]
    true_retiring = [p for p in data if p["label"] in RETIRING]
    replacements = [(p, a) for p, a in zip(data, actions) if p["label"] == "supersedes"]
    complementary = [p for p in data if p["label"] == "complementary"]
    correct = sum(1 for p in retired if p["label"] in RETIRING)
    report = {
        "threshold": threshold,
        "pairs": len(data),
        "confusion": {label: dict(matrix[label]) for label in RELATIONS},
        "accuracy": round(sum(matrix[label][label] for label in RELATIONS) / len(data), 3),
        "auto_retired": len(retired),
        "auto_retire_precision": round(correct / len(retired), 3) if retired else None,
        "auto_retire_recall": round(correct / len(true_retiring), 3) if true_retiring else None,
        "replacement_recall": round(sum(a == Action.RETIRE for _, a in replacements) / len(replacements), 3),
        "replacements_retired_or_queued": round(
            sum(a != Action.RECORD for _, a in replacements) / len(replacements), 3),
        "complementary_retired": sum(1 for p in retired if p["label"] == "complementary"),
        "false_retirement_rate_complementary": round(
            sum(1 for p in retired if p["label"] == "complementary") / len(complementary), 4
        ) if complementary else None,
        "queued_share": round(sum(a == Action.CONFLICT for a in actions) / len(data), 3),
        "hard_pairs_accuracy": round(
            sum(1 for p, v in zip(data, verdicts) if p.get("hard") and v.relation == p["label"])
            / max(1, sum(1 for p in data if p.get("hard"))), 3
        ),
        "reliability": _reliability(data, verdicts),
    }
    report["retirement_refusals"] = retirement_refusals(report)
    return report


def _reliability(data: list[dict], verdicts: list) -> list[dict]:
    """Per confidence band: how sure the judge said it was, and how often it was right. Calibrated: the two agree."""
    rows = []
    for low, high in BANDS:
        band = [(p["label"] == v.relation, v.confidence) for p, v in zip(data, verdicts) if low <= v.confidence < high]
        rows.append({"confidence": f"{low:.1f}-{min(high, 1.0):.1f}", "pairs": len(band),
                     "mean_confidence": round(sum(c for _, c in band) / len(band), 3) if band else None,
                     "accuracy": round(sum(h for h, _ in band) / len(band), 3) if band else None})
    return rows


def _signal_rows(data: list[dict]) -> list[dict]:
    import numpy as np

    from hygiene.judge.signals import signals
    from memory.embeddings import embed

    vectors = embed([text for p in data for text in (p["a"], p["b"])])
    similarities = np.clip((vectors[0::2] * vectors[1::2]).sum(axis=1), -1, 1)
    return [signals(p["a"], p["b"], p["kind_a"], p["kind_b"], float(s)) for p, s in zip(data, similarities)]


def fit_local(*, disabled: frozenset[str] = frozenset()):
    """The embedded judge's model, fitted on the tuning pairs only."""
    from hygiene.judge import model

    tuning = load_pairs("tuning")
    return model.fit(_signal_rows(tuning), [p["label"] for p in tuning], disabled=disabled)


def write_local_model() -> Path:
    from hygiene.judge import model

    tuning = load_pairs("tuning")
    rows = _signal_rows(tuning)
    fitted = model.fit(rows, [p["label"] for p in tuning])
    meta = {"description": "The embedded judge's weights and calibration, written by `make bench ARGS=\"judge "
                           "--fit\"` from the tuning part of tests/eval/judge_pairs.json (tests/eval/judge_split.json)."
                           " Do not edit by hand.", "tuning_pairs": len(tuning)}
    model.MODEL_FILE.write_text(json.dumps(fitted.to_json(list(rows[0]), meta), indent=1) + "\n")
    return model.MODEL_FILE


def ablation() -> list[dict]:
    """The embedded judge refitted without each group of signals, scored on the held-out pairs."""
    from hygiene.judge.local import LocalJudge
    from hygiene.judge.signals import SIGNAL_GROUPS

    rows = []
    for name, group in [("all signals", ()), *SIGNAL_GROUPS.items()]:
        report = evaluate(judge=LocalJudge(fit_local(disabled=frozenset(group))))
        rows.append({"without": name, **{k: report[k] for k in (
            "accuracy", "auto_retired", "auto_retire_precision", "auto_retire_recall", "replacement_recall",
            "replacements_retired_or_queued", "complementary_retired", "queued_share")}})
    return rows


def format_ablation(rows: list[dict]) -> list[str]:
    lines = [f"  {'without':<38}{'acc':>6}{'retired':>8}{'prec':>7}{'recall':>8}{'repl.ret':>9}"
             f"{'repl.r|q':>9}{'compl.ret':>10}{'queued':>8}"]
    for r in rows:
        lines.append(f"  {r['without']:<38}{r['accuracy']:>6}{r['auto_retired']:>8}"
                     f"{str(r['auto_retire_precision']):>7}{str(r['auto_retire_recall']):>8}"
                     f"{r['replacement_recall']:>9}{r['replacements_retired_or_queued']:>9}"
                     f"{r['complementary_retired']:>10}{r['queued_share']:>8}")
    return lines


def retirement_refusals(report: dict) -> list[str]:
    """Why this judge should not retire anything on its own word (empty: it may). Seed 000: a wrong retirement loses
    a true fact silently, so a judge retires only if, on the held-out pairs, its retirements are right at least 98
    times in 100 and none retires a complementary pair. A judge that fails runs queue-only: set
    JUDGE_AUTO_RESOLVE_THRESHOLD above 1 and every verdict goes to a person or is only recorded."""
    refusals = []
    if report["complementary_retired"]:
        refusals.append(f"it retired {report['complementary_retired']} complementary pair(s)")
    if report["auto_retired"] and (report["auto_retire_precision"] or 0) < 0.98:
        refusals.append(f"its retirements are right {report['auto_retire_precision']} of the time (under 0.98)")
    return refusals


def format_report(report: dict) -> list[str]:
    short = {"supersedes": "supers", "duplicate": "dup", "complementary": "compl", "contradicts": "contra",
             "unrelated": "unrel"}
    lines = [f"  judge {report['judge']} ({report['prompt_version']}), threshold {report['threshold']}, "
             f"{report['pairs']} {report['part']} pairs",
             "  true \\ predicted " + "".join(f"{short[r]:>8}" for r in RELATIONS)]
    for label in RELATIONS:
        row = report["confusion"][label]
        lines.append(f"  {label:<17}" + "".join(f"{row.get(r, 0):>8}" for r in RELATIONS))
    lines.append(f"  accuracy {report['accuracy']}, on hard pairs {report['hard_pairs_accuracy']}")
    lines.append(f"  auto-retired {report['auto_retired']}: precision {report['auto_retire_precision']}, "
                 f"recall of true replacements/duplicates {report['auto_retire_recall']}, "
                 f"of true replacements {report['replacement_recall']}")
    lines.append(f"  true replacements retired or queued: {report['replacements_retired_or_queued']}; "
                 f"pairs queued for a person: {report['queued_share']}")
    lines.append(f"  complementary pairs retired: {report['complementary_retired']} "
                 f"(rate {report['false_retirement_rate_complementary']})")
    lines.append("  reliability:  band      pairs  mean conf.  right")
    for row in report["reliability"]:
        lines.append(f"                {row['confidence']:<9}{row['pairs']:>6}{str(row['mean_confidence']):>12}"
                     f"{str(row['accuracy']):>7}")
    lines.append(f"  {report['ms_per_pair']} ms per pair")
    if report["retirement_refusals"]:
        lines.append(f"  NOT SAFE TO RETIRE ON ITS OWN: {'; '.join(report['retirement_refusals'])}. Run it "
                     "queue-only (JUDGE_AUTO_RESOLVE_THRESHOLD=1.01: a person decides every dispute)")
    else:
        lines.append("  safe to retire on its own at this threshold: precision >= 0.98, no complementary pair retired")
    return lines


def judge_from_args(*, backend: str | None, url: str | None, model: str | None) -> Judge:
    """The judge to score: the configured one, or one named on the command line (any OpenAI-compatible server)."""
    backend = backend or settings.JUDGE_BACKEND
    if backend == "vllm":
        from hygiene.judge.vllm import VllmJudge

        return VllmJudge(url=url or settings.JUDGE_VLLM_URL, model=model or settings.JUDGE_VLLM_MODEL,
                         api_key=settings.JUDGE_VLLM_API_KEY, timeout=settings.JUDGE_TIMEOUT_SECONDS,
                         batch_size=settings.JUDGE_BATCH_SIZE, concurrency=settings.JUDGE_VLLM_CONCURRENCY,
                         response_format=settings.JUDGE_RESPONSE_FORMAT, fallback=None)
    if backend == "local":
        from hygiene.judge.local import LocalJudge

        return LocalJudge()
    raise ValueError(f"unknown judge backend {backend!r}")


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    """The judge of --backend/--url/--model on the --part pairs (after --fit; --ablate's table under "ablation")."""
    if args.fit:
        say(f"bench judge: fitted the embedded judge on the tuning pairs -> {write_local_model()}")
    judge = judge_from_args(backend=args.backend, url=args.url, model=args.model)
    say(f"bench judge: {judge.name} on the {args.part} pairs of tests/eval/judge_pairs.json")
    result = evaluate(judge=judge, part=args.part)
    if args.ablate:
        result["ablation"] = ablation()
    return result


def report(result: dict, say: Callable[[str], None]) -> None:
    for line in format_report(result):
        say(line)
    if "ablation" in result:
        say("  ablation (the embedded judge refitted on the tuning pairs without each group; held-out pairs):")
        for line in format_ablation(result["ablation"]):
            say(line)
