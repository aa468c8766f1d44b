"""The kustomize subset of k8s/render.py, on small kustomizations written here (tests/k8s/test_manifests.py renders k8s/)."""
from pathlib import Path

import pytest
import yaml

from k8s.render import RenderError, render, split_image, strategic_merge

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"a": "1"}},
    "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "containers": [
                {"name": "web", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                 "ports": [{"containerPort": 8000, "name": "http"}]},
                {"name": "side", "image": "registry:5000/side@sha256:abc"},
            ],
        }},
    },
}


def write(folder: Path, files: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        docs = content if isinstance(content, list) else [content]
        (folder / name).write_text(yaml.safe_dump_all(docs))
    return folder


def test_strategic_merge_merges_named_lists_replaces_others_and_deletes_nulls():
    patch = {"metadata": {"labels": {"a": None, "b": "2"}}, "spec": {"replicas": 5, "template": {"spec": {
        "containers": [{"name": "web", "env": [{"name": "B", "value": "changed"}, {"name": "C", "value": "3"}],
                        "args": ["x"]},
                       {"name": "new", "image": "new:1"}],
    }}}}
    merged = strategic_merge(DEPLOYMENT, patch)
    assert merged["metadata"]["labels"] == {"b": "2"}
    assert merged["spec"]["replicas"] == 5
    containers = merged["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "side", "new"]
    assert containers[0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "changed"},
                                    {"name": "C", "value": "3"}]
    assert containers[0]["args"] == ["x"] and containers[0]["image"] == "app:1"
    assert DEPLOYMENT["spec"]["replicas"] == 2  # the base is not modified
    # A list without a patch key is replaced whole.
    assert strategic_merge({"args": ["a", "b"]}, {"args": ["c"]}) == {"args": ["c"]}


def test_split_image_keeps_the_registry_port_and_drops_digests():
    assert split_image("registry:5000/team/app:1.2") == ("registry:5000/team/app", "1.2")
    assert split_image("app") == ("app", None)
    assert split_image("registry:5000/side@sha256:abc") == ("registry:5000/side", None)


def test_render_applies_resources_patches_namespace_labels_and_images(tmp_path):
    write(tmp_path / "base", {
        "kustomization.yaml": {"resources": ["app.yaml"], "labels": [{"pairs": {"part": "x"}, "includeTemplates": True}]},
        "app.yaml": [DEPLOYMENT, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}],
    })
    write(tmp_path / "extra", {
        "kustomization.yaml": {"resources": ["cm.yaml"]},
        "cm.yaml": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"K": "v"}},
    })
    overlay = write(tmp_path / "overlay", {
        "kustomization.yaml": {
            "namespace": "ns", "resources": ["../base", "../extra"], "patches": [{"path": "p.yaml"}],
            "images": [{"name": "app", "newName": "reg.example/app", "newTag": "2"},
                       {"name": "registry:5000/side", "newTag": "3"}],
        },
        "p.yaml": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"K": "w"}},
                   {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 1}}],
    })
    rendered = {(r["kind"], r["metadata"]["name"]): r for r in render(overlay)}
    web, cm, ns = rendered["Deployment", "web"], rendered["ConfigMap", "cm"], rendered["Namespace", "ns"]
    assert web["metadata"]["namespace"] == cm["metadata"]["namespace"] == "ns"
    assert "namespace" not in ns["metadata"]  # cluster-scoped
    assert web["spec"]["replicas"] == 1 and cm["data"] == {"K": "w"}
    assert web["metadata"]["labels"] == {"a": "1", "part": "x"}
    assert web["spec"]["template"]["metadata"]["labels"] == {"app": "web", "part": "x"}
    assert web["spec"]["selector"] == {"matchLabels": {"app": "web"}}  # never touched
    assert "labels" not in cm["metadata"]  # the base's labels apply to the base's resources only
    images = [c["image"] for c in web["spec"]["template"]["spec"]["containers"]]
    assert images == ["reg.example/app:2", "registry:5000/side:3"]


def test_render_generates_config_maps_from_files(tmp_path):
    folder = write(tmp_path, {"kustomization.yaml": {
        "labels": [{"pairs": {"part": "x"}}],
        "configMapGenerator": [{"name": "dash", "files": ["board.json"],
                                "options": {"labels": {"shown": "1"}, "disableNameSuffixHash": True}}],
    }})
    (folder / "board.json").write_text('{"panels": []}\n')
    [generated] = render(folder)
    assert generated == {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "dash", "labels": {"shown": "1", "part": "x"}},
                         "data": {"board.json": '{"panels": []}\n'}}


@pytest.mark.parametrize("kustomization, message", [
    ({"resources": ["a.yaml"], "secretGenerator": []}, "unsupported kustomization fields"),
    ({"resources": ["a.yaml"], "configMapGenerator": [{"name": "d", "files": ["a.yaml"]}]}, "disableNameSuffixHash"),
    ({"resources": ["a.yaml"], "configMapGenerator": [{"name": "d", "literals": ["a=b"]}]}, "only configMapGenerator"),
    ({"resources": ["a.yaml"], "labels": [{"pairs": {"x": "y"}, "includeSelectors": True}]}, "only labels"),
    ({"resources": ["a.yaml"], "images": [{"name": "app", "digest": "sha256:1"}]}, "only images"),
    ({"resources": ["a.yaml"], "patches": [{"patch": "x", "target": {"kind": "Deployment"}}]}, "only file patches"),
    ({"resources": ["a.yaml"], "patches": [{"path": "missing-target.yaml"}]}, "patch target"),
    ({"resources": ["a.yaml", "a.yaml"]}, "defined twice"),
    ({"resources": ["a.yaml", "ns.yaml"], "namespace": "other"}, "differs from the Namespace"),
])
def test_render_refuses_what_it_does_not_implement(tmp_path, kustomization, message):
    write(tmp_path, {
        "kustomization.yaml": kustomization, "a.yaml": DEPLOYMENT,
        "ns.yaml": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
        "missing-target.yaml": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nope"}},
    })
    with pytest.raises(RenderError, match=message):
        render(tmp_path)
