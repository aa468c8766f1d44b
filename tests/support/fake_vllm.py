"""A small local OpenAI-compatible server standing in for vLLM (no GPU or weights here).

It checks each request the way vLLM's /v1/chat/completions would see it (model, messages, a json_schema
response_format) and answers with the verdicts a test asks for.
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeVllm:
    def __init__(self, model: str = "test-judge", response_format: str = "json_schema") -> None:
        self.model, self.response_format = model, response_format  # the dialect of structured output it accepts
        self.requests: list[dict] = []
        self.verdict = {"relation": "supersedes", "confidence": 0.95, "rationale": "newer value"}
        self.content: str | None = None  # answer exactly this text instead of the verdicts (vLLM's quirks)
        self.finish_reason = "stop"  # "length": the answer was cut at max_tokens
        self.fail_next = 0  # answer this many requests with 503 first
        self.delay = 0.0  # wait this long before answering (a slow or hung judge); close() ends the wait
        self.received = threading.Event()  # set when a request arrives: a worker is in the middle of a review
        self.in_flight = self.max_in_flight = 0  # concurrent requests being answered now, and the most seen at once
        self._count = threading.Lock()
        self._closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                with server._count:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                return self._answer()

            def do_GET(self):  # noqa: N802 - vLLM's /health: 200 and no body while the server is up
                with server._count:
                    server.in_flight += 1
                if self.path != "/health":
                    return self._send(404, {"error": f"unknown path {self.path}"})
                return self._send(200, {})

            def _answer(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                server.received.set()
                if server.delay and server._closing.wait(server.delay):
                    return None  # closing: the client has long given up
                if server.fail_next:
                    server.fail_next -= 1
                    return self._send(503, {"error": "overloaded"})
                problem = server.check(self.path, body)
                if problem:
                    return self._send(400, {"error": problem})
                count = len(json.loads(body["messages"][-1]["content"]))
                content = server.content or json.dumps({"verdicts": [server.verdict] * count})
                self._send(200, {"choices": [{"index": 0, "finish_reason": server.finish_reason,
                                              "message": {"role": "assistant", "content": content}}]})

            def _send(self, status: int, payload: dict) -> None:
                # Out of flight before the answer leaves: the client may send its next request as soon as it has it.
                with server._count:
                    server.in_flight -= 1
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def check(self, path: str, body: dict) -> str | None:
        if path != "/v1/chat/completions":
            return f"unknown path {path}"
        if body.get("model") != self.model:
            return f"unknown model {body.get('model')!r}"
        response_format = body.get("response_format", {})
        if response_format.get("type") != self.response_format:
            return f"expected a {self.response_format} response_format"
        nested = response_format.get("json_schema", {}) if self.response_format == "json_schema" else response_format
        if "verdicts" not in nested.get("schema", {}).get("properties", {}):
            return "expected a response_format schema with verdicts"
        if [m["role"] for m in body.get("messages", [])] != ["system", "user"]:
            return "expected a system and a user message"
        return None

    def close(self) -> None:
        self._closing.set()
        self.httpd.shutdown()
