"""The evaluation set on every CI run: retrieval quality must not fall below tests/eval/floors.json.

Floors were set from measurement (bench-results/retrieval-*.json) and are raised as ranking improves; a change that
lowers a number below its floor fails here. Superseded versions never rank first for declared supersedes.
"""
from bench.retrieval import evaluate, floor_violations, format_table


def test_retrieval_quality_stays_above_its_floors(db):
    report = evaluate(say=lambda line: None)
    print("\n".join(format_table(report)))
    assert report["queries"] >= 100 and report["memories"] >= 250
    assert report["table"]["declared_supersede"]["stale@1"] == 0.0
    assert report["retired_returned"] == 0  # a superseded or forgotten memory never comes back without include_history
    assert floor_violations(report) == []
    # Review of the undeclared replacements (bench-results/retrieval-*.json; measured 27 of 30 reached the judge,
    # 14 retired or queued, 15.1 open conflicts per 100 writes): a change that hides predecessors from the judge,
    # stops queueing them or floods the queue fails here.
    outcomes = report["hygiene_outcomes"]
    assert outcomes["undeclared_pairs_judged"] >= 27 and outcomes["undeclared_pairs_retired_or_queued"] >= 0.45
    assert outcomes["conflicts_open_per_100_writes"] <= 16
