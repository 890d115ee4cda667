"""Lesson 07's decision-table widget: it shows the ranking and errors with its on-screen labels,
and keeps the sequence length inside the chosen model's window. The ranking itself:
tests/calculators/test_techniques.py."""

from __future__ import annotations

from course.facts.models import PRESETS
from course.presentation.widgets import technique_table


def test_widget_ranks_and_shows_errors_with_its_labels():
    calc = technique_table()
    assert "QLoRA" in calc.output.value and calc.error is None
    calc.controls["constraint"].value = "too_slow"
    assert "fused attention" in calc.output.value
    calc.controls["seq_len"].value = "8"
    assert calc.error.startswith("sequence length (tokens) must be")
    calc.controls["seq_len"].value = "2,048"
    calc.controls["batch"].value = "two"
    assert "batch must be a whole number" in calc.error


def test_a_sequence_longer_than_the_new_models_window_becomes_its_window():
    calc = technique_table(model="llama-2-13b", seq_len=4096)
    calc.controls["model"].value = "gpt2"
    assert calc.controls["seq_len"].value == str(PRESETS["gpt2"].max_positions) == "1024"
    assert calc.error is None
    calc.controls["model"].value = "llama-2-13b"  # a longer window leaves the length alone
    assert calc.controls["seq_len"].value == "1024"
