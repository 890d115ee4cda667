"""`python -m course measure`: a bounded, real portrait of the machine."""

import re
import subprocess
import sys
import time

import pytest

from course.measure.quick import measure_machine


def test_measure_reports_matmul_rates_and_bandwidths_within_its_budget():
    start = time.monotonic()
    lines = measure_machine(budget_s=6)
    elapsed = time.monotonic() - start
    assert lines[0].startswith("measured on: ")
    assert any(line.startswith("[OK] cpu:") for line in lines)
    rates = [line for line in lines if line.startswith("matmul cpu fp32: ")]
    assert rates and re.search(r"[\d.]+ [MGT]FLOP/s", rates[0])
    bandwidths = [line for line in lines if line.startswith("read bandwidth ")]
    assert bandwidths and all(re.search(r"[\d.]+ [KMGT]B/s$", b) for b in bandwidths)
    # the budget bounds the sweeps; device checks, imports and allocation come on top
    assert elapsed < 6 + 15


def test_measure_command_line_exits_zero():
    result = subprocess.run(
        [sys.executable, "-m", "course", "measure", "--budget", "4"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "matmul cpu fp32" in result.stdout


def test_measure_rejects_a_nonsense_budget():
    with pytest.raises(ValueError, match="budget_s"):
        measure_machine(budget_s=-1)
