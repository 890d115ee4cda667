"""The time of expert parallelism's all-to-all on a link: bytes off-rank over the link's
bandwidth per direction, on NVLink inside an H100 node against InfiniBand NDR between nodes."""

from __future__ import annotations

import pytest

from course.calculators import moe
from course.calculators.communication import gpu_links
from course.facts.models import MOE_PRESETS


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
