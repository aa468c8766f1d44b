"""The vLLM judge client against the local OpenAI-compatible test server (vLLM itself cannot run here)."""
import json

import pytest

from hygiene.judge import JudgeUnavailable, Pair
from hygiene.judge.vllm import VllmJudge
from tests.hygiene.fake_vllm import FakeVllm


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
    assert len(server.requests) == 2  # 4 + 2 pairs
    body = server.requests[0]["body"]
    assert body["temperature"] == 0 and server.requests[0]["auth"] == "Bearer sekrit"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdicts"]["minItems"] == 4
    item = schema["properties"]["verdicts"]["items"]
    assert item["properties"]["relation"]["enum"] == ["supersedes", "duplicate", "complementary", "contradicts",
                                                      "unrelated"]
    assert [p["A"]["text"] for p in json.loads(body["messages"][1]["content"])] == [f"Old fact {i}" for i in range(4)]


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
