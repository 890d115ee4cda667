"""fp32 training keeps fp32 activations: Korthikanti et al. 2022's 16-bit table, values doubled."""

import pytest

from course.calculators import memory
from course.facts.models import PRESETS


def test_korthikanti_16_bit_figure_is_unchanged():
    # Table 2, no recomputation, t = 1: s*b*h*(34 + 5*a*s/h)
    s, b, h, a = 2048, 1, 4096, 32
    assert memory.activation_bytes_per_layer(s, b, h, a) == pytest.approx(
        s * b * h * (34 + 5 * a * s / h)
    )


@pytest.mark.parametrize(
    ("recompute", "sp", "t", "expected"),
    [
        ("none", False, 1, lambda s, b, h, a, t: s * b * h * (66 + 9 * a * s / h)),
        ("none", False, 4, lambda s, b, h, a, t: s * b * h * (18 + 48 / t + 9 * a * s / (h * t))),
        ("none", True, 4, lambda s, b, h, a, t: s * b * h * (66 + 9 * a * s / h) / t),
        ("selective", False, 4, lambda s, b, h, a, t: s * b * h * (18 + 48 / t)),
        ("full", False, 1, lambda s, b, h, a, t: 4 * s * b * h),
    ],
)
def test_fp32_activations_double_the_values_and_keep_one_byte_masks(recompute, sp, t, expected):
    s, b, h, a = 1024, 2, 2048, 16
    got = memory.activation_bytes_per_layer(
        s, b, h, a, tensor_parallel=t, sequence_parallel=sp, recompute=recompute, bytes_per_value=4
    )
    assert got == pytest.approx(expected(s, b, h, a, t))


def test_training_memory_fp32_counts_fp32_activations():
    config = PRESETS["llama-2-7b"]
    fp32 = memory.training_memory(config, batch=1, seq_len=4096, precision="fp32")
    mixed = memory.training_memory(config, batch=1, seq_len=4096, precision="mixed")
    ratio = fp32.activations_bytes / mixed.activations_bytes
    assert 1.8 < ratio < 2.0  # values double, the 1-byte dropout masks (sbh and a*s^2*b) do not
    assert fp32.logits_bytes == mixed.logits_bytes  # the loss works in fp32 either way


def test_bytes_per_value_must_be_2_or_4():
    with pytest.raises(ValueError, match="bytes_per_value"):
        memory.activation_bytes_per_layer(128, 1, 256, 4, bytes_per_value=3)
