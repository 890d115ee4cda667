"""The launcher on GPUs, faked (no GPU here): Kaggle's two T4s get NCCL, with gloo beside it for CPU
tensors, one GPU per rank, and records that name the PCIe link instead of NVLink."""

import torch
import torch.distributed as dist

from course.distributed import launch
from course.measure import gpu_guards

TWO_T4S_TOPO = (
    "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tPHB\t0-3\t0\t\tN/A\n"
    "GPU1\tPHB\t X \t0-3\t0\t\tN/A\n"
)


def two_gpus(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)


def test_as_many_gpus_as_ranks_picks_nccl_fewer_picks_gloo(monkeypatch):
    two_gpus(monkeypatch)
    assert launch.backend(2) == "nccl"
    assert launch.backend(4) == "gloo"  # 4 ranks on Kaggle's 2 T4s run on the CPU


def test_an_nccl_group_carries_gloo_for_cpu_tensors():
    # a CPU tensor in an NCCL-only group raises; the demos average a CPU loss and broadcast a
    # CPU stop flag, so the group routes CPU tensors to gloo
    assert launch.group_backend("nccl") == "cpu:gloo,cuda:nccl"
    assert launch.group_backend("gloo") == "gloo"


def test_each_rank_of_the_mixed_group_gets_its_own_gpu(monkeypatch):
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_backend", lambda group=None: launch.GPU_BACKENDS)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert launch.device() == torch.device("cuda", 1)
    monkeypatch.setattr(dist, "get_backend", lambda group=None: "gloo")
    assert launch.device() == torch.device("cpu")


def test_the_transport_names_pcie_between_two_t4s(monkeypatch):
    monkeypatch.setattr(launch, "device", lambda: torch.device("cuda", 0))
    monkeypatch.setattr(gpu_guards.devices, "nvidia_smi", lambda args=(): TWO_T4S_TOPO)
    assert launch.transport().startswith("nccl, PCIe (PHB")
    monkeypatch.setattr(launch, "device", lambda: torch.device("cpu"))
    assert launch.transport() == "gloo, loopback"
