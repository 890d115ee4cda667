"""LoRA and gradient-accumulation calculators (course/calculators/finetune.py) against published
figures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import finetune
from course.facts import hardware
from course.facts.models import preset


def test_gpt3_lora_trainable_params_match_hu_et_al_table_4():
    # Hu et al. 2021, Table 4: GPT-3 175B, LoRA on W_q and W_v: 4.7 M (r=1) and 37.7 M (r=8).
    gpt3 = preset("gpt-3-175b")
    assert finetune.lora_params(gpt3, rank=8, targets=("q", "v")) == 37_748_736
    assert finetune.lora_params(gpt3, rank=1, targets=("q", "v")) == 4_718_592


def test_lora_counts_gqa_shapes_and_every_target():
    c = preset("llama-3-8b")  # K/V are 4096 x 1024 under grouped-query attention
    per_layer = 8 * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 3 * (4096 + 14336))
    assert finetune.lora_params(c, rank=8, targets=finetune.LORA_TARGETS) == 32 * per_layer


def test_lora_frozen_bf16_weights_of_gpt3_are_350_gb():
    # Hu et al. 2021, sec. 4.2: LoRA brings GPT-3 175B training to 350 GB of VRAM (the bf16
    # weights).
    m = finetune.lora_memory(preset("gpt-3-175b"), rank=4, targets=("q", "v"))
    assert m.lora_frozen_weights_bytes == pytest.approx(350e9, rel=0.01)
    assert m.full_states_bytes == 16 * m.params


def test_qlora_65b_fits_one_48gb_gpu():
    # Dettmers et al. 2023, "QLoRA": a 65B model fine-tuned on a single 48 GB GPU.
    llama65 = preset("llama-2-70b").replace(
        layers=80, hidden=8192, heads=64, kv_heads=64, ffn_hidden=22016
    )
    m = finetune.lora_memory(llama65, rank=64, targets=finetune.LORA_TARGETS, base_dtype="int4")
    assert 64e9 < m.params < 66e9
    assert m.lora_total_bytes < hardware.gpu("l40s").memory_bytes  # 48 GiB


def test_activations_are_added_to_both_sides_and_recompute_shrinks_them():
    c = preset("llama-2-13b")
    none = finetune.lora_memory(c, seq_len=2048, recompute="none")
    full = finetune.lora_memory(c, seq_len=2048, recompute="full")
    assert none.full_total_bytes - none.full_states_bytes == none.activations_bytes
    assert full.activations_bytes < none.activations_bytes
    assert 0 < none.saved_fraction < 1


def test_gate_target_needs_a_gated_mlp():
    with pytest.raises(ValueError, match="gate"):
        finetune.lora_params(preset("gpt2"), targets=("gate",))


def test_accumulation_steps_reach_the_global_batch():
    acc = finetune.accumulation_steps(512, 4, data_parallel=8, seq_len=2048)
    assert acc.steps == 16 and acc.tokens_per_step == 512 * 2048


def test_accumulation_refuses_a_global_batch_that_does_not_divide():
    with pytest.raises(ValueError, match="nearest: 96 or 128"):
        finetune.accumulation_steps(100, 4, data_parallel=8)


@settings(max_examples=30, deadline=None)
@given(rank=st.integers(1, 256), more=st.integers(1, 256))
def test_a_higher_rank_trains_more_parameters_and_needs_more_memory(rank, more):
    c = preset("llama-2-7b")
    low = finetune.lora_memory(c, rank=rank, targets=("q", "v"))
    high = finetune.lora_memory(c, rank=rank + more, targets=("q", "v"))
    assert high.trainable_params > low.trainable_params
    assert high.lora_total_bytes > low.lora_total_bytes < low.full_total_bytes
