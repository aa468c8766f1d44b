"""A judge served by vLLM's OpenAI-compatible /v1/chat/completions, output constrained to the verdict schema.

Several pairs go in one request (``batch_size``); the reply must be exactly one schema-valid verdict per pair.
Transient failures are retried here a few times with backoff; a longer outage raises JudgeUnavailable and the
RQ job retries later.
"""
import json
import time
import urllib.error
import urllib.request

from django.conf import settings

from hygiene.judge import RELATIONS, JudgeUnavailable, Pair, Verdict
from hygiene.judge.prompt import PROMPT_VERSION, batch_schema, messages_for


class VllmJudge:
    prompt_version = PROMPT_VERSION

    def __init__(self, *, url: str, model: str, api_key: str = "", timeout: float = 20.0, batch_size: int = 8,
                 attempts: int = 3, backoff: float = 0.5) -> None:
        self.url = url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout = model, api_key, timeout
        self.batch_size, self.attempts, self.backoff = batch_size, attempts, backoff
        self.name = f"vllm:{model}"

    @classmethod
    def from_settings(cls) -> "VllmJudge":
        return cls(
            url=settings.JUDGE_VLLM_URL, model=settings.JUDGE_VLLM_MODEL, api_key=settings.JUDGE_VLLM_API_KEY,
            timeout=settings.JUDGE_TIMEOUT_SECONDS, batch_size=settings.JUDGE_BATCH_SIZE,
        )

    def judge(self, pairs: list[Pair]) -> list[Verdict]:
        verdicts: list[Verdict] = []
        for start in range(0, len(pairs), self.batch_size):
            verdicts += self._judge_batch(pairs[start:start + self.batch_size])
        return verdicts

    def _judge_batch(self, pairs: list[Pair]) -> list[Verdict]:
        body = {
            "model": self.model,
            "messages": messages_for(pairs),
            "temperature": 0,
            "max_tokens": 160 * len(pairs),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "verdicts", "schema": batch_schema(len(pairs)), "strict": True},
            },
        }
        last_error = None
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                return self._parse(self._post(body), len(pairs))
            except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError, KeyError) as error:
                last_error = error
                if isinstance(error, urllib.error.HTTPError) and 400 <= error.code < 500 and error.code != 429:
                    break  # our request is wrong: retrying will not help
        raise JudgeUnavailable(f"{self.name} failed after {attempt + 1} attempt(s): {last_error}")

    def _post(self, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.loads(response.read())

    @staticmethod
    def _parse(reply: dict, count: int) -> list[Verdict]:
        """Refuse anything but exactly one well-formed verdict per pair (ValueError/KeyError: retried)."""
        content = json.loads(reply["choices"][0]["message"]["content"])
        raw = content["verdicts"]
        if len(raw) != count:
            raise ValueError(f"expected {count} verdicts, got {len(raw)}")
        verdicts = []
        for item in raw:
            relation, confidence = item["relation"], float(item["confidence"])
            if relation not in RELATIONS or not 0 <= confidence <= 1:
                raise ValueError(f"invalid verdict {item!r}")
            verdicts.append(Verdict(relation, confidence, str(item.get("rationale", ""))[:400]))
        return verdicts
