"""`make run`'s web server on a spare port, for the tests and the benchmarks that need the served stack.

    with served(env, workers=2, log_path=DATA_DIR / "bench-http-server.log") as port:
        ...  # http://127.0.0.1:{port}/ answers

server_process does the same on a given port and yields the server's process (its pid, for its memory, say).

The command, its environment and the wait are embedded_stack.launcher's (server_command, server_env,
wait_until_serving, reap): what is measured or tested is the very server `make run` starts.
"""
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from config import settings
from embedded_stack.launcher import reap, server_command, wait_until_serving


def spare_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now (the system picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def server_process(env: dict[str, str], port: int, workers: int = 1,
                   log_path: Path | None = None) -> Iterator[subprocess.Popen]:
    """The web server of `make run` (server_command, with `workers` processes and the environment `env`, e.g. from
    launcher.server_env) on `port` of 127.0.0.1; yields its process once /healthz answers, stops it (its workers too)
    after. Its output goes to `log_path`, or to this process's output."""
    log = open(log_path, "w") if log_path is not None else None
    try:
        server = subprocess.Popen(server_command("127.0.0.1", port, workers), env=env, cwd=settings.BASE_DIR,
                                  stdout=log, stderr=subprocess.STDOUT if log else None, start_new_session=True)
    finally:
        if log is not None:
            log.close()  # the server has its own copy of the file
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", server)
        yield server
    finally:
        server.terminate()
        reap(server)


@contextmanager
def served(env: dict[str, str], workers: int = 1, log_path: Path | None = None,
           port: int | None = None) -> Iterator[int]:
    """server_process on `port` (a spare one by default); yields the port."""
    port = port or spare_port()
    with server_process(env, port, workers, log_path):
        yield port
