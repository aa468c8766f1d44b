"""The embedded judge on the labeled pairs, on every CI run: it must not retire complementary facts."""
from bench.judge import evaluate, format_report


def test_the_embedded_judge_rarely_retires_a_complementary_fact(settings):
    settings.JUDGE_BACKEND = "local"
    report = evaluate()
    print("\n".join(format_report(report)))
    assert report["pairs"] >= 250
    assert report["false_retirement_rate_complementary"] <= 0.02
    assert report["auto_retire_precision"] is None or report["auto_retire_precision"] >= 0.9
    # Its confidence means something: the band that reaches the bar is right far more often than the lowest band.
    bands = {row["confidence"]: row for row in report["calibration"]}
    assert bands["0.8-0.9"]["accuracy"] > bands["0.0-0.6"]["accuracy"] + 0.2
