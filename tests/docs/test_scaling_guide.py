"""The scaling guide names files (migrations, manifests, results, its plot): each must exist, or the guide has
drifted from the code."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "scaling.md"


def _named_paths(text: str) -> set[str]:
    links = re.findall(r"\]\((\.\./[^)]+)\)", text)
    mentioned = re.findall(r"(?<![\w./-])((?:[\w-]+/)+[\w.-]+\.(?:py|yaml|md|png))", text)
    return {str((GUIDE.parent / link).resolve().relative_to(ROOT)) for link in links} | set(mentioned)


def test_every_file_the_scaling_guide_names_exists():
    named = _named_paths(GUIDE.read_text())
    assert {"bench-results/load-latency.png", "hygiene/migrations/0007_citus_distribution.py", "k8s/base/web.yaml"} <= named
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_the_result_file_the_guide_quotes_exists():
    results = re.findall(r"bench-results/(load-[\dT+-]+\.json)", GUIDE.read_text())
    assert results and all((ROOT / "bench-results" / name).exists() for name in results)


README = ROOT / "README.md"


def test_every_setting_and_command_is_in_the_readme():
    """A variable config/settings.py reads, or a management command, that the README never names is one a user cannot
    find (several were, until an outside reading of the docs listed them)."""
    settings = (ROOT / "config" / "settings.py").read_text()
    variables = set(re.findall(r'os\.environ\.get\("([A-Z0-9_]+)"', settings)) | set(
        re.findall(r'_env_bool\("([A-Z0-9_]+)"', settings))
    commands = {path.stem for path in ROOT.glob("*/management/commands/*.py") if path.stem != "__init__"}
    assert len(variables) > 40 and {"bootstrap", "hygiene_flush"} <= commands
    readme = README.read_text()
    assert sorted(name for name in variables | commands if f"`{name}" not in readme and f" {name}" not in readme) == []
