"""Lesson 10's Tensor Cores against CUDA cores widget (practice question 2), driven as a learner
would. Expected figures come from the NVIDIA A100 and H100 datasheets, not from the widget."""

from __future__ import annotations

import pytest

from course.presentation.widgets import tensor_vs_cuda_cores


def test_defaults_show_the_h100s_bf16_tensor_cores_at_14_8x_its_cuda_cores():
    """H100 SXM datasheet: BF16 Tensor Core 989.4 TFLOP/s dense, 1,978.9 sparse; FP32 67."""
    calc = tensor_vs_cuda_cores()
    r = calc.result
    assert calc.error is None
    assert r.tensor_core_dense_flop_per_s == pytest.approx(989.4e12)
    assert r.tensor_core_sparse_flop_per_s == pytest.approx(1978.9e12)
    assert "14.8x" in repr(calc)
    assert r.tensor_core_seconds == pytest.approx(2 * 4096**3 / 989.4e12)


def test_the_precision_menu_follows_the_gpu():
    calc = tensor_vs_cuda_cores(precision="fp8")
    assert calc.result.tensor_core_dense_flop_per_s == pytest.approx(1978.9e12)
    calc.controls["gpu"].value = "a100-80gb-sxm"  # no FP8 Tensor Cores on an A100
    assert "fp8" not in calc.controls["precision"].options
    assert calc.error is None and calc.result.precision == calc.controls["precision"].value
    calc.controls["precision"].value = "fp32"
    assert calc.result.tensor_core_seconds is None
    assert "no Tensor Core path" in repr(calc)


@pytest.mark.parametrize("box", ["m", "n", "k"])
@pytest.mark.parametrize("typed", ["0", "-4", "2.5", "many", ""])
def test_a_bad_shape_is_named_in_red(box, typed):
    calc = tensor_vs_cuda_cores()
    calc.controls[box].value = typed
    label = calc.controls[box].description
    assert calc.error is not None and calc.error.startswith(f"{label} must be a whole number")
    assert calc.result is None
