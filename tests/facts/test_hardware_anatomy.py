"""course.facts.hardware.anatomy: the inside of each GPU agrees with its GPU row and with the full
dies the whitepapers describe (NVIDIA A100 Tensor Core GPU Architecture; NVIDIA H100 Tensor Core
GPU Architecture)."""

from __future__ import annotations

import pytest

from course.facts import hardware


@pytest.mark.parametrize("key", sorted(hardware.ANATOMY))
def test_the_anatomy_table_agrees_with_the_gpu_rows(key):
    g, a = hardware.GPUS[key], hardware.ANATOMY[key]
    assert a.tensor_cores_per_sm * g.sms == g.tensor_cores  # 4 per SM: 432 (A100), 528 (H100)
    assert a.gpcs <= a.chip_gpcs and g.sms <= a.gpcs * a.chip_sms_per_gpc
    assert g.fp32_cores_per_sm % a.warp_schedulers_per_sm == 0
    assert a.register_file_per_sm_bytes == 4 * 16_384 * 4  # 4 partitions x 16,384 32-bit registers
    assert a.max_shared_memory_per_sm_bytes < g.l1_per_sm_bytes
    assert "whitepaper" in a.source


def test_full_dies_are_the_whitepapers():
    """A100 whitepaper: the full GA100 has 8 GPCs and 128 SMs, the A100 enables 108 (7 GPCs);
    H100 whitepaper: the full GH100 has 8 GPCs and 144 SMs, the H100 SXM5 enables 132."""
    for key, chip, full_sms in (("a100-80gb-sxm", "GA100", 128), ("h100-sxm", "GH100", 144)):
        a = hardware.anatomy(key)
        assert a.chip == chip and a.chip_gpcs == 8
        assert a.chip_gpcs * a.chip_sms_per_gpc == full_sms
    with pytest.raises(ValueError, match="anatomy data"):
        hardware.anatomy("rtx-3090")
