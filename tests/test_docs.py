"""The scaling guide names files (migrations, manifests, results, its plot): each must exist, or the guide has
drifted from the code."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
