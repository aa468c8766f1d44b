"""The embedded judge on the held-out labelled pairs, on every CI run (tests/eval/judge_split.json; the judge is
fitted on the tuning part only). Floors sit just under what was measured (bench-results/judge-*.json): a change that
retires a complementary fact, or makes the judge or its calibration worse, fails here."""
import json

import pytest

from bench.judge import PAIRS, SPLIT, evaluate, format_report, retirement_refusals
from hygiene.judge.local import LocalJudge


def test_the_split_is_fixed_stratified_and_disjoint():
    split = json.loads(SPLIT.read_text())
    tuning, held_out = set(split["tuning"]), set(split["held_out"])
    pairs = json.loads(PAIRS.read_text())["pairs"]
    assert not tuning & held_out and tuning | held_out == {p["id"] for p in pairs}
    for label in {p["label"] for p in pairs}:
        ids = [p["id"] for p in pairs if p["label"] == label]
        assert abs(sum(i in held_out for i in ids) - len(ids) / 2) <= 1  # half of each label held out


@pytest.mark.slow
def test_the_embedded_judge_on_held_out_pairs_never_retires_a_complementary_fact(settings):
    settings.JUDGE_AUTO_RESOLVE_THRESHOLD = 0.9  # seed 000: the bar is not lowered
    report = evaluate(judge=LocalJudge(), part="held_out")
    print("\n".join(format_report(report)))
    assert report["pairs"] >= 145
    assert report["complementary_retired"] == 0
    assert report["auto_retire_precision"] >= 0.98
    # With the review's rule (the same writer assumed): the judge alone retires only the same subject with a changed
    # value, of the same statement kind, where the newer says in words that it is an update (measured 10 of 62
    # replacements and duplicates, 10 of 40 replacements; 12 of each before the words were required: the two others
    # state a new value without saying it changed, and seed 004 shows such a disagreement to a person instead); the
    # rest of the true replacements go to a person at JUDGE_QUEUE_THRESHOLD (retired or queued: measured 0.90, 0.825
    # while an answer to an open question was only recorded).
    assert report["auto_retire_recall"] >= 0.16
    assert report["replacement_recall"] >= 0.25
    assert report["replacements_retired_or_queued"] >= 0.875
    assert report["accuracy"] >= 0.80  # measured 0.819 (the first judge: 0.678)
    # Calibrated: in each well-filled band the share of right verdicts is within 0.12 of the mean confidence, and
    # a verdict at the bar is right at least 9 times in 10.
    for band in report["reliability"]:
        if band["pairs"] >= 20:
            assert abs(band["accuracy"] - band["mean_confidence"]) <= 0.12, band
    assert report["reliability"][-1]["accuracy"] >= 0.9
    assert retirement_refusals(report) == []  # the bench calls it safe to retire on its own
