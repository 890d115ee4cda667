"""The decision table (course/calculators/techniques.py); its widget:
tests/presentation/test_widgets_technique_chooser.py."""

from __future__ import annotations

import pytest

from course.calculators import finetune, memory, techniques
from course.facts.models import preset

C13 = preset("llama-2-13b")


def _names(r):
    return [row.name for row in r.rows]


@pytest.mark.parametrize("workload", techniques.WORKLOADS)
@pytest.mark.parametrize("constraint", techniques.CONSTRAINTS)
def test_every_case_ranks_rows_in_order_with_a_basis(workload, constraint):
    r = techniques.rank_techniques(
        C13, workload=workload, constraint=constraint, batch=4, seq_len=4096
    )
    assert r.rows and str(r) and "<table>" in r._repr_html_()
    for row in r.rows:
        assert row.basis.startswith(("calculated", "measured")) and row.trade_off
    if constraint != "too_costly":
        effects = [row.effect for row in r.rows]
        assert effects == sorted(effects, reverse=True)


def test_memory_rows_agree_with_the_calculators():
    r = techniques.rank_techniques(C13, workload="training", batch=1, seq_len=2048)
    rows = {row.name: row for row in r.rows}
    base = memory.training_memory(C13, batch=1, seq_len=2048).total_bytes
    full = memory.training_memory(C13, batch=1, seq_len=2048, recompute="full").total_bytes
    assert rows["full activation recomputation"].effect == pytest.approx(base - full)
    qlora = finetune.lora_memory(
        C13, rank=16, targets=finetune.LORA_TARGETS, base_dtype="int4", seq_len=2048
    )
    assert rows["QLoRA (4-bit frozen base + LoRA)"].effect == pytest.approx(
        base - qlora.lora_total_bytes
    )
    assert not any("accumulation" in n for n in rows)  # batch 1: nothing to split


def test_speed_rows_use_the_reference_run():
    r = techniques.rank_techniques(C13, workload="serving", constraint="too_slow")
    rows = {row.name: row for row in r.rows}
    # H100 reference run: 7.69 ms eager vs 6.38 ms CUDA graph at batch 1 -> 1.21x
    assert rows["CUDA graphs (launch overhead)"].effect == pytest.approx(7.694 / 6.382, rel=0.01)
    train = techniques.rank_techniques(C13, constraint="too_slow")
    fused = {row.name: row for row in train.rows}["fused attention (scaled_dot_product_attention)"]
    assert fused.effect == pytest.approx(139.1 / 27.35, rel=0.01)  # 139 ms vs 27 ms at 2,048


def test_measured_speedups_join_the_ranking():
    r = techniques.rank_techniques(C13, constraint="too_slow", measured={"torch.compile": 1.4})
    assert "torch.compile" in _names(r)
    with pytest.raises(ValueError, match="measured"):
        techniques.rank_techniques(C13, measured=[1.4])


def test_cost_rows_count_gpus_saved_first():
    r = techniques.rank_techniques(
        C13, workload="training", constraint="too_costly", batch=4, seq_len=4096
    )
    assert "GPUs" in r.rows[0].effect_text and r.rows[0].effect >= r.rows[1].effect
