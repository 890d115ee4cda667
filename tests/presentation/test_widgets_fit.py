"""The "will it fit?" widget (course.presentation.widgets.fit), driven as a learner would: set
values, read the output. Expected figures are derived here from the formulas' sources (ZeRO's 16
bytes/param, Korthikanti's activations, the KV-cache formula) and datasheet memory sizes, not
read back from the widget."""

from __future__ import annotations

import math
import re

import pytest

from course.calculators.memory import USABLE_MEMORY_FRACTION
from course.facts.hardware import gpu
from course.facts.models import PRESETS
from course.presentation.widgets.fit import CUSTOM, will_it_fit

H100 = gpu("h100-sxm").memory_bytes  # 80 GB, H100 datasheet


def test_defaults_answer_seed_003_question_3_train_7b_with_adam_mixed_precision():
    """Llama-2-7B, Adam, mixed precision, one 2,048-token sequence, one H100."""
    calc = will_it_fit()
    text = repr(calc)
    assert calc.error is None
    cfg = PRESETS["llama-2-7b"]
    n, s, h, a, L, V = cfg.params, 2048, cfg.hidden, cfg.heads, cfg.layers, cfg.vocab
    states = 16 * n  # ZeRO (Rajbhandari et al. 2019): 2 + 2 + 12 bytes/param
    activations = L * s * h * (34 + 5 * a * s / h) + 4 * s * V  # Korthikanti 2022 + fp32 logits
    total = states + activations
    assert calc.result.report.total_bytes == pytest.approx(total, rel=1e-3)
    needed = math.ceil(total / (H100 * USABLE_MEMORY_FRACTION))
    assert needed == 2 == calc.result.gpus_needed and not calc.result.fits
    assert "Does not fit on 1 x" in text
    assert f"GPUs needed: {needed} x NVIDIA H100" in text


def test_two_gpus_make_it_fit_and_the_bar_shows_every_part():
    calc = will_it_fit(n_gpus=2)
    assert "Fits on 2 x" in repr(calc)
    out = calc.output.value
    for part in ("weights", "gradients", "fp32 master weights", "optimizer states", "activations"):
        assert f'title="{part}"' in out
    widths = [float(w) for w in re.findall(r"width:([\d.]+)%;background", out)]
    assert len(widths) == 5 and sum(widths) <= 100.01


@pytest.mark.parametrize(
    ("precision", "per_param"), [("mixed", 16), ("mixed_fp32_grads", 18), ("fp32", 16)]
)
def test_custom_size_counts_model_states_only(precision, per_param):
    """A bare 7e9: 16 bytes/param (ZeRO) or 18 with fp32 gradients (seed 003's figure)."""
    calc = will_it_fit()
    calc.controls["model"].value = CUSTOM
    calc.controls["params"].value = "7e9"
    calc.controls["precision"].value = precision
    assert calc.result.report.total_bytes == pytest.approx(per_param * 7e9, rel=1e-9)
    assert "activations and the KV cache are not counted" in repr(calc)


def test_inference_of_7b_fits_one_h100_and_70b_does_not():
    calc = will_it_fit(mode="inference", seq_len=4096)
    text = repr(calc)
    assert "Fits on 1 x" in text
    cfg = PRESETS["llama-2-7b"]
    kv = 2 * cfg.layers * cfg.kv_heads * cfg.head_dim * 4096 * 2  # K and V, bf16
    assert calc.result.report.kv_cache_bytes == pytest.approx(kv, rel=1e-9)
    calc.controls["model"].value = "llama-2-70b"
    assert "Does not fit on 1 x" in repr(calc)  # 140 GB of bf16 weights > 80 GB


def test_grouped_query_attention_shrinks_the_kv_cache_fourfold():
    """Llama-2-7B caches 32 K/V heads per layer, Llama-3-8B 8 (both 32 layers of 128-dim heads)."""
    calc = will_it_fit(mode="inference", seq_len=4096, batch=8)  # Llama-2's context window
    mha = calc.result.report.kv_cache_bytes
    calc.controls["model"].value = "llama-3-8b"
    gqa = calc.result.report.kv_cache_bytes
    assert mha == pytest.approx(2 * 32 * 32 * 128 * 4096 * 8 * 2, rel=1e-9)  # 17.2 GB
    assert mha / gqa == pytest.approx(4, rel=0.01)


@pytest.mark.parametrize(
    ("control", "value", "message"),
    [
        ("batch", "0", "batch must be a whole number from 1 to"),
        ("batch", "four", "batch must be a whole number"),
        ("seq_len", "1.5", "sequence length (tokens) must be a whole number"),
        ("n_gpus", "0", "GPUs you have must be a whole number from 1 to 100,000"),
        ("params", "-1", "parameters (custom size) must be"),
    ],
)
def test_bad_values_show_the_message_in_red_not_a_traceback(control, value, message):
    calc = will_it_fit(model=CUSTOM if control == "params" else "llama-2-7b")
    calc.controls[control].value = value
    assert calc.error is not None and message in calc.error
    assert "color:#b00020" in calc.output.value
    calc.controls[control].value = "1"  # a good value brings the result back
    assert calc.error is None


def test_controls_that_do_not_apply_are_greyed_out():
    calc = will_it_fit()
    assert not calc.controls["precision"].disabled and calc.controls["dtype"].disabled
    assert calc.controls["params"].disabled
    calc.controls["mode"].value = "inference"
    assert calc.controls["precision"].disabled and not calc.controls["dtype"].disabled
    calc.controls["model"].value = CUSTOM
    assert not calc.controls["params"].disabled


def test_recomputation_and_8bit_adam_lower_the_total():
    calc = will_it_fit()
    base = calc.result.report.total_bytes
    calc.controls["recompute"].value = "full"
    full = calc.result.report.total_bytes
    calc.controls["optimizer"].value = "adam_8bit"
    both = calc.result.report.total_bytes
    assert both < full < base


def test_the_widget_prints_nothing(capsys):
    """Anything printed would land in the cell's stdout under nbval."""
    calc = will_it_fit()
    calc.controls["batch"].value = "x"
    calc.controls["batch"].value = "4"
    assert capsys.readouterr().out == ""


def test_a_calculator_error_names_the_control_as_the_learner_sees_it():
    """memory.training_memory raises about 'seq_len'; the widget says 'sequence length (tokens)'."""
    calc = will_it_fit(model="gpt2-xl")
    calc.controls["seq_len"].value = "100000"  # GPT-2 XL reads at most 1,024 tokens
    assert calc.error is not None, repr(calc)
    assert calc.error.startswith(calc.controls["seq_len"].description)
    assert "seq_len" not in calc.error and "100,000" in calc.error and "1,024" in calc.error
