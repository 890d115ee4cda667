"""Lesson 10's CPU-or-GPU widget (practice question 1), driven as a learner would. Expected figures
are worked out here from the H100 reference run's own records and the datasheets."""

from __future__ import annotations

import pytest

from course.calculators import overhead
from course.facts import hardware
from course.facts.data import reference
from course.presentation.widgets import cpu_or_gpu
from course.presentation.widgets.cpu_or_gpu import launch_seconds


def test_defaults_put_the_reference_runs_own_cpu_against_its_gpu():
    """The H100 run measured its bf16 matmuls on the GPU and on the 16-core host: at n = 1,024
    the GPU is far faster, and its fitted fixed cost (launch) makes the CPU win only tiny sizes."""
    calc = cpu_or_gpu()
    r = calc.result
    assert calc.error is None
    rows = reference.load(reference.H100, "matmul")
    cpu = next(x for x in rows["cpu_matmul_sweep"] if x["dtype"] == "bf16" and x["size"] == 1024)
    assert r.seconds_a == pytest.approx(cpu["seconds"], rel=0.5)  # the fit through 512 and 4,096
    assert "GPU" in r.faster and r.seconds_b < r.seconds_a
    assert r.crossover_size is not None and r.crossover_size <= 1024


def test_a_datasheet_gpu_starts_behind_by_its_launch_and_its_copy():
    """H100 SXM: a launch as measured (about 8 us), then 2n^3 / 989.4 TFLOP/s (bf16 dense) or
    3n^2 x 2 B / 3.35 TB/s; copying the operands over PCIe 5.0 x16 (63 GB/s) adds 3n^2 x 2 B /
    63e9."""
    calc = cpu_or_gpu(b="h100-sxm", size="4096")
    n = 4096
    compute = 2 * n**3 / hardware.gpu("h100-sxm").dense_flop_per_s["bf16"]
    assert calc.result.seconds_b == pytest.approx(launch_seconds() + compute)
    assert 5e-6 < launch_seconds() < 20e-6
    calc.controls["copied"].value = "yes: copied over the host link"
    copy = 3 * n * n * 2 / 63e9
    assert calc.result.seconds_b == pytest.approx(launch_seconds() + compute + copy)
    assert calc.result.bound_b == "transfer"  # 1.6 ms of copy against 139 us of work


def test_this_machine_joins_the_menus_when_the_lesson_measures_it():
    mine = {d: overhead.Device(f"this machine {d}", 1e-6, 1e11) for d in ("fp32", "bf16")}
    calc = cpu_or_gpu(a="mine", mine=mine)
    assert calc.result.device_a == "this machine bf16"
    with pytest.raises(ValueError, match="mine must give a Device"):
        cpu_or_gpu(mine={"fp32": mine["fp32"]})


@pytest.mark.parametrize("typed", ["0", "-8", "2.5", "big", "", "99999999"])
def test_a_bad_size_is_named_in_red(typed):
    calc = cpu_or_gpu()
    calc.controls["size"].value = typed
    assert calc.error is not None and calc.error.startswith("matrix size n (n x n) must be")
    assert calc.result is None
