"""Lesson 10's Grace Hopper widget (practice question 7), driven as a learner would. Expected
figures come from the GH200 datasheet (NVLink-C2C 900 GB/s in total) and PCIe 5.0 x16 (63 GB/s a
direction), worked out here."""

from __future__ import annotations

import pytest

from course.presentation.widgets import grace_hopper_calculator


def test_defaults_stream_llama_2_70b_over_pcie_and_over_nvlink_c2c():
    calc = grace_hopper_calculator()
    pcie, c2c96, c2c144 = calc.result.steps
    assert calc.error is None
    assert "PCIe" in pcie.link and "C2C" in c2c96.link
    assert pcie.link_seconds == pytest.approx(pcie.offloaded_bytes / 63e9, rel=0.01)
    assert c2c96.link_seconds == pytest.approx(c2c96.offloaded_bytes / 450e9, rel=0.01)
    assert pcie.tokens_per_s < c2c96.tokens_per_s < c2c144.tokens_per_s
    assert "streamed over PCIe 5.0 x16" in repr(calc)


def test_a_model_that_fits_in_hbm_streams_nothing():
    calc = grace_hopper_calculator(model="llama-2-7b")
    assert all(s.offloaded_bytes == 0 for s in calc.result.steps)
    assert repr(calc).count("all in HBM") == 3


def test_a_longer_batch_of_contexts_moves_more_over_the_link():
    calc = grace_hopper_calculator()
    before = calc.result.steps[1].offloaded_bytes
    calc.controls["batch"].value = "16"
    assert calc.result.steps[1].offloaded_bytes > before


def test_choosing_a_model_with_a_shorter_window_shortens_the_context():
    calc = grace_hopper_calculator(seq_len="4096")
    calc.controls["model"].value = "gpt2"  # 1,024 positions
    assert calc.controls["seq_len"].value == "1024" and calc.error is None


@pytest.mark.parametrize(
    ("control", "value", "message"),
    [
        ("seq_len", "0", "context length (tokens) must be a whole number from 1"),
        ("seq_len", "9999999", "context length (tokens) must be a whole number from 1"),
        ("batch", "-1", "batch (sequences) must be a whole number from 1"),
        ("batch", "x", "batch (sequences) must be a whole number"),
    ],
)
def test_bad_values_show_a_red_message_with_the_label_on_screen(control, value, message):
    calc = grace_hopper_calculator()
    calc.controls[control].value = value
    assert calc.error is not None and message in calc.error, calc.error
    assert calc.result is None
