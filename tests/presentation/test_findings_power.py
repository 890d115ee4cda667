"""course.presentation.findings.power: each outcome of a power trace gets its own explanation;
the H100 reference run's figures (its power trace in course/facts/data/reference/: 673 TFLOP/s at
the 700 W cap, SM clock 1,350 of 1,980 MHz) come out."""

from __future__ import annotations

import pytest

from course.facts.data import reference
from course.presentation.findings import power


def _record(watts: float, mhz: float, limit: float = 700.0) -> dict:
    samples = [[t * 0.05, watts, mhz, 60] for t in range(100)]
    idle = [[t * 0.05, 100.0, 1980, 40] for t in range(20)]
    return {
        "limit_w": limit,
        "idle_samples": idle,
        "sustained_bf16_8192": {"seconds": 5.0, "flop_per_s": 5e14, "samples": samples},
    }


def test_reference_run_h100_sits_at_the_cap_with_the_clock_down():
    rec = reference.load(reference.H100, "power")
    s = power.summarise(rec)
    assert s["flop_per_s"] == pytest.approx(673e12, rel=0.001)
    assert s["watts"] == pytest.approx(700, abs=5) and s["sm_mhz"] == 1350
    assert s["idle_watts"] == pytest.approx(129, abs=1)
    assert s["flop_per_joule"] == pytest.approx(0.96e12, rel=0.01)
    assert "lowered the SM clock" in power.sentence(rec, 1980e6)


@pytest.mark.parametrize(
    ("watts", "mhz", "phrase"),
    [
        (699, 1350, "lowered the SM clock"),
        (699, 1950, "kept its clock near boost"),
        (400, 1200, "thermal limit"),
        (300, 1980, "did not load the card fully"),
    ],
)
def test_every_outcome_has_its_explanation(watts, mhz, phrase):
    text = power.sentence(_record(watts, mhz), 1980e6)
    assert phrase in text and "TFLOP per joule" in text


def test_missing_data_is_said_not_guessed():
    assert "nothing to report" in power.sentence({}, 1980e6)
    assert "nothing to report" in power.sentence({"limit_w": 700}, 1980e6, phase="x")
    assert power.summarise({"idle_samples": [], "sustained_bf16_8192": {}}) is None
