"""The layers of docs/ARCHITECTURE.md are enforced, not hoped for: import-linter's contracts (pyproject.toml) hold on
the tree, and an import that runs back up (memory importing hygiene) breaks them."""
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, env={"PYTHONPATH": str(tree)},
                          capture_output=True, text=True, timeout=120)


def copy_of_the_packages(to: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", to)
    for package in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]:
        shutil.copytree(ROOT / package, to / package, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    return to


def test_every_layer_imports_only_the_layers_below_it():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_an_import_that_runs_back_up_breaks_the_build(tmp_path):
    tree = copy_of_the_packages(tmp_path)
    selectors = tree / "memory" / "selectors.py"
    selectors.write_text(selectors.read_text() + "\nfrom hygiene import services  # noqa\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "0 kept, 1 broken" in result.stdout
    assert "memory.selectors -> hygiene.services" in result.stdout
