"""The GPU guards, with the device faked (no GPU here): a T4 (compute capability 7.5) against an
H100 (9.0), through the guards and through the sweeps and the Triton setup that use them."""

import pytest
import torch

from course.measure import gpu_guards, kernels, matmul
from course.measure import triton_kernels as tk

TWO_T4S_TOPO = (
    "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tPHB\t0-3\t0\t\tN/A\n"
    "GPU1\tPHB\t X \t0-3\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n"
)
NVLINKED_TOPO = TWO_T4S_TOPO.replace("PHB", "NV18")


def fake_gpu(monkeypatch, capability, name, count=1):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)


@pytest.fixture
def t4(monkeypatch):
    fake_gpu(monkeypatch, (7, 5), "Tesla T4")


@pytest.fixture
def h100(monkeypatch):
    fake_gpu(monkeypatch, (9, 0), "NVIDIA H100 80GB HBM3")


@pytest.mark.parametrize(("feature", "since"), [("tf32", "8.0"), ("bf16", "8.0"), ("fp8", "8.9")])
def test_a_t4_lacks_each_tensor_core_dtype_and_says_from_which_capability(t4, feature, since):
    reason = gpu_guards.lacks(feature, "cuda")
    assert "Tesla T4 (compute capability 7.5)" in reason
    assert f"compute capability {since}+" in reason


def test_an_h100_lacks_nothing_and_the_cpu_is_never_guarded(h100):
    assert gpu_guards.report("cuda") == []
    assert gpu_guards.tensor_core_dtype("cuda") == "bf16"
    assert gpu_guards.lacks("bf16", "cpu") == ""


def test_the_t4s_tensor_core_dtype_is_fp16(t4):
    assert gpu_guards.tensor_core_dtype("cuda") == "fp16"
    assert gpu_guards.matmul_dtype("fp16", "cuda") == ""
    assert "FP8" in gpu_guards.matmul_dtype("fp8_e5m2", "cuda")


def test_an_unknown_feature_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match="feature must be one of tf32, bf16"):
        gpu_guards.lacks("fp4")


def test_a_t4_sweep_skips_tf32_bf16_and_fp8_with_the_reason(t4):
    sweep = matmul.matmul_sweep([64], dtypes=("tf32", "bf16", "fp8_e4m3"), devices=("cuda",))
    assert sweep.records == []
    assert len(sweep.skipped) == 3
    assert all("Tesla T4 (compute capability 7.5) has no" in s for s in sweep.skipped)


def test_a_t4_batching_sweep_refuses_bf16_and_names_fp16(t4):
    with pytest.raises(ValueError, match="bf16 Tensor Cores.*use fp16"):
        kernels.batching_sweep(64, (1, 2), dtype="bf16", device="cuda")


def test_triton_3_3_and_later_is_guarded_on_a_t4_not_on_an_h100(monkeypatch):
    fake_gpu(monkeypatch, (7, 5), "Tesla T4")
    assert "Triton 3.5.1" in gpu_guards.triton_unsupported("cuda", "3.5.1")
    assert gpu_guards.triton_unsupported("cuda", "3.2.0") == ""
    fake_gpu(monkeypatch, (9, 0), "NVIDIA H100 80GB HBM3")
    assert gpu_guards.triton_unsupported("cuda", "3.7.1") == ""


def test_triton_setup_runs_the_interpreter_on_a_gpu_triton_does_not_support(monkeypatch, t4):
    monkeypatch.setattr(tk, "_STATE", {})
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # restored after the test
    monkeypatch.setattr(gpu_guards, "triton_unsupported", lambda device: "too old, say why")
    status = tk.setup()
    assert tk.device() == "cpu"
    assert status.endswith("(too old, say why)") or "not available" in status


def test_two_t4s_are_joined_by_pcie_not_nvlink():
    assert gpu_guards.gpu_link(0, 1, TWO_T4S_TOPO).startswith("PCIe (PHB")
    assert "not NVLink" in gpu_guards.no_nvlink(0, 1, TWO_T4S_TOPO)
    assert gpu_guards.gpu_link(0, 1, NVLINKED_TOPO) == "NVLink (NV18)"
    assert gpu_guards.no_nvlink(0, 1, NVLINKED_TOPO) == ""
    assert gpu_guards.gpu_link(0, 1, "") == ""


def test_kaggles_two_t4s_report_every_guard(monkeypatch):
    fake_gpu(monkeypatch, (7, 5), "Tesla T4", count=2)
    monkeypatch.setattr(gpu_guards.devices, "nvidia_smi", lambda args=(): TWO_T4S_TOPO)
    monkeypatch.setattr(gpu_guards, "triton_unsupported", lambda device="cuda": "triton: too old")
    found = gpu_guards.report("cuda")
    assert len(found) == 6  # tf32, bf16, fp8, FlashAttention, Triton, NVLink
    assert any("FlashAttention" in line for line in found)
    assert any("not NVLink" in line for line in found)
    assert len(gpu_guards.report("cuda:1")) == 5  # the link is reported once, with GPU 0
