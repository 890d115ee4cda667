"""Lesson 14's Kubernetes manifests validate against the API schema offline, a broken one fails
with its document named, and the GPU requests are what the lesson says."""

from __future__ import annotations

import pytest
import yaml

from course.distributed import manifests


@pytest.mark.parametrize("name", ["server", "trainer"])
def test_the_shipped_manifests_are_valid(name):
    lines = manifests.check(name)
    assert len(lines) == 2 and all("valid against Kubernetes" in line for line in lines)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("containerPort: 8000", "containerport: 8000"),  # a misspelt field (strict mode)
        ("replicas: 4", "replicas: four"),  # a wrong type
    ],
)
def test_a_broken_manifest_fails_naming_its_document(old, new):
    broken = manifests.text("server").replace(old, new)
    with pytest.raises(ValueError, match="Deployment/llm-server is not valid"):
        manifests.check(broken)


def _gpus(name: str) -> list[int]:
    out = []
    for doc in yaml.safe_load_all(manifests.text(name)):
        spec = doc["spec"].get("template", {}).get("spec", {})
        pods = doc["spec"].get("replicas", doc["spec"].get("parallelism", 1))
        for c in spec.get("containers", []):
            out.append(pods * int(c["resources"]["limits"]["nvidia.com/gpu"]))
    return out


def test_gpu_requests():
    assert _gpus("server") == [4]  # 4 replicas x 1 GPU
    assert _gpus("trainer") == [16]  # 2 pods x 8 GPUs, started together or not at all
