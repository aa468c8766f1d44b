"""One client process of the soak (bench/soak.py): plain HTTP on loopback, no Django, so that a process starts in
a fraction of a second. It remembers (with and without supersedes), recalls, forgets and restores its own memories
until its time is up, and returns what each request answered and how long it took."""
import http.client
import json
import random
import time

from bench.texts import synthetic_memory

# (operation, share of the requests); an operation that has nothing to act on yet falls back to remember.
MIX = (("remember", 0.35), ("supersede", 0.15), ("recall", 0.25), ("forget", 0.12), ("restore", 0.13))


def _pick(rng: random.Random) -> str:
    roll = rng.random()
    for operation, share in MIX:
        roll -= share
        if roll < 0:
            return operation
    return MIX[-1][0]


def run_client(port: int, token: str, seconds: float, seed: int, project: str) -> dict:
    """Requests until `seconds` have passed: {"latencies": {op: [ms]}, "statuses": {"op status code": n}}."""
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    live: list[str] = []  # this client's memories as it last saw them (the judge may retire some meanwhile)
    retired: list[str] = []
    latencies: dict[str, list[float]] = {}
    statuses: dict[str, int] = {}
    serial = 0

    def send(operation: str, path: str, body: dict) -> tuple[int, dict]:
        nonlocal connection
        started = time.perf_counter()
        try:
            connection.request("POST", path, body=json.dumps(body), headers=headers)
            response = connection.getresponse()
            status, payload = response.status, response.read()
            reply = json.loads(payload) if payload else {}
        except (OSError, http.client.HTTPException, ValueError) as error:
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status, reply = 0, {"error": {"code": type(error).__name__}}
        latencies.setdefault(operation, []).append((time.perf_counter() - started) * 1000)
        key = f"{operation} {status} {reply.get('error', {}).get('code', '')}".strip()
        statuses[key] = statuses.get(key, 0) + 1
        return status, reply

    def content() -> tuple[str, str]:
        nonlocal serial
        serial += 1
        _, kind, text = synthetic_memory(rng)
        return kind, f"{text} (soak {seed}-{serial})"

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        operation = _pick(rng)
        if operation in ("supersede", "forget") and not live or operation == "restore" and not retired:
            operation = "remember"
        if operation in ("remember", "supersede"):
            kind, text = content()
            body = {"content": text, "kind": kind, "project": project}
            target = live.pop(rng.randrange(len(live))) if operation == "supersede" else None
            if target:
                body["links"] = [{"type": "supersedes", "dst": target, "reason": "soak: a newer version"}]
            status, reply = send(operation, "/api/v1/memories", body)
            if status in (200, 201):
                live.append(reply["memory"]["id"])
                retired.extend(reply.get("superseded", []))
        elif operation == "recall":
            kind, text = content()
            send(operation, "/api/v1/recall", {"query": text.split(" (soak")[0], "k": 5})
        elif operation == "forget":
            target = live.pop(rng.randrange(len(live)))
            status, _ = send(operation, f"/api/v1/memories/{target}/forget", {"reason": "soak"})
            if status == 200:
                retired.append(target)
        else:
            target = retired.pop(rng.randrange(len(retired)))
            status, _ = send(operation, f"/api/v1/memories/{target}/restore", {})
            if status == 200:
                live.append(target)
    connection.close()
    return {"latencies": latencies, "statuses": statuses}
