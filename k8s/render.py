"""A small renderer of the kustomize subset that k8s/ uses, so CI can render the overlays without kubectl/kustomize.

Supported kustomization.yaml fields (anything else is an error, never silently ignored):
- ``resources``: YAML files (several documents each) and directories holding a kustomization.yaml (rendered first);
- ``namespace``: set on every namespaced resource (not on Namespace itself);
- ``labels``: ``[{pairs, includeTemplates}]`` added to metadata.labels (and pod templates' with includeTemplates);
  ``includeSelectors: true`` is refused: selectors are written by hand;
- ``images``: ``[{name, newName, newTag}]`` rewrites matching container images of pod templates;
- ``patches``: ``[{path}]`` strategic-merge patches, each naming its target by apiVersion, kind and metadata.name;
- ``configMapGenerator``: ``[{name, files, options: {labels, disableNameSuffixHash: true}}]``, a ConfigMap whose keys
  are the files' names; the name suffix hash must be turned off (this renderer does not compute kustomize's hash).

The strategic merge follows Kubernetes' patch keys for the lists used here (containers, env, volumes, ... by name;
ports by containerPort; volumeMounts by mountPath); other lists are replaced, and a null value deletes a key.
(kustomize patches a custom resource such as the CNPG Cluster as a JSON merge patch: the patches here change
only its maps, where the two agree.)
Usage: python k8s/render.py k8s/overlays/prod  (prints the rendered stream).
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

KNOWN_FIELDS = {"apiVersion", "kind", "resources", "namespace", "labels", "images", "patches", "configMapGenerator"}
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "env": "name", "volumes": "name", "envFrom": None,
    "ports": "containerPort", "volumeMounts": "mountPath", "imagePullSecrets": "name",
}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"}


class RenderError(ValueError):
    pass


def key_of(resource: dict) -> tuple[str, str, str]:
    return resource["apiVersion"], resource["kind"], resource["metadata"]["name"]


def pod_template(resource: dict) -> dict | None:
    """The pod template of a workload (Deployment, StatefulSet, Job, CronJob), else None."""
    spec = resource.get("spec") or {}
    if resource["kind"] == "CronJob":
        spec = spec.get("jobTemplate", {}).get("spec", {})
    return spec.get("template") if isinstance(spec.get("template"), dict) else None


def pod_spec(resource: dict) -> dict | None:
    """The pod template's spec of a workload (Deployment, StatefulSet, Job, CronJob), else None."""
    template = pod_template(resource)
    return template.get("spec") if template else None


def strategic_merge(base: Any, patch: Any, field: str | None = None) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = dict(base)
        for name, value in patch.items():
            if value is None:
                merged.pop(name, None)
            elif name in merged:
                merged[name] = strategic_merge(merged[name], value, name)
            else:
                merged[name] = copy.deepcopy(value)
        return merged
    if isinstance(base, list) and isinstance(patch, list) and MERGE_KEYS.get(field or ""):
        key = MERGE_KEYS[field]
        merged_list = [copy.deepcopy(item) for item in base]
        for item in patch:
            match = next((i for i, old in enumerate(merged_list) if old.get(key) == item.get(key)), None)
            if match is None:
                merged_list.append(copy.deepcopy(item))
            else:
                merged_list[match] = strategic_merge(merged_list[match], item, None)
        return merged_list
    return copy.deepcopy(patch)


def split_image(image: str) -> tuple[str, str | None]:
    """(repository, tag) of an image reference; a digest is dropped, a registry's port stays in the repository."""
    image = image.split("@", 1)[0]
    last = image.rsplit("/", 1)[-1]
    name, _, tag = last.partition(":")
    return image[: len(image) - len(last)] + name, tag or None


def _load_documents(path: Path) -> list[dict]:
    with path.open() as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc]


def generated_config_map(directory: Path, entry: dict) -> dict:
    options = entry.get("options", {})
    if set(entry) - {"name", "files", "options"} or set(options) - {"labels", "disableNameSuffixHash"}:
        raise RenderError(f"{directory}: only configMapGenerator entries with name, files and options are supported")
    if options.get("disableNameSuffixHash") is not True:
        raise RenderError(f"{directory}: configMapGenerator {entry['name']} needs options.disableNameSuffixHash: true")
    metadata = {"name": entry["name"], **({"labels": dict(options["labels"])} if options.get("labels") else {})}
    data = {Path(file).name: (directory / file).read_text() for file in entry["files"]}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def render(directory: str | Path) -> list[dict]:
    directory = Path(directory)
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text()) or {}
    unknown = set(kustomization) - KNOWN_FIELDS
    if unknown:
        raise RenderError(f"{directory}: unsupported kustomization fields {sorted(unknown)}")
    resources: list[dict] = []
    for entry in kustomization.get("resources", []):
        path = directory / entry
        resources += render(path) if path.is_dir() else _load_documents(path)
    resources += [generated_config_map(directory, entry) for entry in kustomization.get("configMapGenerator", [])]
    seen: set[tuple[str, str, str]] = set()
    for resource in resources:
        if key_of(resource) in seen:
            raise RenderError(f"{directory}: {key_of(resource)} defined twice")
        seen.add(key_of(resource))

    for patch_entry in kustomization.get("patches", []):
        if set(patch_entry) != {"path"}:
            raise RenderError(f"{directory}: only file patches ({{path}}) are supported, got {sorted(patch_entry)}")
        for patch in _load_documents(directory / patch_entry["path"]):
            index = next((i for i, r in enumerate(resources) if key_of(r) == key_of(patch)), None)
            if index is None:
                raise RenderError(f"{directory}: patch target {key_of(patch)} not found")
            resources[index] = strategic_merge(resources[index], patch)

    namespace = kustomization.get("namespace")
    for resource in resources:
        if namespace and resource["kind"] == "Namespace" and resource["metadata"]["name"] != namespace:
            # kustomize would rename the Namespace object too; we keep the two equal instead of imitating that.
            raise RenderError(f"{directory}: namespace {namespace} differs from the Namespace resource's name")
        if namespace and resource["kind"] not in CLUSTER_SCOPED:
            resource["metadata"]["namespace"] = namespace

    for label_entry in kustomization.get("labels", []):
        if label_entry.get("includeSelectors") or set(label_entry) - {"pairs", "includeSelectors", "includeTemplates"}:
            raise RenderError(f"{directory}: only labels with pairs and includeTemplates are supported")
        pairs = label_entry["pairs"]
        for resource in resources:
            resource["metadata"].setdefault("labels", {}).update(pairs)
            template = pod_template(resource)
            if label_entry.get("includeTemplates") and template is not None:
                template.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)

    for image in kustomization.get("images", []):
        if set(image) - {"name", "newName", "newTag"}:
            raise RenderError(f"{directory}: only images with name, newName and newTag are supported")
        for resource in resources:
            spec = pod_spec(resource)
            for container in (spec or {}).get("containers", []) + (spec or {}).get("initContainers", []):
                name, tag = split_image(container["image"])
                if name == image["name"]:
                    tag = image.get("newTag", tag)
                    container["image"] = image.get("newName", name) + (f":{tag}" if tag else "")
    return resources


if __name__ == "__main__":
    print(yaml.safe_dump_all(render(sys.argv[1]), sort_keys=False), end="")
