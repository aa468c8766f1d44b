"""`make run` and `make test`: start what is missing, then serve (with a worker) or run the test suite.

    python -m config.launcher run     # embedded services, migrations, demo org, web server + RQ worker
    python -m config.launcher test    # embedded services, then pytest (extra arguments go to pytest)
    python -m config.launcher manage bench remember --n 1000   # embedded services, then one manage.py command

DATABASE_URL / REDIS_URL, when set, point at existing servers and the embedded ones are not started.
"""
import json
import os
import signal
import subprocess
import sys
import time

from config import settings
from config.services import EmbeddedPostgres, EmbeddedRedis, say

MANAGE = [sys.executable, str(settings.BASE_DIR / "manage.py")]
DEMO_TOKEN_FILE = settings.DATA_DIR / "demo-token"


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


def run() -> int:
    services = Services()
    children: list[subprocess.Popen] = []

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
        port = os.environ.get("PORT", "8000")
        # SimpleWorker runs jobs in the worker process itself, so the embedding model of the embedded judge is
        # loaded once, not in a fresh fork for every job.
        children.append(subprocess.Popen(
            [*MANAGE, "rqworker", "default", "--worker-class", "rq.SimpleWorker"], start_new_session=True
        ))
        # The outbox: reviews recorded while Redis was unreachable are queued once it answers again.
        children.append(subprocess.Popen([*MANAGE, "hygiene_flush", "--every", "30"], start_new_session=True))
        children.append(
            subprocess.Popen([*MANAGE, "runserver", f"127.0.0.1:{port}", "--noreload"], start_new_session=True)
        )
        time.sleep(1.5)
        say("ready")
        print(
            f"\n  API:        http://127.0.0.1:{port}/api/v1/  (health: /healthz, schema: /api/schema/)\n"
            f"  demo token: {token}\n"
            f"  try:        curl -H 'Authorization: Bearer {token}' http://127.0.0.1:{port}/api/v1/me\n"
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
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
        services.down()


def test(pytest_args: list[str]) -> int:
    services = Services()
    try:
        services.up()
        subprocess.run([*MANAGE, "embeddings"], check=True)
        say("running the test suite")
        return subprocess.run([sys.executable, "-m", "pytest", *pytest_args]).returncode
    finally:
        services.down()


def manage(args: list[str]) -> int:
    """One manage.py command (a benchmark, say) against the embedded services, started only for it if needed."""
    services = Services()
    try:
        services.up()
        subprocess.run([*MANAGE, "migrate", "--database", "owner", "--no-input", "-v", "0"], check=True)
        subprocess.run([*MANAGE, "embeddings"], check=True)
        return subprocess.run([*MANAGE, *args]).returncode
    finally:
        services.down()


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["run"]
    if command == "run":
        sys.exit(run())
    if command == "test":
        sys.exit(test(rest))
    if command == "manage":
        sys.exit(manage(rest))
    sys.exit(f"unknown command {command!r}: use run, test or manage")
