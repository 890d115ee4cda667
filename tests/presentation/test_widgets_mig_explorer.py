"""Lesson 08's MIG explorer, driven as a learner would: set values, read the output. Expected
figures come from the MIG profile table (reference run / MIG user guide), not from the widget."""

from __future__ import annotations

import pytest

from course.presentation.widgets import mig_explorer
from course.presentation.widgets.mig_explorer import parse_instances


def test_mig_explorer_default_shows_112_of_132_sms_and_that_7b_fits_no_1g_slice():
    calc = mig_explorer()
    text = repr(calc)
    assert calc.error is None
    assert "112 of 132 SMs used, 20 idle" in text
    assert "fits on none of these instances" in text  # 7B bf16 > 9.75 GiB
    assert "Smallest profile that holds it: 1g.20gb (4 per GPU)" in text
    assert calc.output.value.count('title="1g.10gb"') == 7


def test_mig_explorer_places_a_mixed_layout_and_reports_which_instances_hold_the_model():
    calc = mig_explorer()
    calc.controls["instances"].value = "3g.40gb, 2g.20gb, 1g.10gb"
    text = repr(calc)
    assert calc.error is None
    assert "60 + 32 + 16" not in text  # the widget states the sum, not the parts
    assert f"{60 + 32 + 16} of 132 SMs used, {132 - 108} idle" in text
    assert "fits on 2 of these instances" in text and "3g.40gb@0" in text


def test_mig_explorer_refuses_an_invalid_mix_in_red():
    calc = mig_explorer()
    calc.controls["instances"].value = "3g.40gb, 3g.40gb, 1g.10gb"
    assert calc.error and "no valid placement" in calc.error
    calc.controls["instances"].value = "2 x 4g.40gb"
    assert calc.error and "at most 1 x 4g.40gb" in calc.error
    calc.controls["instances"].value = "3g.40gb, banana"
    assert calc.error and "MIG profile must be one of" in calc.error
    calc.controls["instances"].value = "4g.40gb, 3g.40gb"
    assert calc.error is None


def test_mig_explorer_switches_gpu_and_profile_names():
    calc = mig_explorer()
    calc.controls["gpu"].value = "a100-40gb-sxm"  # 1g.10gb does not exist: its own smallest
    assert calc.controls["instances"].value == "7 x 1g.5gb" and calc.error is None
    assert "98 of 108 SMs used, 10 idle" in repr(calc)
    calc.controls["instances"].value = "7 x 2g.10gb"
    assert calc.error and "at most 3 x 2g.10gb" in calc.error
    calc.controls["instances"].value = "3 x 2g.10gb"
    calc.controls["seq_len"].value = "lots"
    assert calc.error and "context (tokens)" in calc.error


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("7 x 1g.10gb", ["1g.10gb"] * 7),
        ("3g.40gb, 2g.20gbx2", ["3g.40gb"] + ["2g.20gb"] * 2),
        (" 7g.80gb ", ["7g.80gb"]),
    ],
)
def test_parse_instances(text, names):
    assert parse_instances(text) == names


def test_parse_instances_rejects_empty_and_silly_counts():
    for junk in ("", " , ", "9 x 1g.10gb"):
        with pytest.raises(ValueError, match="instances"):
            parse_instances(junk)
