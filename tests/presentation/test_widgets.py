"""The calculator widgets of course/presentation/widgets/, driven as a learner would: set values,
read output.

Expected numbers are derived from datasheet figures in course/facts/hardware/ (cited there), never
typed from a widget's own output.
"""

from __future__ import annotations

import math

import pytest

from course.calculators import compute
from course.facts.hardware import gpu
from course.facts.models import PRESETS
from course.presentation import widgets


def test_roofline_explorer_defaults_are_a_memory_bound_matvec():
    calc = widgets.roofline_explorer()
    assert calc.error is None
    text = repr(calc)
    assert "memory-bound" in text
    # 2e9 bytes at 3.35 TB/s (H100 SXM datasheet) = 597 us
    assert "597 µs" in text


def test_roofline_explorer_follows_the_operation_to_the_compute_bound_side():
    calc = widgets.roofline_explorer()
    calc.controls["flops"].value = "1.374e11"  # a 4096^3 matmul: 2 x 4096^3 FLOPs
    calc.controls["bytes_moved"].value = str(3 * 4096**2 * 2)  # A, B, C once in bf16
    assert "compute-bound" in repr(calc)
    expected = 1.374e11 / gpu("h100-sxm").dense_flop_per_s["bf16"]  # 139 us
    assert f"{expected * 1e6:.3g} µs" in repr(calc)
    assert "100.0 %" in repr(calc)  # a compute-bound op can use the whole peak


def test_roofline_explorer_dtype_list_follows_the_gpu():
    calc = widgets.roofline_explorer()
    calc.controls["gpu"].value = "v100-sxm2-32gb"  # no bf16 on Volta
    assert "bf16" not in calc.controls["dtype"].options
    assert calc.controls["dtype"].value in gpu("v100-sxm2-32gb").dense_flop_per_s
    assert calc.error is None


@pytest.mark.parametrize(
    "name,value,message",
    [
        ("flops", "lots", "FLOPs must be a number"),
        ("bytes_moved", "-5", "bytes moved must be"),
        ("flops", "nan", "FLOPs must be a finite number"),
    ],
)
def test_roofline_explorer_shows_bad_values_in_red(name, value, message):
    calc = widgets.roofline_explorer()
    calc.controls[name].value = value
    assert calc.error is not None and message in calc.error
    assert widgets.ERROR_COLOUR in calc.output.value
    assert "Traceback" not in calc.output.value
    calc.controls[name].value = "1e9"  # and it recovers
    assert calc.error is None


def test_decode_calculator_corrects_seed_000_13b_at_900_gbs():
    # Seed 000: "~15 ms to load a 13B FP16 model at 900 GB/s"; 26e9 bytes / 900e9 B/s = 28.9 ms.
    calc = widgets.decode_speed_calculator(model="llama-2-13b", dtype="fp16", gpu="v100-sxm2-32gb")
    n = PRESETS["llama-2-13b"].params
    expected_ms = n * 2 / gpu("v100-sxm2-32gb").memory_bandwidth_bytes_per_s * 1e3
    assert math.isclose(expected_ms, 28.9, rel_tol=0.02)
    assert f"{expected_ms:.3g} ms" in repr(calc)
    assert "memory-bound" in repr(calc)


def test_decode_calculator_batch_raises_total_but_never_per_sequence_speed():
    calc = widgets.decode_speed_calculator(model="llama-2-7b", dtype="bf16", gpu="h100-sxm")
    previous_total, previous_each = 0.0, math.inf
    for batch in (1, 8, 64, 512, 4096):
        calc.controls["batch"].value = str(batch)
        step = compute.decode_step(PRESETS["llama-2-7b"].params, "bf16", "h100-sxm", batch)
        assert f"{step.tokens_per_s:,.0f} tokens/s in all" in repr(calc)
        assert step.tokens_per_s >= previous_total
        assert step.tokens_per_s / batch <= previous_each
        previous_total, previous_each = step.tokens_per_s, step.tokens_per_s / batch
    assert "compute-bound" in repr(calc)  # 4096 is past the ridge (~295 on an H100)


def test_decode_calculator_warns_when_the_weights_do_not_fit():
    calc = widgets.decode_speed_calculator(model="llama-2-70b", dtype="fp16", gpu="a100-80gb-sxm")
    assert "do not fit" in repr(calc)
    calc.controls["dtype"].value = "int4"  # 35 GB fits 80 GB
    assert "do not fit" not in repr(calc)


@pytest.mark.parametrize("batch", [0, -3])
def test_decode_calculator_shows_a_bad_batch_in_red(batch):
    calc = widgets.decode_speed_calculator()
    calc.controls["batch"].value = str(batch)
    assert calc.error is not None and "batch must be a whole number from 1 to" in calc.error


def test_decode_step_compute_bound_batch_is_the_ridge_in_tokens():
    # H100 SXM bf16: 989.4e12 FLOP/s / 3.35e12 B/s = 295 FLOP/byte; 2 bytes per weight and
    # 2 FLOPs per weight per token -> ridge batch = 295.
    step = compute.decode_step(7e9, "bf16", "h100-sxm")
    card = gpu("h100-sxm")
    assert math.isclose(
        step.compute_bound_batch,
        card.dense_flop_per_s["bf16"] / card.memory_bandwidth_bytes_per_s,
        rel_tol=1e-12,
    )
    at_ridge = compute.decode_step(7e9, "bf16", "h100-sxm", batch=296)
    assert at_ridge.bound == "compute" and step.bound == "memory"


def test_decode_step_int4_weights_compute_in_fp16():
    step = compute.decode_step(7e9, "int4", "a100-80gb-sxm")
    assert step.compute_dtype == "fp16" and step.weights_bytes == 3.5e9


def test_parse_number_accepts_what_people_type():
    assert widgets.parse_number("x", " 2,000 ") == 2000.0
    assert widgets.parse_number("x", "1.5e12") == 1.5e12
    with pytest.raises(ValueError, match="x must be a number"):
        widgets.parse_number("x", "two")


@pytest.mark.parametrize("typed", ["2.5", "1e-3", "two", ""])
def test_decode_calculator_refuses_a_batch_that_is_not_a_whole_number(typed):
    """The batch box is a text box parsed as a whole number: '2.5' is refused, never read as 25."""
    calc = widgets.decode_speed_calculator(model="llama-2-7b", dtype="bf16", gpu="h100-sxm")
    calc.controls["batch"].value = typed
    assert calc.error is not None and calc.error.startswith("batch must be")
    calc.controls["batch"].value = "2,048"  # separators are fine
    assert calc.error is None and "batch 2048" in repr(calc).replace(",", "")


def test_widget_errors_use_the_on_screen_label_and_formatted_numbers():
    calc = widgets.roofline_explorer()
    calc.controls["bytes_moved"].value = "-5000000"
    assert calc.error.startswith(calc.controls["bytes_moved"].description + " must be")
    assert "-5,000,000" in calc.error and "-5000000" not in calc.error.replace("'", "")


def test_friendly_message_relabels_only_a_leading_parameter_name():
    labels = {"seq_len": "sequence length (tokens)", "batch": "batch size"}
    assert (
        widgets.friendly_message("seq_len must be <= 4096, got 100000", labels)
        == "sequence length (tokens) must be <= 4,096, got 100,000"
    )
    assert widgets.friendly_message("the batch is 1000", labels) == "the batch is 1,000"
    assert widgets.friendly_message("x must be like 2e12 on fp16, got '2.5'", labels) == (
        "x must be like 2e12 on fp16, got '2.5'"
    )
    assert widgets.friendly_message("n in 1..100,000", labels) == "n in 1..100,000"
    # a message that already names a control by its label is left alone, even if a key prefixes it
    both = {"spot": "spot $/h", "spot_overhead": "spot overhead %"}
    message = "spot overhead % must be >= 0, got -5"
    assert widgets.friendly_message(message, both) == message
    assert widgets.friendly_message("spot must be > 0", both) == "spot $/h must be > 0"
