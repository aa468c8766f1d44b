"""The vLLM judge client against the local OpenAI-compatible test server (vLLM itself cannot run here)."""
import json
import time

import pytest

from hygiene.judge import RELATIONS, JudgeUnavailable, Pair
from hygiene.judge.local import LocalJudge
from hygiene.judge.prompt import PROMPT_TEXT_CHARS, RATIONALE_MAX_CHARS, answer_token_budget
from hygiene.judge.vllm import BreakerState, VllmJudge
from tests.support.fake_vllm import FakeVllm


@pytest.fixture
def server():
    fake = FakeVllm()
    yield fake
    fake.close()


def pairs(n):
    return [Pair(older=f"Old fact {i}", newer=f"New fact {i}", older_kind="fact", newer_kind="fact") for i in range(n)]


def test_requests_are_schema_constrained_and_batched(server):
    judge = VllmJudge(url=server.url, model=server.model, api_key="sekrit", batch_size=4, backoff=0)
    verdicts = judge.judge(pairs(6))
    assert [v.relation for v in verdicts] == ["supersedes"] * 6
    assert len(server.requests) == 2  # 4 + 2 pairs (sent concurrently: either may arrive first)
    request = max(server.requests, key=lambda r: len(json.loads(r["body"]["messages"][1]["content"])))
    body = request["body"]
    assert body["temperature"] == 0 and request["auth"] == "Bearer sekrit"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdicts"]["minItems"] == 4
    item = schema["properties"]["verdicts"]["items"]
    assert item["properties"]["relation"]["enum"] == ["supersedes", "duplicate", "complementary", "contradicts",
                                                      "unrelated"]
    assert [p["A"]["text"] for p in json.loads(body["messages"][1]["content"])] == [f"Old fact {i}" for i in range(4)]


def test_a_server_that_speaks_json_object_gets_the_same_schema():
    """llama-cpp-python's server refuses OpenAI's json_schema and takes {"type": "json_object", "schema": ...}."""
    server = FakeVllm(response_format="json_object")
    try:
        with pytest.raises(JudgeUnavailable, match="400"):  # the default dialect: refused, not retried
            VllmJudge(url=server.url, model=server.model, backoff=0).judge(pairs(1))
        judge = VllmJudge(url=server.url, model=server.model, backoff=0, response_format="json_object")
        assert [v.relation for v in judge.judge(pairs(2))] == ["supersedes"] * 2
        response_format = server.requests[-1]["body"]["response_format"]
        assert response_format["type"] == "json_object"
        assert response_format["schema"]["properties"]["verdicts"]["maxItems"] == 2
    finally:
        server.close()
    with pytest.raises(ValueError, match="response_format"):
        VllmJudge(url=server.url, model=server.model, response_format="grammar")


@pytest.mark.slow
def test_the_judge_bench_says_when_a_judge_is_not_safe_to_retire_on_its_own(server, settings):
    """A small model that calls every pair a confident replacement (Qwen2.5-Coder-1.5B on CPU nearly did) would
    retire complementary facts: the bench says so and tells the operator to run it queue-only."""
    from bench.judge import evaluate, format_report, retirement_refusals

    settings.JUDGE_AUTO_RESOLVE_THRESHOLD = 0.9
    server.verdict = {"relation": "supersedes", "confidence": 0.97, "rationale": "newer"}
    report = evaluate(judge=VllmJudge(url=server.url, model=server.model, backoff=0), part="held_out")
    assert report["complementary_retired"] > 0
    assert retirement_refusals(report)[0].startswith("it retired")
    assert any(line.startswith("  NOT SAFE TO RETIRE ON ITS OWN") for line in format_report(report))
    # Queue-only: nothing retires, every true replacement still reaches a person.
    settings.JUDGE_AUTO_RESOLVE_THRESHOLD = 1.01
    report = evaluate(judge=VllmJudge(url=server.url, model=server.model, backoff=0), part="held_out")
    assert report["auto_retired"] == 0 and retirement_refusals(report) == []
    assert report["replacements_retired_or_queued"] >= 0.9


def test_transient_failures_are_retried(server):
    server.fail_next = 2
    judge = VllmJudge(url=server.url, model=server.model, attempts=3, backoff=0)
    assert judge.judge(pairs(1))[0].confidence == 0.95
    assert len(server.requests) == 3


def test_a_request_the_server_refuses_is_not_retried(server):
    judge = VllmJudge(url=server.url, model="another-model", attempts=3, backoff=0)
    with pytest.raises(JudgeUnavailable, match="400"):
        judge.judge(pairs(1))
    assert len(server.requests) == 1


def test_a_refused_batch_is_logged_with_the_servers_status_and_answer(server, caplog):
    judge = VllmJudge(url=server.url, model="another-model", backoff=0, fallback=LocalJudge())
    (verdict,) = judge.judge(pairs(1))
    assert verdict.judge.startswith("local:")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "hygiene.judge.vllm"]
    assert "a batch of 1 pair(s) failed" in line and "HTTP 400" in line and "unknown model 'another-model'" in line


def test_an_answer_cut_at_max_tokens_says_so(server):
    server.finish_reason, server.content = "length", '{"verdicts": [{"relation": "supersedes", "confid'
    with pytest.raises(JudgeUnavailable, match="cut at max_tokens"):
        VllmJudge(url=server.url, model=server.model, attempts=1, backoff=0).judge(pairs(1))


def test_raw_control_characters_inside_a_string_are_read_and_cleaned_out_of_the_rationale(server):
    """What vLLM's xgrammar lets into a string with maxLength (its grammar does not forbid them): strict JSON
    refuses it."""
    server.content = '{"verdicts": [{"relation": "supersedes", "confidence": 0.9, "rationale": "moved\t\x07 on"}]}'
    with pytest.raises(json.JSONDecodeError):
        json.loads(server.content)
    (verdict,) = VllmJudge(url=server.url, model=server.model, attempts=1, backoff=0).judge(pairs(1))
    assert (verdict.relation, verdict.rationale) == ("supersedes", "moved on")


def test_the_budget_covers_the_longest_answer_and_long_texts_are_cut(server):
    long = Pair("a" * 16_000, "b" * 16_000, "fact", "fact")
    VllmJudge(url=server.url, model=server.model, backoff=0).judge([long] * 3)
    body = server.requests[-1]["body"]
    assert body["max_tokens"] == answer_token_budget(3) >= 3 * (RATIONALE_MAX_CHARS + 40)
    listed = json.loads(body["messages"][1]["content"])
    assert all(len(p["A"]["text"]) == PROMPT_TEXT_CHARS + len(" [...]") for p in listed)
    item = body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]["items"]
    assert item["properties"]["rationale"]["maxLength"] == RATIONALE_MAX_CHARS


@pytest.mark.parametrize("verdict", [
    {"relation": "replaces", "confidence": 0.9, "rationale": ""},
    {"relation": "supersedes", "confidence": 1.7, "rationale": ""},
])
def test_invalid_verdicts_are_refused(server, verdict):
    server.verdict = verdict
    with pytest.raises(JudgeUnavailable, match="invalid verdict"):
        VllmJudge(url=server.url, model=server.model, attempts=2, backoff=0).judge(pairs(1))


def test_a_dead_server_is_unavailable_not_a_crash():
    judge = VllmJudge(url="http://127.0.0.1:1/v1", model="m", timeout=0.5, attempts=2, backoff=0)
    with pytest.raises(JudgeUnavailable):
        judge.judge(pairs(1))


def test_batches_run_concurrently_but_bounded_and_keep_their_order(server):
    server.delay = 0.3
    judge = VllmJudge(url=server.url, model=server.model, batch_size=2, concurrency=3, backoff=0)
    started = time.perf_counter()
    verdicts = judge.judge(pairs(12))  # 6 requests of 2 pairs
    assert len(verdicts) == 12 and len(server.requests) == 6
    assert server.max_in_flight == 3  # never more than `concurrency` at once
    assert time.perf_counter() - started < 6 * 0.3  # not one after the other
    assert all(v.judge == "vllm:test-judge" and v.prompt_version == "judge-v2" for v in verdicts)
    firsts = sorted(json.loads(r["body"]["messages"][1]["content"])[0]["A"]["text"] for r in server.requests)
    assert firsts == sorted(f"Old fact {i}" for i in range(0, 12, 2))


def test_a_down_server_falls_back_to_the_embedded_judge_marked_as_such(server):
    server.fail_next = 99
    judge = VllmJudge(url=server.url, model=server.model, attempts=2, backoff=0, fallback=LocalJudge())
    (verdict,) = judge.judge([Pair("Deploys are on Mondays.", "Deploys moved to Thursdays now.", "fact", "fact")])
    assert verdict.judge == "local:minilm-signals-v2 (fallback for vllm:test-judge)"
    assert verdict.prompt_version == "judge-v2" and verdict.relation in RELATIONS
    assert len(server.requests) == 2  # it was tried, with its retries, before falling back


def test_the_breaker_opens_probes_half_open_and_closes_again(server):
    now = [0.0]
    judge = VllmJudge(url=server.url, model=server.model, attempts=1, backoff=0, fallback=LocalJudge(),
                      breaker_failures=2, breaker_cooldown=30)
    judge.breaker.clock = lambda: now[0]
    server.fail_next = 99  # down
    judge.judge(pairs(1))
    assert judge.breaker.state == BreakerState.CLOSED  # one failure is not an outage
    judge.judge(pairs(1))
    assert judge.breaker.state == BreakerState.OPEN and len(server.requests) == 2
    (verdict,) = judge.judge(pairs(1))  # open: straight to the fallback, nothing sent
    assert len(server.requests) == 2 and verdict.judge.startswith("local:")
    now[0] = 31  # the cooldown has passed: one probe
    assert judge.breaker.state == BreakerState.HALF_OPEN
    judge.judge(pairs(1))
    assert len(server.requests) == 3 and judge.breaker.state == BreakerState.OPEN  # the probe failed: open again
    now[0] = 62
    server.fail_next = 0  # back
    (verdict,) = judge.judge(pairs(1))
    assert verdict.judge == "vllm:test-judge" and judge.breaker.state == BreakerState.CLOSED
    assert len(server.requests) == 4


def test_without_a_fallback_an_open_breaker_is_unavailable_without_a_request(server):
    server.fail_next = 99
    judge = VllmJudge(url=server.url, model=server.model, attempts=1, backoff=0, breaker_failures=1)
    with pytest.raises(JudgeUnavailable, match="503"):
        judge.judge(pairs(1))
    with pytest.raises(JudgeUnavailable, match="circuit open"):
        judge.judge(pairs(1))
    assert len(server.requests) == 1


@pytest.mark.slow
def test_the_judge_bench_evaluates_any_openai_compatible_server_on_the_held_out_pairs(server, settings):
    """`make bench ARGS="judge --backend vllm --url ..."`: the same held-out pairs, the same scoring, no fallback
    (a fallback's verdicts would be scored as the model's)."""
    from bench.judge import evaluate, format_report, judge_from_args

    settings.JUDGE_BATCH_SIZE = 8
    judge = judge_from_args(backend="vllm", url=server.url, model=server.model)
    assert judge.fallback is None
    report = evaluate(judge=judge, part="held_out")
    assert (report["judge"], report["prompt_version"], report["pairs"]) == ("vllm:test-judge", "judge-v2", 149)
    assert report["confusion"]["supersedes"] == {"supersedes": 40}  # the test server says "supersedes" to all
    assert len(server.requests) == 19  # 149 = 4 calls of 32 (4 requests of 8 each) + 21 (8, 8, 5)
    assert "held_out pairs" in format_report(report)[0]
