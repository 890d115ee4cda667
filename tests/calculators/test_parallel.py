"""Parallelism calculators: ZeRO's published figures, pipeline bubble, DP scaling."""

from __future__ import annotations

import pytest

from course.calculators.communication import (
    ring_allreduce_seconds,
)
from course.calculators.memory import activation_bytes_per_layer, model_state_bytes
from course.calculators.parallel import (
    data_parallel_step_seconds,
    parallel_training_memory_per_gpu,
    pipeline_bubble_fraction,
    pipeline_bubble_overhead,
    zero_model_state_bytes_per_gpu,
)
from course.facts.models import PRESETS
from course.facts.units import GB


@pytest.mark.parametrize(
    ("stage", "published_gb"),
    [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_zero_paper_figure_1_per_gpu_memory(stage, published_gb):
    """Rajbhandari et al. 2019, Fig. 1: 7.5B parameters, N_d = 64 GPUs, K = 12 (mixed-precision
    Adam): baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per GPU (rounded to
    0.1)."""
    per_gpu = zero_model_state_bytes_per_gpu(7.5e9, 64, stage).total_bytes
    assert per_gpu / GB == pytest.approx(published_gb, abs=0.05)


def test_zero_stage_3_is_full_sharding_total_over_n():
    per_gpu = zero_model_state_bytes_per_gpu(7e9, 8, 3)
    assert per_gpu.total_bytes == pytest.approx(model_state_bytes(7e9).total_bytes / 8)


def test_zero_with_one_gpu_changes_nothing():
    for stage in (0, 1, 2, 3):
        assert zero_model_state_bytes_per_gpu(1e9, 1, stage).total_bytes == 16e9


def test_zero_stage_4_does_not_exist():
    with pytest.raises(ValueError, match="stage must be one of 0, 1, 2, 3; got 4"):
        zero_model_state_bytes_per_gpu(1e9, 8, 4)


def test_gpipe_bubble_matches_seed_000_and_huang_2019():
    """GPipe bubble (p - 1)/(m + p - 1) = 1 - m/(m + p - 1) (seed 000's form; Huang et al. 2019)."""
    p, m = 4, 8
    assert pipeline_bubble_fraction(p, m) == pytest.approx(1 - m / (m + p - 1)) == 3 / 11
    assert pipeline_bubble_fraction(1, 8) == 0


def test_megatron_bubble_overhead_is_p_minus_1_over_m_and_interleaving_divides_it():
    """Narayanan et al. 2021, sec. 2.2 (pipeline schedules): bubble time fraction (p - 1)/m of
    the ideal time; the interleaved schedule with v chunks per GPU divides it by v."""
    assert pipeline_bubble_overhead(8, 32) == 7 / 32
    assert pipeline_bubble_overhead(8, 32, virtual_stages=4) == 7 / 128
    overhead = pipeline_bubble_overhead(8, 32)
    assert pipeline_bubble_fraction(8, 32) == pytest.approx(overhead / (1 + overhead))


def test_data_parallel_step_exposes_only_what_backward_cannot_hide():
    step = data_parallel_step_seconds(0.1, 14e9, 8, 450e9, overlap=0.5)
    comm = ring_allreduce_seconds(14e9, 8, 450e9)
    assert step.exposed_communication_seconds == pytest.approx(comm - 0.05)
    assert step.step_seconds == pytest.approx(0.1 + comm - 0.05)
    assert step.scaling_efficiency == pytest.approx(0.1 / step.step_seconds)
    assert step.speedup == pytest.approx(8 * step.scaling_efficiency)
    hidden = data_parallel_step_seconds(1.0, 14e9, 8, 450e9, overlap=0.66)
    assert hidden.scaling_efficiency == 1.0


def test_first_pipeline_stage_holds_all_layers_activations_whatever_p():
    """Korthikanti et al. 2022, sec. 4 (pipeline parallelism): with 1F1B the first stage keeps p
    micro-batches of L/p layers: L layers' worth of activations, independent of p."""
    cfg = PRESETS["gpt-3-175b"]
    per_layer = activation_bytes_per_layer(
        2048, 1, 12288, 96, tensor_parallel=8, sequence_parallel=True, recompute="selective"
    )
    for p in (2, 4, 8, 16):
        m = parallel_training_memory_per_gpu(
            cfg,
            seq_len=2048,
            tensor_parallel=8,
            pipeline_parallel=p,
            sequence_parallel=True,
            recompute="selective",
        )
        assert m.activations_bytes == pytest.approx(96 * per_layer)


def test_gpt3_on_megatron_layout_fits_an_80_gb_gpu():
    """Narayanan et al. 2021, Table 1: GPT-3 175B trained with t = 8, p = 16 on 80 GB A100s.
    Busiest GPU (first stage, selective recompute + sequence parallelism): ~33 GB < 80 GB."""
    m = parallel_training_memory_per_gpu(
        PRESETS["gpt-3-175b"],
        seq_len=2048,
        tensor_parallel=8,
        pipeline_parallel=16,
        sequence_parallel=True,
        recompute="selective",
    )
    assert 25 * GB < m.total_bytes < 80 * GB
    assert m.params_per_gpu == pytest.approx(175e9 / 128, rel=0.06)


def test_one_gpu_parallel_memory_equals_model_states_plus_activations():
    cfg = PRESETS["llama-2-7b"]
    m = parallel_training_memory_per_gpu(cfg, seq_len=1024, recompute="selective")
    act = 32 * activation_bytes_per_layer(1024, 1, 4096, 32, recompute="selective")
    logits = 4 * 1024 * 32000
    assert m.total_bytes == pytest.approx(16 * cfg.params + act + logits)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pipeline_parallel": 33}, "pipeline_parallel must be an integer >= 1 and <= 32"),
        ({"tensor_parallel": 3}, "tensor_parallel must divide heads"),
        ({"zero_stage": 4}, "zero_stage must be one of"),
        ({"seq_len": 0}, "seq_len must be an integer >= 1"),
    ],
)
def test_impossible_layouts_raise_value_error(change, message):
    kwargs = {"seq_len": 1024} | change
    with pytest.raises(ValueError, match=message):
        parallel_training_memory_per_gpu(PRESETS["llama-2-7b"], **kwargs)
