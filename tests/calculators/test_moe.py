"""course.calculators.moe (lesson 12): a mixture of experts' FLOPs follow its active parameters
(Jiang et al. 2024, Mixtral), the all-to-all bytes of dispatching tokens to experts, and their time
on a link: bytes off-rank over the link's bandwidth per direction, on NVLink inside an H100 node
against InfiniBand NDR between nodes."""

from __future__ import annotations

import pytest

from course.calculators import compute, moe
from course.calculators.communication import gpu_links
from course.facts.models import MOE_PRESETS, active_matmul_params

MIXTRAL = MOE_PRESETS["mixtral-8x7b"]


def test_all_to_all_time_is_bytes_over_the_links_bandwidth():
    nvlink, ib = gpu_links("h100-sxm")  # registry: NVIDIA datasheets, per direction
    mx = MOE_PRESETS["mixtral-8x7b"]
    step = moe.all_to_all_bytes(4096, mx.hidden, experts_per_token=2, ranks=8)
    inside = moe.all_to_all_seconds(step.dispatch_bytes, nvlink.bandwidth_bytes_per_s)
    across = moe.all_to_all_seconds(step.dispatch_bytes, ib.bandwidth_bytes_per_s)
    assert inside == pytest.approx(4096 * 2 * 4096 * 2 * 7 / 8 / 450e9)
    assert across / inside == pytest.approx(450e9 / 50e9)  # 900 GB/s both ways vs 400 Gb/s
    assert moe.all_to_all_seconds(0, 1e9) == 0
    with pytest.raises(ValueError, match="link_bytes_per_s"):
        moe.all_to_all_seconds(1e9, 0)


def test_flops_follow_the_active_parameters():
    """Forward FLOPs per token ~ 2 x active matmul weights (+ head + attention): Mixtral costs
    about what a 13B dense model does, not a 47B one."""
    f = compute.forward_flops_per_token(MIXTRAL, 1)
    head = 2 * MIXTRAL.hidden * MIXTRAL.vocab
    assert f == pytest.approx(2 * active_matmul_params(MIXTRAL) + head + 4 * 32 * 4096, rel=1e-12)
    acc = moe.moe_account(MIXTRAL, seq_len=1)
    assert acc.dense_equivalent_flops_per_token / acc.forward_flops_per_token == pytest.approx(
        3.6, rel=0.05
    )
    assert acc.weights_bytes == 2 * MIXTRAL.params


def test_all_to_all_bytes():
    """4,096 tokens x top-2 x 4,096 hidden x 2 B, 7/8 of them off-rank on 8 ranks."""
    a = moe.all_to_all_bytes(4096, 4096, experts_per_token=2, ranks=8, moe_layers=32)
    assert a.dispatch_bytes == 4096 * 2 * 4096 * 2 * 7 / 8
    assert a.per_step_bytes == 4 * 32 * a.dispatch_bytes
    assert moe.all_to_all_bytes(10, 8, ranks=1).dispatch_bytes == 0
    assert moe.all_to_all_bytes(10, 8, training=False).exchanges == 2
