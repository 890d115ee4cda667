"""course.presentation.findings.gpu_inside (lesson 11): every outcome, synthetic records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from course.presentation.findings import gpu_inside


def _stride(s, useful, pred, spread=0.0):
    return {
        "stride_elements": s,
        "useful_bytes_per_s": useful,
        "predicted_efficiency": pred,
        "seconds": 1.0,
        "spread_seconds": spread,
        "line_bytes": 64,
        "element_bytes": 4,
    }


@pytest.mark.parametrize(
    "last, expected",
    [
        (_stride(32, 0.08, 0.0625), "agree within 2×"),
        (_stride(32, 0.5, 0.0625), "better than"),
        (_stride(32, 0.01, 0.0625), "worse than"),
        (_stride(32, 0.08, 0.0625, 0.9), "rerun"),
    ],
)
def test_stride_finding_branches(last, expected):
    assert expected in gpu_inside.stride_vs_prediction([_stride(1, 1.0, 1.0), last])


def test_stride_finding_missing():
    assert gpu_inside.stride_vs_prediction([]) == gpu_inside.MISSING
    assert gpu_inside.stride_vs_prediction([_stride(4, 1, 1)]) == gpu_inside.MISSING


def _paired(ratios):
    import statistics

    q = statistics.quantiles(ratios, n=4)
    return SimpleNamespace(
        ratios=ratios, median_ratio=statistics.median(ratios), low_ratio=q[0], high_ratio=q[2]
    )


@pytest.mark.parametrize(
    "ratios, expected",
    [
        ([3.0, 3.1, 2.9, 3.2, 3.0], "faster"),
        ([0.5, 0.4, 0.5, 0.45, 0.5], "slower"),
        ([1.0, 1.01, 0.99, 1.02, 1.0], "No difference"),
        ([0.6, 1.8, 1.0, 0.7, 1.6], "Noise wins"),
    ],
)
def test_fix_speedup_branches(ratios, expected):
    assert expected in gpu_inside.fix_speedup(_paired(ratios))


def test_fix_speedup_missing():
    assert gpu_inside.fix_speedup(None) == gpu_inside.MISSING


def test_kernel_and_phase_findings():
    ok = SimpleNamespace(kernel="vector add", matches=True, max_abs_error=0.0, mode="interpreter")
    bad = SimpleNamespace(kernel="row max", matches=False, max_abs_error=1.0, mode="interpreter")
    assert "All 1 kernels matched" in gpu_inside.kernel_checks([ok])
    assert "row max" in gpu_inside.kernel_checks([ok, bad])
    assert "not run here: no triton" in gpu_inside.kernel_checks([], "no triton")
    text = gpu_inside.top_phase({"forward": 10.0, "logging": 300.0, "backward": 20.0})
    assert "**logging**" in text and "91%" in text
    assert gpu_inside.top_phase({}) == gpu_inside.MISSING
