"""Calculator results the widgets now read instead of computing them (issue "Widgets under any
input"): the KV cache in a serving replica, rent for as many GPUs as are bought, LoRA on the
matrices a model has, and durations too long to print digit by digit."""

from __future__ import annotations

import math

import pytest

from course.calculators import cloud, finetune, inference, techniques
from course.facts import hardware, units
from course.facts.models import PRESETS

LLAMA_7B = PRESETS["llama-2-7b"]


def test_a_serving_replica_holds_the_kv_cache_of_its_batch_not_just_the_weights():
    # Llama-2-7B (Touvron et al. 2023: 32 layers, hidden 4,096, no GQA) keeps K and V of 2 bytes
    # per layer per hidden unit: 2 x 32 x 4,096 x 2 = 512 KiB per token.
    assert LLAMA_7B.layers * LLAMA_7B.kv_heads * LLAMA_7B.head_dim * 2 * 2 == 512 * 1024
    s = inference.serving(
        LLAMA_7B,
        "a100-80gb-sxm",
        requests_per_s=10,
        prompt_tokens=512,
        output_tokens=256,
        batch=1000,
    )
    kv = 512 * 1024 * (512 + 256) * 1000  # 375 GiB: the lesson-05 case that said "2 GPUs"
    assert s.kv_cache_bytes == pytest.approx(kv)
    need = math.ceil((s.weights_bytes + kv) / (0.9 * hardware.gpu("a100-80gb-sxm").memory_bytes))
    assert s.gpus_per_replica == need >= 6
    small = inference.serving(LLAMA_7B, "a100-80gb-sxm", requests_per_s=10, batch=1)
    assert small.gpus_per_replica == 1  # 13.5 GB of weights and one sequence fit on one


def test_serving_refuses_a_context_beyond_the_model_window():
    with pytest.raises(ValueError, match="context window"):
        inference.serving(
            PRESETS["gpt2"], "h100-sxm", requests_per_s=1, prompt_tokens=1000, output_tokens=100
        )


def test_serving_footprint_is_gpus_at_tdp_for_the_time_of_a_million_tokens():
    card = hardware.gpu("h100-sxm")
    s = inference.serving(LLAMA_7B, card, requests_per_s=10)
    fp = inference.serving_footprint(s, card, usd_per_kwh=0.1, pue=1.5, grid_g_per_kwh=400)
    seconds = 1e6 / (10 * 256)  # 10 requests/s x 256 output tokens
    joules = s.gpus * card.tdp_watts * seconds * 1.5
    assert fp.energy_joules == pytest.approx(joules)
    assert fp.electricity_usd == pytest.approx(joules / units.KWH * 0.1)
    assert fp.co2_kg == pytest.approx(joules / units.KWH * 0.4)
    assert fp.total_usd == pytest.approx(s.usd_per_million_output_tokens + fp.electricity_usd)


def test_serving_refuses_an_efficiency_that_needs_more_gpus_than_exist():
    with pytest.raises(ValueError, match="efficiency is too small"):
        inference.serving(LLAMA_7B, "h100-sxm", requests_per_s=10, efficiency=1e-300)


def test_rent_to_match_rents_as_many_gpus_as_are_bought():
    one = cloud.instance("runpod-h100-sxm")
    r = cloud.rent_to_match("runpod-h100-sxm", 8)
    assert (r.instances, r.gpus_rented) == (8, 8)
    assert r.on_demand_usd_per_hour == pytest.approx(8 * one.usd_per_hour)
    p5 = cloud.rent_to_match("aws-p5.48xlarge", 12)  # 8 GPUs each: two instances
    assert (p5.instances, p5.gpus_rented) == (2, 16)
    assert cloud.rent_to_match("gcp-a3-highgpu-8g", 8).on_demand_usd_per_hour is None


def test_lora_targets_are_the_matrices_the_model_has():
    assert finetune.lora_targets(LLAMA_7B) == finetune.LORA_TARGETS
    assert finetune.lora_targets(PRESETS["gpt2"]) == ("q", "k", "v", "o", "up", "down")


@pytest.mark.parametrize("model", list(PRESETS))
def test_the_technique_table_ranks_every_preset(model):
    config = PRESETS[model]
    r = techniques.rank_techniques(config, seq_len=min(2048, config.max_positions))
    assert r.rows


def test_a_v100_gets_fp16_mixed_precision_in_the_speed_rows():
    r = techniques.rank_techniques(LLAMA_7B, constraint="too_slow", gpu="v100-sxm2-32gb")
    card = hardware.gpu("v100-sxm2-32gb")
    row = next(t for t in r.rows if "mixed precision" in t.name)
    assert row.name.startswith("fp16")
    assert row.effect == pytest.approx(
        card.dense_flop_per_s["fp16"] / card.dense_flop_per_s["fp32"]
    )


def test_durations_beyond_a_million_years_print_in_scientific_notation():
    assert units.fmt_seconds(2 * units.YEAR) == "2.0 years"
    text = units.fmt_seconds(1e300)
    assert text.endswith("years") and len(text) < 20
