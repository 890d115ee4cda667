"""Every branch of course.presentation.findings.utilisation, on synthetic records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from course.presentation.findings import utilisation


def _record(mfu=0.3, spread=0.01, load=0.5, cores=2):
    return SimpleNamespace(
        model="tiny",
        mfu=mfu,
        achieved_flop_per_s=mfu * 1e11,
        peak_flop_per_s=1e11,
        step_seconds=0.1,
        step_spread_seconds=spread * 0.1,
        load_average=load,
        cores=cores,
    )


def test_missing_record():
    assert "No training step" in utilisation.training_mfu(None)


@pytest.mark.parametrize(
    ("mfu", "words"),
    [(1.2, "not usable"), (0.6, "high"), (0.3, "well-tuned"), (0.05, "low")],
)
def test_each_level_gets_its_explanation(mfu, words):
    text = utilisation.training_mfu(_record(mfu=mfu))
    assert words in text
    assert f"{100 * mfu:.1f} %" in text
    assert "Noisy" not in text


def test_low_mfu_cites_the_reference_run():
    assert "15.7 %" in utilisation.training_mfu(_record(mfu=0.05))


def test_busy_machine_and_noisy_timing_are_flagged():
    busy = utilisation.training_mfu(_record(load=3.5, cores=2))
    assert "busy" in busy and "rerun" in busy
    noisy = utilisation.training_mfu(_record(spread=0.4, load=None))
    assert "varied by 40 %" in noisy
    both = utilisation.training_mfu(_record(spread=0.4, load=4.0))
    assert "busy" in both and "varied" in both


def test_counter_vs_formula_branches():
    assert "did not run" in utilisation.counter_vs_formula(None, 1e9, "x")
    assert "0 FLOPs" in utilisation.counter_vs_formula(0, 1e9, "x")
    assert "agree" in utilisation.counter_vs_formula(1.005e9, 1e9, "x")
    assert "more" in utilisation.counter_vs_formula(1.2e9, 1e9, "x")
    assert "fewer" in utilisation.counter_vs_formula(0.7e9, 1e9, "x")


def test_a_plain_mapping_works_as_a_record():
    rec = vars(_record(mfu=0.3))
    assert "MFU 30.0 %" in utilisation.training_mfu(rec)
