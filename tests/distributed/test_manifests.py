"""Lesson 14's Kubernetes manifests validate offline against the API's schema and Kueue's and the
device plugin's published formats, a broken one fails with its document named, the Job fits its
Kueue queue, torchrun accepts the trainer's arguments, and every image is built by the
repository's Containerfile from files that exist."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml
from torch.distributed.run import get_args_parser

from course.distributed import manifests

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "container" / "Containerfile"


@pytest.mark.parametrize(
    ("name", "documents"), [("server", 2), ("trainer", 2), ("kueue", 3), ("device-plugin", 1)]
)
def test_the_shipped_manifests_are_valid(name, documents):
    lines = manifests.check(name)
    assert len(lines) == documents and all(": valid against" in line for line in lines)


@pytest.mark.parametrize(
    ("name", "old", "new", "message"),
    [
        ("server", "containerPort: 8000", "containerport: 8000", "Deployment/llm-server"),
        ("server", "replicas: 4", "replicas: four", "Deployment/llm-server"),
        # Kueue: a required field removed, a misspelt field, a value outside the enum
        ("kueue", ", nominalQuota: 16}", "}", "ClusterQueue/gpu-cluster-queue.*'nominalQuota'"),
        ("kueue", "queueingStrategy:", "queuingStrategy:", "ClusterQueue.*queuingStrategy"),
        ("kueue", "StrictFIFO", "FIFO", "ClusterQueue.*'FIFO' is not one of"),
        ("kueue", "nodeLabels:", "nodelabels:", "ResourceFlavor/h100-80gb"),
        # device plugin: replicas required, a MIG strategy, a misspelt key (the plugin ignores it)
        ("device-plugin", "replicas: 4", "", "time-sliced-4.*'replicas' is a required"),
        ("device-plugin", "replicas: 4", "replicas: 1", "time-sliced-4.*1 is less than"),
        ("device-plugin", "migStrategy: mixed", "migStrategy: mix", "mig-mixed.*'mix'"),
        ("device-plugin", "timeSlicing:", "timeslicing:", "time-sliced-4.*timeslicing"),
    ],
)
def test_a_broken_manifest_fails_naming_its_document(name, old, new, message):
    broken = manifests.text(name).replace(old, new)
    assert broken != manifests.text(name)
    with pytest.raises(ValueError, match=message):
        manifests.check(broken)


def _docs(name: str) -> dict[str, dict]:
    return {d["kind"]: d for d in yaml.safe_load_all(manifests.text(name))}


def _pod_specs(name: str):
    for doc in yaml.safe_load_all(manifests.text(name)):
        spec = doc["spec"].get("template", {}).get("spec", {})
        pods = doc["spec"].get("replicas", doc["spec"].get("parallelism", 1))
        for c in spec.get("containers", []):
            yield pods, c


def _quantity(value) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)([KMGT]i)?", str(value)).groups()
    return float(number) * 1024 ** (" KMGT".index(unit[0]) if unit else 0)


def _gpus(name: str) -> list[int]:
    return [p * int(c["resources"]["limits"]["nvidia.com/gpu"]) for p, c in _pod_specs(name)]


def test_gpu_requests():
    assert _gpus("server") == [4]  # 4 replicas x 1 GPU (or 1 time slice)
    assert _gpus("trainer") == [16]  # 2 pods x 8 GPUs, admitted together or not at all


def test_the_trainer_job_fits_its_kueue_queue():
    """The Job's label names the LocalQueue, that names the ClusterQueue, whose flavor exists and
    whose quota covers every resource the Job's pods ask for: else Kueue never admits it."""
    job, kueue = _docs("trainer")["Job"], _docs("kueue")
    local, cluster = kueue["LocalQueue"], kueue["ClusterQueue"]
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == local["metadata"]["name"]
    assert local["spec"]["clusterQueue"] == cluster["metadata"]["name"]
    (group,) = cluster["spec"]["resourceGroups"]
    (flavor,) = group["flavors"]
    assert flavor["name"] == kueue["ResourceFlavor"]["metadata"]["name"]
    quota = {r["name"]: _quantity(r["nominalQuota"]) for r in flavor["resources"]}
    (pods, container), *_ = _pod_specs("trainer")
    for resource, value in container["resources"]["limits"].items():
        assert resource in group["coveredResources"], resource
        assert pods * _quantity(value) <= quota[resource], resource


def test_torchrun_accepts_the_trainers_arguments():
    (_, container), *_ = _pod_specs("trainer")
    assert container["command"] == ["torchrun"]
    args = [a.replace("$(JOB_COMPLETION_INDEX)", "1") for a in container["args"]]
    parsed = get_args_parser().parse_args(args)
    assert (parsed.nnodes, parsed.nproc_per_node, parsed.node_rank) == ("2", "8", 1)
    assert parsed.module and importlib.util.find_spec(parsed.training_script).origin


def _stages() -> dict[str, list[tuple[str, str]]]:
    """The Containerfile's instructions by stage: ``{"base": [("COPY", "..."), ...], ...}``."""
    stages: dict[str, list[tuple[str, str]]] = {}
    text = CONTAINERFILE.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        word, rest = line.split(maxsplit=1)
        if word == "FROM":
            current = stages.setdefault(rest.split()[-1], [])
        current.append((word, rest))
    return stages


def test_every_image_is_a_target_of_the_containerfile():
    stages = _stages()
    assert set(manifests.IMAGES) <= set(stages)
    used = {c["image"] for n in ("server", "trainer") for _, c in _pod_specs(n)}
    assert used == set(manifests.IMAGES.values())
    for target, image in manifests.IMAGES.items():
        assert f"--target {target} -t {image} ." in CONTAINERFILE.read_text()


def test_the_containerfile_copies_files_that_exist_and_installs_the_lock():
    steps = [step for stage in _stages().values() for step in stage]
    copies = [rest.split()[:-1] for word, rest in steps if word == "COPY"]
    assert copies and all((ROOT / src).exists() for srcs in copies for src in srcs)
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    assert "python requirements/install.py requirements/learners.txt" in runs
    assert ["requirements/install.py", "requirements/learners.txt"] in copies


def test_each_targets_entrypoint_is_a_course_module():
    for target, steps in _stages().items():
        command = [
            a for word, rest in steps if word in ("ENTRYPOINT", "CMD") for a in json.loads(rest)
        ]
        if "-m" in command:
            module = command[command.index("-m") + 1]
            assert importlib.util.find_spec(module) is not None, (target, module)
