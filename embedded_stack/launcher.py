"""`make run`, `make test` and `make bench`: start what is missing, then serve, run the tests or a benchmark.

    python -m embedded_stack.launcher run     # embedded services, migrations, demo org, web server + RQ worker
    python -m embedded_stack.launcher run --judge vllm-cpu [--model DIR]   # the same, judged by a local vLLM
    python -m embedded_stack.launcher test    # Chromium for browser tests, embedded services, then pytest (extra args)
    python -m embedded_stack.launcher bench remember --n 1000   # embedded services, then `python -m bench ...`
    python -m embedded_stack.launcher manage check              # embedded services, then one manage.py command
    python -m embedded_stack.launcher backup [FILE]             # embedded services, then manage.py backup (no migrate)
    python -m embedded_stack.launcher restore FILE [--database NAME]

DATABASE_URL / REDIS_URL, when set, point at existing servers and the embedded ones are not started.

The web server is uvicorn serving config.asgi (Django on a thread pool, and the MCP endpoint of mcp_server/ beside
it at /mcp) with one process per core (WEB_WORKERS). Against gunicorn (sync and gthread workers) on
this 2-core machine it served as many requests per second at 16 clients or more, and it is an ASGI server (README,
Benchmarks).
"""
import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from config import settings
from embedded_stack.processes import EmbeddedPostgres, EmbeddedRedis, say

MANAGE = [sys.executable, str(settings.BASE_DIR / "manage.py")]
# telemetry.worker.Worker is RQ's SimpleWorker, which runs jobs in the worker process itself, so the embedding model
# of the embedded judge is loaded once, not in a fresh fork for every job; it measures each job. The scheduler moves a failed review back to the queue after its retry interval
# (JUDGE_RETRY_INTERVALS): without it, a retry with a delay would wait forever in RQ's scheduled registry.
WORKER_ARGS = ["rqworker", "default", "--worker-class", "telemetry.worker.Worker", "--with-scheduler"]
DEMO_TOKEN_FILE = settings.DATA_DIR / "demo-token"
METRICS_TOKEN_FILE = settings.DATA_DIR / "metrics-token"


class Services:
    """The embedded servers this process started, so that it stops exactly those."""

    def __init__(self) -> None:
        self.started: list = []

    def up(self) -> None:
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        if "DATABASE_URL" in os.environ:
            say("DATABASE_URL is set: using that Postgres")
        else:
            postgres = EmbeddedPostgres(settings.DATA_DIR, settings.EMBEDDED_PG_PORT)
            if postgres.start():
                self.started.append(postgres)
            if postgres.is_ours():
                postgres.provision(settings.DATABASE_URL, settings.DATABASE_OWNER_URL)
            else:
                say(f"the Postgres on port {settings.EMBEDDED_PG_PORT} runs from another checkout's data directory: "
                    "using it as it is (set ZM_PG_PORT for a separate one)")
        if "REDIS_URL" in os.environ:
            say("REDIS_URL is set: using that Redis")
        else:
            redis = EmbeddedRedis(settings.DATA_DIR, settings.EMBEDDED_REDIS_PORT)
            if redis.start():
                self.started.append(redis)

    def down(self) -> None:
        for service in reversed(self.started):
            service.stop()
        self.started.clear()


def _demo_token() -> str:
    """Reuse the demo admin token of an earlier run while it still works; otherwise bootstrap a new one."""
    if DEMO_TOKEN_FILE.exists():
        token = DEMO_TOKEN_FILE.read_text().strip()
        check = subprocess.run([*MANAGE, "check_token", token], capture_output=True, text=True)
        if check.returncode == 0:
            say("demo organization exists: reusing its admin token")
            return token
    say("bootstrapping the demo organization (org 'demo', admin demo@example.com, project 'demo')")
    result = subprocess.run(
        [*MANAGE, "bootstrap", "--org", "demo", "--admin", "demo@example.com", "--project", "demo"],
        check=True, capture_output=True, text=True,
    )
    token = json.loads(result.stdout.strip().splitlines()[-1])["token"]
    DEMO_TOKEN_FILE.write_text(token + "\n")
    DEMO_TOKEN_FILE.chmod(0o600)
    return token


def metrics_env() -> dict[str, str]:
    """Every process of `make run` writes its metrics to one fresh directory, which /metrics adds up; the scrape
    token is made once and kept with the data (METRICS_TOKEN, when set, wins)."""
    directory = settings.DATA_DIR / "metrics"
    shutil.rmtree(directory, ignore_errors=True)  # the files of processes that are gone would count as live
    directory.mkdir(parents=True)
    token = os.environ.get("METRICS_TOKEN")
    if not token:
        if not METRICS_TOKEN_FILE.exists():
            METRICS_TOKEN_FILE.write_text(secrets.token_urlsafe(24) + "\n")
            METRICS_TOKEN_FILE.chmod(0o600)
        token = METRICS_TOKEN_FILE.read_text().strip()
    return {"PROMETHEUS_MULTIPROC_DIR": str(directory), "METRICS_TOKEN": token}


def web_workers() -> int:
    """WEB_WORKERS, else one per core this process may run on."""
    return int(os.environ.get("WEB_WORKERS") or len(os.sched_getaffinity(0)))


def server_command(host: str, port: int, workers: int) -> list[str]:
    """The production web server of `make run`; `make bench ARGS=http` starts this very command."""
    return [
        sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", host, "--port", str(port),
        "--workers", str(workers),
        "--lifespan", "on",  # each worker loads and warms the embedding model before its first request
        "--no-access-log",  # telemetry/middleware.py logs each request, with its request id
        "--timeout-graceful-shutdown", "10",
    ]


def server_env(workers: int) -> dict[str, str]:
    """The server's environment: the onnxruntime threads of a worker share the cores with the other workers."""
    env = dict(os.environ)
    env.setdefault("EMBEDDING_THREADS", str(max(1, len(os.sched_getaffinity(0)) // workers)))
    return env


def wait_until_serving(url: str, server: subprocess.Popen, timeout: float = 120) -> None:
    """Until GET url answers (a worker has warmed its model and accepts requests); fails if the server exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the web server exited with {server.returncode} while starting")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError as error:
            if error.code == 503:  # ours, answering: Postgres or Redis is down, and /healthz says which
                return
            time.sleep(0.3)  # another server on the port: ours fails to bind and exits, which the loop sees
        except OSError:  # refused while it starts
            time.sleep(0.3)
    raise RuntimeError(f"the web server did not answer {url} within {timeout:.0f} s")


def reap(child: subprocess.Popen) -> None:
    """Wait for a child that was sent SIGTERM; SIGKILL its whole process group (a server's workers too) after 15 s."""
    try:
        child.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def run(args: list[str] = ()) -> int:
    options = _run_options(args)
    services = Services()
    children: list[subprocess.Popen] = []
    judge = None

    def shut_down(*_args) -> None:
        raise KeyboardInterrupt

    # Explicit handlers: a shell starts background jobs with SIGINT ignored, and `kill -INT` must still work.
    signal.signal(signal.SIGTERM, shut_down)
    signal.signal(signal.SIGINT, shut_down)
    try:
        services.up()
        say("applying migrations as the owner role")
        subprocess.run([*MANAGE, "migrate", "--database", "owner", "--no-input", "-v", "0"], check=True)
        subprocess.run([*MANAGE, "embeddings"], check=True)
        token = _demo_token()
        host, port = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8000"))
        workers = web_workers()
        os.environ.update(metrics_env())  # for every child below
        if options.judge == "vllm-cpu":
            from embedded_stack import vllm_cpu  # here: it imports serving, which imports this module

            judge = vllm_cpu.judge_server(options.model)
            os.environ.update(vllm_cpu.judge_environment(judge))
        children.append(subprocess.Popen([*MANAGE, *WORKER_ARGS], start_new_session=True))
        # The outbox: reviews recorded while Redis was unreachable are queued once it answers again.
        children.append(subprocess.Popen([*MANAGE, "hygiene_flush", "--every", "30"], start_new_session=True))
        say(f"starting the web server: uvicorn, {workers} worker{'s' * (workers > 1)} x {settings.WEB_THREADS} threads, "
            "pooled database connections")
        server = subprocess.Popen(
            server_command(host, port, workers), env=server_env(workers), cwd=settings.BASE_DIR,
            start_new_session=True,
        )
        children.append(server)
        url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
        wait_until_serving(f"{url}/healthz", server)
        say("ready")
        sign_in = subprocess.run([*MANAGE, "sign_in_link", "--org", "demo", "--email", "demo@example.com"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        print(
            f"\n  web:        {url}/  (sign in once with: {sign_in} )\n"
            f"  API:        {url}/api/v1/  (health: /healthz, schema: /api/schema/)\n"
            f"  MCP:        {url}/mcp  (streamable HTTP; send the same token as 'Authorization: Bearer ...')\n"
            f"  metrics:    curl -H 'Authorization: Bearer {os.environ['METRICS_TOKEN']}' {url}/metrics\n"
            f"  demo token: {token}\n"
            f"  try:        curl -H 'Authorization: Bearer {token}' {url}/api/v1/me\n"
            + (f"  judge:      vLLM {judge.api_url} ({judge.served_name})\n" if judge else "") +
            f"  data:       {settings.DATA_DIR}\n"
            "  Ctrl-C stops everything this command started; the data stays for the next run.\n",
            flush=True,
        )
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
        say("a child process exited; shutting down")
        return 1
    except KeyboardInterrupt:
        return 0
    except subprocess.CalledProcessError as error:
        say(f"failed: {' '.join(map(str, error.cmd))} exited with {error.returncode}")
        return 1
    except RuntimeError as error:
        say(f"failed: {error}")
        return 1
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            reap(child)
        if judge:
            judge.stop()
        services.down()


def _run_options(args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make run", description="the stack on embedded services")
    parser.add_argument("--judge", choices=["embedded", "vllm-cpu"], default="embedded",
                        help="vllm-cpu: the worker judges with a vLLM server started here (embedded_stack/vllm_cpu.py)")
    parser.add_argument("--model", help="a Hugging Face model directory for vllm-cpu (default: a tiny test model)")
    return parser.parse_args(args)


# The browser tests (tests/browser) drive Debian's Chromium through Playwright; never a browser download.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_PACKAGE = "chromium"


def chromium_missing_message() -> str:
    return (f"{CHROMIUM} is missing: the browser tests need Debian's package '{CHROMIUM_PACKAGE}' "
            f"(as root: apt-get install -y {CHROMIUM_PACKAGE})")


def ensure_chromium() -> bool:
    """Install Debian's Chromium for the browser tests where it is missing: as root with apt-get, otherwise say
    which package to install and answer False (the caller stops)."""
    if os.path.exists(CHROMIUM):
        return True
    if os.geteuid() != 0:
        say(f"{chromium_missing_message()}; run `make test` as root once, or install it, then again")
        return False
    say(f"installing Debian's '{CHROMIUM_PACKAGE}' for the browser tests (apt-get, first time: a few minutes)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", CHROMIUM_PACKAGE]):
        if subprocess.run(command, env=env).returncode != 0:
            say(f"failed: {' '.join(command)}; {chromium_missing_message()}")
            return False
    return os.path.exists(CHROMIUM)


def test(pytest_args: list[str]) -> int:
    if not ensure_chromium():
        return 1
    services = Services()
    try:
        services.up()
        subprocess.run([*MANAGE, "embeddings"], check=True)
        say("running the test suite")
        return subprocess.run([sys.executable, "-m", "pytest", *pytest_args]).returncode
    finally:
        services.down()


def manage(args: list[str]) -> int:
    """One manage.py command against the embedded services, started only for it if needed."""
    return _with_services([*MANAGE, *args])


def bench(args: list[str]) -> int:
    """One benchmark (`python -m bench ...`) against the embedded services, started only for it if needed."""
    return _with_services([sys.executable, "-m", "bench", *args])


def _with_services(command: list[str], *, prepare: bool = True) -> int:
    """`prepare`: migrate and make the embedding model first (not for backups: they take the database as it is)."""
    services = Services()
    try:
        services.up()
        if prepare:
            subprocess.run([*MANAGE, "migrate", "--database", "owner", "--no-input", "-v", "0"], check=True)
            subprocess.run([*MANAGE, "embeddings"], check=True)
        return subprocess.run(command, cwd=settings.BASE_DIR).returncode
    finally:
        services.down()


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["run"]
    if command == "run":
        sys.exit(run(rest))
    if command == "test":
        sys.exit(test(rest))
    if command == "manage":
        sys.exit(manage(rest))
    if command == "bench":
        sys.exit(bench(rest))
    if command in ("backup", "restore"):  # embedded_stack/backup.py, through the manage.py commands of the same names
        sys.exit(_with_services([*MANAGE, command, *rest], prepare=False))
    sys.exit(f"unknown command {command!r}: use run, test, bench, manage, backup or restore")
