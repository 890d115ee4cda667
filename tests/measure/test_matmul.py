"""course.measure.matmul: products correct, records well formed, sweeps keep to their budget.

They never assert a speed (speed is a measurement, not a property).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch
from measured import HAS_CUDA, NO_CUDA, finite_positive

from course.measure import matmul


@pytest.mark.skipif(HAS_CUDA, reason="this machine has CUDA; the no-GPU message is not shown")
def test_cuda_device_is_refused_with_a_reason_when_absent():
    with pytest.raises(ValueError, match="not available"):
        matmul.time_matmul(64, device="cuda")


def test_python_matmul_matches_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    got = np.array(matmul.python_matmul(a.tolist(), b.tolist()))
    np.testing.assert_allclose(got, a @ b, rtol=1e-12)


@pytest.mark.parametrize(
    "library,dtype", [("python", "fp64"), ("numpy", "fp32"), ("torch", "fp32")]
)
def test_matmul_callable_computes_the_product(library, dtype):
    fn = matmul.matmul_callable(16, library=library, dtype=dtype)
    a = torch.Generator().manual_seed(0)
    left, right = (torch.randn(16, 16, generator=a, dtype=torch.float64) for _ in range(2))
    np.testing.assert_allclose(
        np.asarray(fn(), dtype=np.float64), (left @ right).numpy(), rtol=1e-4, atol=1e-4
    )


def test_matmul_records_are_well_formed():
    rec = matmul.time_matmul(64, min_run_time=0.02)
    assert rec.flops == 2 * 64**3
    assert finite_positive(rec.seconds) and finite_positive(rec.flop_per_s)
    assert math.isclose(rec.flop_per_s, rec.flops / rec.seconds)
    assert rec.spread_seconds >= 0 and rec.repeats >= 1
    assert rec.threads == torch.get_num_threads()


@pytest.mark.serial  # times itself against its budget or the cores: alone
def test_matmul_sweep_keeps_to_its_budget_and_says_what_it_skipped():
    budget = 1.5
    sweep = matmul.matmul_sweep(
        [8, 64, 512, 2048, 4096],
        libraries=("python", "numpy", "torch"),
        dtypes=("fp32", "bf16"),
        budget_seconds=budget,
        show_progress=False,
    )
    # A timed call that starts inside the budget may end after it; on a machine whose other
    # programs hold the cores, each call takes load/cores times longer, so the slack scales with it.
    slowdown = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    assert sweep.elapsed_seconds <= (budget * 1.3 + 0.3) * slowdown, (
        sweep.elapsed_seconds,
        slowdown,
    )
    assert sweep.records, "the smallest sizes always fit"
    # impossible combinations and the 4096^3 products (seconds each) are skipped, with reasons
    assert any("numpy has no 'bf16'" in s for s in sweep.skipped)
    assert any("n=4096" in s for s in sweep.skipped)
    for r in sweep.records:
        assert finite_positive(r.flop_per_s) and r.flops == 2 * r.size**3
    text = str(sweep)
    assert "FLOP/s" in text and "budget 1.5 s" in text
    assert "<table>" in sweep._repr_html_()


def test_matmul_sweep_runs_sizes_smallest_first_within_a_group():
    sweep = matmul.matmul_sweep([128, 16, 64], budget_seconds=2.0, show_progress=False)
    measured = [r.size for r in sweep.records]
    assert measured[0] == 16 and measured == sorted(measured)
    assert len(measured) + len(sweep.skipped) == 3


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(library="python", dtype="fp32"), "fp64"),
        (dict(library="numpy", dtype="bf16"), "numpy has no"),
        (dict(library="torch", dtype="tf32"), "CUDA"),
        (dict(library="fortran"), "library"),
        (dict(dtype="fp4"), "dtype"),
        (dict(library="numpy", dtype="int8"), "numpy has no"),
        (dict(dtype="int8", size=8), "size"),
        (dict(dtype="fp8_e4m3", size=40), "size"),
        (dict(size=0), "size"),
    ],
)
def test_impossible_matmul_points_raise_a_clear_error(kwargs, match):
    kwargs = {"size": 8, **kwargs}
    with pytest.raises(ValueError, match=match):
        matmul.time_matmul(**kwargs)


LOW_PRECISION_GEMMS = ("fp8_e4m3", "fp8_e5m2", "int8")


def test_fp8_and_int8_callables_compute_the_product_of_their_stored_operands():
    for dtype in LOW_PRECISION_GEMMS:
        if matmul._unsupported(dtype, "cpu"):
            continue  # refused with a reason instead: see the sweep test below
        a, b = matmul._operands("torch", dtype, 32, seed=0)
        assert b.stride() == (1, 32) or dtype == "int8"  # torch._scaled_mm: b column-major
        product = matmul.matmul_callable(32, dtype=dtype)()
        exact = a.double() @ b.double()
        if dtype == "int8":
            assert product.dtype == torch.int32 and torch.equal(product.double(), exact)
        else:  # fp8 inputs, fp32 accumulation, rounded to a bf16 product (8 significant bits)
            assert product.dtype == torch.bfloat16
            torch.testing.assert_close(product.double(), exact, rtol=2**-7, atol=1e-6)


def test_sweep_measures_fp8_and_int8_or_skips_them_with_a_reason():
    keys = ("fp32", "bf16", "fp16", *LOW_PRECISION_GEMMS, "tf32")
    precision_before = torch.get_float32_matmul_precision()
    sweep = matmul.matmul_sweep(
        [32], dtypes=keys, min_run_time=0.01, budget_seconds=5, show_progress=False
    )
    assert torch.get_float32_matmul_precision() == precision_before  # TF32 setting restored
    measured = {r.dtype for r in sweep.records}
    for dtype in keys:
        reasons = [s for s in sweep.skipped if s.startswith(f"torch/{dtype}/cpu")]
        assert (dtype in measured) != bool(reasons), (dtype, sweep.skipped)
        assert all(s.split(": ", 1)[1].strip() for s in reasons)  # a reason, not just a name
    assert "fp32" in measured
    if not HAS_CUDA:
        assert any(s.startswith("torch/tf32/cpu") and "CUDA" in s for s in sweep.skipped)
    for r in sweep.records:
        assert r.library == "torch" and r.device == "cpu" and r.size == 32
        assert r.flops == 2 * 32**3 and finite_positive(r.flop_per_s)  # int8: integer ops per s
        assert math.isclose(r.flop_per_s, r.flops / r.seconds)
        assert r.spread_seconds >= 0 and r.repeats >= 1
    assert [r.dtype for r in sweep.records] == [k for k in keys if k in measured]  # keys' order


def test_a_dtype_torch_cannot_run_is_skipped_with_torchs_reason(monkeypatch):
    def no_int8(dtype, device):
        return "no int8 kernel on this device" if dtype == "int8" else ""

    monkeypatch.setattr(matmul, "_unsupported", no_int8)
    sweep = matmul.matmul_sweep(
        [32], dtypes=("fp32", "int8"), min_run_time=0.01, budget_seconds=2, show_progress=False
    )
    assert [r.dtype for r in sweep.records] == ["fp32"]
    assert sweep.skipped == [
        "torch/int8/cpu: torch cannot multiply 'int8' on 'cpu' here: no int8 kernel on this device"
    ]
    with pytest.raises(ValueError, match="int8"):
        matmul.time_matmul(32, dtype="int8")


def test_sweep_skips_sizes_the_fp8_and_int8_gemms_refuse():
    sweep = matmul.matmul_sweep(
        [24, 48], dtypes=("int8", "fp32"), min_run_time=0.01, budget_seconds=3, show_progress=False
    )
    assert not sweep.where(dtype="int8", size=24)
    assert any("int8" in s and "n=24" in s and "multiple of 16" in s for s in sweep.skipped)
    assert sweep.where(dtype="fp32", size=24)  # the size rule is for the special GEMMs only


def test_thread_counts_cover_one_to_all_cores():
    assert matmul.thread_counts(1) == [1]
    assert matmul.thread_counts(2) == [1, 2]
    assert matmul.thread_counts(6) == [1, 2, 4, 6]


def _machine_busy(cores: int) -> bool:
    return os.getloadavg()[0] > cores - 0.5


@pytest.mark.serial  # times itself against its budget or the cores: alone
def test_more_threads_do_not_make_a_large_matmul_slower_beyond_noise():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if cores < 2:
        pytest.skip("one usable core: there is no thread scaling to check")
    if _machine_busy(cores):
        pytest.skip(
            f"machine busy (load {os.getloadavg()[0]:.1f} on {cores} cores): threads "
            "would wait for cores other programs hold, which measures the load"
        )
    verdicts = []
    for _ in range(3):  # a shared machine is noisy: the property must hold in one of 3 tries
        one = matmul.time_matmul(512, threads=1, min_run_time=0.1)
        many = matmul.time_matmul(512, threads=cores, min_run_time=0.1)
        noise = 2 * (one.spread_seconds + many.spread_seconds)
        verdicts.append(many.seconds <= 1.2 * one.seconds + noise)
        if verdicts[-1]:
            break
    assert any(verdicts)


@pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA)
def test_cuda_matmul_dtypes_and_transfer_cost():
    sweep = matmul.matmul_sweep(
        [256, 1024],
        dtypes=("fp32", "tf32", "fp16", "bf16"),
        devices=("cuda",),
        budget_seconds=4,
        show_progress=False,
    )
    assert {r.dtype for r in sweep.records} == {"fp32", "tf32", "fp16", "bf16"}
    with_copy = matmul.time_matmul(256, device="cuda", include_transfer=True, min_run_time=0.05)
    without = matmul.time_matmul(256, device="cuda", min_run_time=0.05)
    assert with_copy.seconds > without.seconds  # copying to and from the GPU costs time


def test_tf32_switch_is_restored_after_a_measurement():
    flags = torch.backends.cuda.matmul
    name = "fp32_precision" if hasattr(flags, "fp32_precision") else "allow_tf32"
    before = getattr(flags, name)
    with matmul._tf32(True):
        assert getattr(flags, name) in ("tf32", True)
    with matmul._tf32(False):
        assert getattr(flags, name) in ("ieee", False)
    assert getattr(flags, name) == before
