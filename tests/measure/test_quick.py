"""`python -m course measure`: a bounded, real portrait of the machine."""

import re
import subprocess
import sys
import time

import pytest

from course.measure.quick import measure_machine


@pytest.mark.serial  # times itself against its budget: alone
def test_measure_reports_matmul_rates_and_bandwidths_within_its_budget():
    start = time.monotonic()
    lines = measure_machine(budget_seconds=6)
    elapsed = time.monotonic() - start
    assert lines[0].startswith("measured on: ")
    assert any(line.startswith("[OK] cpu:") for line in lines)
    rates = [line for line in lines if line.startswith("matmul cpu fp32: ")]
    assert rates and re.search(r"[\d.]+ [MGT]FLOP/s", rates[0])
    bandwidths = [line for line in lines if line.startswith("read bandwidth ")]
    assert bandwidths and all(re.search(r"[\d.]+ [KMGT]B/s", b) for b in bandwidths)
    # the budget bounds the sweeps; device checks, imports and allocation come on top
    assert elapsed < 6 + 15


def test_measure_command_line_exits_zero():
    result = subprocess.run(
        [sys.executable, "-m", "course", "measure", "--budget", "4"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "matmul cpu fp32" in result.stdout


def test_measure_rejects_a_nonsense_budget():
    with pytest.raises(ValueError, match="budget_seconds"):
        measure_machine(budget_seconds=-1)


def test_save_and_compare_print_two_portraits_side_by_side(tmp_path):
    from course.measure import quick

    saved = tmp_path / "run.json"
    result = subprocess.run(
        [sys.executable, "-m", "course", "measure", "--budget", "4", "--save", str(saved)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    portrait = quick.load_portrait(saved)
    assert (
        portrait["matmul"]
        and portrait["plateaus"]
        and portrait["machine"].startswith("measured on")
    )
    other = dict(
        portrait,
        machine="measured on: a slower laptop",
        matmul=[dict(r, flop_per_s=r["flop_per_s"] / 2) for r in portrait["matmul"]],
    )
    lines = quick.compare_lines(portrait, other)
    assert lines[1].startswith("B: measured on: a slower laptop")
    assert any(line.startswith("matmul cpu fp32") and line.endswith("2x") for line in lines)


def test_compare_refuses_a_file_that_is_not_a_portrait(tmp_path):
    from course.measure import quick

    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="portrait saved by"):
        quick.load_portrait(bad)


def test_levels_measured_below_the_next_are_flagged_as_the_method():
    from course.measure import bandwidth, quick

    # the 16-core host of the H100 reference run (measure.txt): L1d 143.5, L2 494.1, L3 281.6 GB/s
    plateaus = [
        bandwidth.Plateau("L1d", 48 * 2**10, 143.5e9, 3),
        bandwidth.Plateau("L2", 2 * 2**20, 494.1e9, 3),
        bandwidth.Plateau("L3", 300 * 2**20, 281.6e9, 5),
    ]
    assert bandwidth.out_of_order(plateaus) == ["L1d"]
    lines = quick.portrait_lines(
        {"machine": "m", "matmul": [], "plateaus": [p.__dict__ for p in plateaus]}
    )
    assert "not the hardware" in lines[1] and "not the hardware" not in lines[2]


def test_compare_with_the_shipped_h100_reference_run():
    from course.measure import quick

    h100 = quick.load_portrait("h100")
    assert "H100 SXM, reference run 2026-11-22" in h100["machine"]
    assert "AMX-BF16" in h100["cpu_features"]
    here = {
        "machine": "measured on: a laptop",
        "matmul": [dict(r, flop_per_s=r["flop_per_s"] / 1000) for r in h100["matmul"]],
    }
    lines = quick.compare_lines(here, h100)
    assert any(line.startswith("matmul cuda bf16") and line.endswith("0.001x") for line in lines)
    assert any(line.startswith("read bandwidth cuda memory") and " - " in line for line in lines)
