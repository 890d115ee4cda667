"""Offload cost model (course/calculators/offload.py): ZeRO-Offload's memory split and link
times."""

from __future__ import annotations

import pytest

from course.calculators import offload
from course.facts import hardware
from course.facts.data import reference
from course.facts.models import PRESETS, preset


def test_zero_offload_fits_13b_model_states_on_a_32gb_v100():
    # Ren et al. 2021 (ZeRO-Offload): 13B parameters trained on one 32 GB V100; the GPU keeps only
    # the fp16 weights (2 B/param).
    cost = offload.optimizer_offload(13e9, compute_seconds=10, cpu_seconds_per_param=1e-9)
    assert cost.gpu_states_with_offload_bytes == 26e9 < hardware.gpu("v100-sxm2-32gb").memory_bytes
    assert cost.gpu_states_without_offload_bytes == 208e9
    assert cost.cpu_states_bytes == 16 * 13e9
    assert cost.link_traffic_bytes == 4 * 13e9


def test_link_time_uses_the_registry_and_measured_bandwidths():
    pcie5 = offload.optimizer_offload(1e9, compute_seconds=1, cpu_seconds_per_param=0)
    assert pcie5.link_time_seconds == pytest.approx(
        4e9 / hardware.INTERCONNECTS["pcie5"].bandwidth_bytes_per_s
    )
    c2c = offload.optimizer_offload(
        1e9, link="nvlink-c2c", compute_seconds=1, cpu_seconds_per_param=0
    )
    assert c2c.link_time_seconds < pcie5.link_time_seconds / 7 * 1.01
    measured = offload.optimizer_offload(1e9, link=55e9, compute_seconds=1, cpu_seconds_per_param=0)
    assert measured.link_time_seconds == pytest.approx(4e9 / 55e9)


def test_reference_run_measured_about_55_gb_s_pinned_host_to_device():
    data = reference.load(reference.H100, "bandwidth")
    rows = [
        r
        for rows in data.values()
        if isinstance(rows, list)
        for r in rows
        if isinstance(r, dict) and r.get("pinned") is True
    ]
    assert rows, "the reference run has pinned host<->device copies"
    best = max(r["bytes_per_s"] for r in rows)
    assert 50e9 < best < hardware.INTERCONNECTS["pcie5"].bandwidth_bytes_per_s


def test_overlap_hides_offloaded_work_but_never_below_the_longer_part():
    kw = dict(compute_seconds=1.0, cpu_seconds_per_param=1e-9)
    serial = offload.optimizer_offload(1e9, overlap=0, **kw)
    hidden = offload.optimizer_offload(1e9, overlap=1, **kw)
    assert serial.step_seconds == pytest.approx(1 + serial.link_time_seconds + 1.0)
    assert hidden.step_seconds == pytest.approx(max(1.0, hidden.link_time_seconds + 1.0))
    assert hidden.slowdown <= serial.slowdown


def test_streaming_7b_weights_over_pcie5_is_about_50x_slower_than_hbm():
    s = offload.weight_streaming(preset("llama-2-7b").params, dtype="bf16", link="pcie5")
    assert s.over_link_seconds == pytest.approx(13.48e9 / 63e9, rel=0.01)
    assert s.from_gpu_memory_seconds == pytest.approx(13.48e9 / 3.35e12, rel=0.01)
    assert 45 < s.slowdown < 60


def test_c2c_streams_offloaded_memory_7x_faster_than_pcie5():
    cfg = PRESETS["llama-2-70b"]
    pcie = offload.offload_decode_step(cfg, gpu="h100-sxm")
    c2c = offload.offload_decode_step(cfg, gpu="gh200-96gb")
    assert pcie.link_bandwidth_bytes_per_s == pytest.approx(63e9)
    assert c2c.link_bandwidth_bytes_per_s == 450e9
    # same bytes over each link: 450 / 63 = 7.1x; GH200 also offloads less (96 GiB HBM)
    assert c2c.offloaded_bytes < pcie.offloaded_bytes
    assert pcie.link_seconds / c2c.link_seconds > 7.1
    assert c2c.host_memory_bytes == 480e9 and pcie.host_memory_bytes is None
    fits = offload.offload_decode_step(PRESETS["llama-2-7b"], gpu="h100-sxm")
    assert fits.offloaded_bytes == 0 and fits.link_seconds == 0


def test_llama_2_70b_decodes_about_10x_faster_on_gh200_than_over_pcie():
    """Llama-2-70B in bf16 at 4,096 tokens (137.9 GB of weights + 1.3 GB of KV cache; Touvron et
    al. 2023: 8 KV heads): what exceeds 90 % of HBM streams over the host link every step.
    PCIe 5.0 x16: 63 GB/s a direction; NVLink-C2C: 450 GB/s a direction (GH200 datasheet: 900 GB/s
    in total)."""
    model = PRESETS["llama-2-70b"]
    pcie = offload.offload_decode_step(model, gpu="h100-sxm", seq_len=4096)
    c2c = offload.offload_decode_step(model, gpu="gh200-96gb", seq_len=4096)
    assert pcie.link_seconds == pytest.approx(pcie.offloaded_bytes / 63e9, rel=0.01)
    assert c2c.link_seconds == pytest.approx(c2c.offloaded_bytes / 450e9, rel=0.01)
    assert pcie.step_seconds / c2c.step_seconds > 9
    big = offload.offload_decode_step(model, gpu="gh200-144gb", seq_len=4096)
    assert big.offloaded_bytes < 1e9 and big.tokens_per_s > c2c.tokens_per_s
