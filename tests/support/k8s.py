"""What the tests of k8s/ and of the Dockerfile both read: the app's containers in rendered manifests, and the
environment variables the settings read and the README documents."""
import re
from pathlib import Path

from k8s.render import pod_spec, split_image

ROOT = Path(__file__).resolve().parents[2]
APP_IMAGE = "zero-memory"  # the repository name the manifests use; overlays rename it (images:)
WORKLOADS = {"Deployment", "StatefulSet", "Job", "CronJob"}


def settings_variables() -> set[str]:
    """Every environment variable the settings (and the launcher: WEB_WORKERS, HOST, PORT) read."""
    pattern = re.compile(r'(?:os\.environ(?:\.get|\.setdefault)?[\[(]\s*|_env_bool\()"([A-Z_0-9]+)"')
    names: set[str] = set()
    for module in ("config/settings.py", "embedded_stack/launcher.py"):
        names |= set(pattern.findall((ROOT / module).read_text()))
    return names


def readme_variables() -> set[str]:
    """The names in the first column of the README's Configuration table."""
    section = (ROOT / "README.md").read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([A-Z_0-9]+)`", line.split("|")[1]))
    return names


def app_containers(resources: list[dict]) -> list[tuple[dict, dict]]:
    """(workload, container) for every container, init containers too, that runs the app's image."""
    found = []
    for resource in resources:
        spec = pod_spec(resource) if resource["kind"] in WORKLOADS else None
        for container in (spec or {}).get("initContainers", []) + (spec or {}).get("containers", []):
            if split_image(container["image"])[0].rsplit("/", 1)[-1] == APP_IMAGE:
                found.append((resource, container))
    return found
