"""Parallelism calculators: ZeRO's published figures, pipeline bubble, DP scaling."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import communication as C
from course.calculators import parallel as P
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
from course.facts.hardware import INTERCONNECTS
from course.facts.models import PRESETS, param_count, preset
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


LLAMA7 = preset("llama-2-7b")
LLAMA70 = preset("llama-2-70b")


def test_a_megatron_style_layout_fits_llama_70b_on_64_h100s_and_plain_dp_does_not():
    ok = P.layout_step(
        LLAMA70, nodes=8, data_parallel=4, tensor_parallel=8, pipeline_parallel=2, microbatches=16
    )
    assert ok.fits == "yes" and ok.n_gpus == 64
    assert ok.step_seconds == pytest.approx(
        ok.compute_seconds
        + ok.bubble_seconds
        + ok.tensor_parallel_comm_seconds
        + ok.pipeline_comm_seconds
        + ok.data_parallel_comm_seconds
    )
    assert ok.bubble_seconds == pytest.approx(ok.compute_seconds * (2 - 1) / 16)
    dp = P.layout_step(LLAMA70, nodes=8, data_parallel=64, zero_stage=0, microbatches=1)
    assert dp.fits.startswith("no") and dp.memory_per_gpu_bytes > 1e12
    assert dp.tensor_parallel_comm_seconds == 0 and dp.bubble_seconds == 0


def test_compute_counts_attention_and_the_recomputed_forward_at_the_gpus_own_peak():
    from course.calculators.compute import attention_flops_per_token, training_flops_with_attention

    r = P.layout_step(
        LLAMA7,
        data_parallel=8,
        microbatches=4,
        micro_batch=2,
        seq_len=1024,
        recompute="none",
        compute_hfu=0.5,
    )
    tokens = 8 * 4 * 2 * 1024
    assert r.global_batch == 64 and r.dtype == "bf16"
    assert r.model_flops == pytest.approx(training_flops_with_attention(LLAMA7, tokens, 1024))
    assert r.hardware_flops == r.model_flops
    assert r.compute_seconds == pytest.approx(r.model_flops / (8 * 0.5 * 989.4e12))
    full = P.layout_step(
        LLAMA7,
        data_parallel=8,
        microbatches=4,
        micro_batch=2,
        seq_len=1024,
        recompute="full",
        compute_hfu=0.5,
    )
    assert full.model_flops == r.model_flops and full.hfu / full.mfu == pytest.approx(
        training_flops_with_attention(LLAMA7, 1, 1024, recompute=True)
        / training_flops_with_attention(LLAMA7, 1, 1024)
    )  # about 4/3: HFU, not MFU
    selective = P.layout_step(
        LLAMA7, data_parallel=8, microbatches=4, micro_batch=2, seq_len=1024, compute_hfu=0.5
    )
    assert selective.hardware_flops - r.model_flops == pytest.approx(
        attention_flops_per_token(LLAMA7, 1024) * tokens
    )
    # at long context attention is no longer a rounding error against 6 N per token
    long = P.layout_step(LLAMA7, data_parallel=8, microbatches=1, seq_len=32768, recompute="none")
    assert long.model_flops / (8 * 32768) > 1.5 * 6 * param_count(LLAMA7)


#: Narayanan et al. 2021, Table 2, "PTD Parallelism" rows (checked against the paper's text, sec.
#: 5.2): parameters, model-parallel size (t x p, t = 8 throughout), global batch, micro-batch 1,
#: GPUs -> achieved teraFLOP/s per GPU.
NARAYANAN_TABLE_2 = {
    "175B": (96, 1536, {384: 153, 768: 149, 1536: 141}),
    "530B": (280, 2240, {560: 171, 1120: 167, 2240: 159}),
}
#: The 530B model of Table 1 (MT-NLG shape): 105 layers, hidden 20,480, 128 heads; every model of
#: the paper uses a vocabulary of 51,200 and sequences of 2,048.
MT_NLG_530B = dataclasses.replace(
    preset("gpt-3-175b"),
    name="mt-nlg-530b",
    layers=105,
    hidden=20480,
    heads=128,
    kv_heads=128,
    ffn_hidden=4 * 20480,
    vocab=51200,
)


@pytest.mark.parametrize("model", list(NARAYANAN_TABLE_2))
def test_layout_step_reproduces_narayanan_2021_table_2_on_a100s(model):
    """Narayanan et al. 2021, 'Efficient Large-Scale Language Model Training on GPU Clusters
    Using Megatron-LM', https://arxiv.org/abs/2104.04473, Table 2 (PTD parallelism, micro-batch 1,
    sequence 2,048; sec. 5: Selene, 8 A100 80GB per node on NVLink, 8 HDR InfiniBand ports):
    GPT-3 175B (model-parallel size 96: t = 8, p = 12; batch 1,536) at 153, 149 and 141 TFLOP/s
    per GPU on 384, 768 and 1,536 GPUs; the 530B model (280: t = 8, p = 35; batch 2,240) at 171,
    167 and 159 on 560, 1,120 and 2,240. Their FLOPs count the recomputed forward (eq. 3): an
    HFU. Calibrated once at the smallest cluster, the model predicts the two larger ones within
    2 %: the bubble (p - 1)/m grows as the batch is spread over more data-parallel replicas."""
    mp, batch, published = NARAYANAN_TABLE_2[model]
    cfg = preset("gpt-3-175b") if model == "175B" else MT_NLG_530B

    def run(n, hfu):
        d = n // mp
        return P.layout_step(
            cfg,
            gpu="a100-80gb-sxm",
            gpus_per_node=8,
            nodes=n // 8,
            data_parallel=d,
            tensor_parallel=8,
            pipeline_parallel=mp // 8,
            zero_stage=0,
            microbatches=batch // d,
            seq_len=2048,
            recompute="full",
            compute_hfu=hfu,
        )

    peak = 312e12
    (n0, x0), *others = published.items()
    probe = run(n0, 1.0)
    comm = probe.step_seconds - probe.compute_seconds - probe.bubble_seconds
    target_step = probe.hardware_flops / (n0 * x0 * 1e12)
    compute = (target_step - comm) / (1 + probe.bubble_seconds / probe.compute_seconds)
    hfu = probe.compute_seconds / compute  # the kernels' efficiency Megatron's figure implies
    assert run(n0, hfu).hfu * peak == pytest.approx(x0 * 1e12, rel=1e-9)
    for n, x in others:
        assert run(n, hfu).hfu * peak == pytest.approx(x * 1e12, rel=0.02)
    # 0.53 for 175B (the default compute_hfu, 0.5, is this rounded down), 0.59 for 530B
    assert 0.5 < hfu < (0.55 if model == "175B" else 0.62)
    assert run(n0, hfu).mfu < 0.8 * run(n0, hfu).hfu  # full recomputation: MFU is 3/4 of it


@pytest.mark.parametrize(
    "gpu, link",
    [
        ("h100-sxm", "nvlink4"),
        ("a100-80gb-sxm", "nvlink3"),
        ("b200", "nvlink5"),
        ("l40s", "pcie4"),
        ("rtx-4090", "pcie4"),
        ("h100-pcie", "pcie5"),
    ],
)
def test_each_gpu_is_priced_with_its_own_links(gpu, link):
    intra, inter = C.gpu_links(gpu)
    assert intra.name == INTERCONNECTS[link].name
    r = P.layout_step(
        LLAMA7, gpu=gpu, data_parallel=4, tensor_parallel=2, microbatches=4, seq_len=1024
    )
    assert r.intra_node_link == intra.name and r.inter_node_link == inter.name
    expected = C.tensor_parallel_layer_comm(
        LLAMA7, seq_len=1024, tensor_parallel=2, bandwidth_bytes_per_s=intra.bandwidth_bytes_per_s
    )
    assert r.tensor_parallel_comm_seconds == pytest.approx(32 * 4 * expected.seconds)


def test_a_v100_is_priced_in_fp16_on_its_own_nvlink():
    r = P.layout_step(
        LLAMA7,
        gpu="v100-sxm2-32gb",
        data_parallel=4,
        tensor_parallel=2,
        microbatches=4,
        seq_len=1024,
    )
    assert r.dtype == "fp16" and "no bf16" in r.notes
    assert "NVLink" in r.intra_node_link and "HDR" in r.inter_node_link


def test_interleaving_divides_the_bubble_and_grows_the_first_stage_activations():
    def run(v, m=16):
        return P.layout_step(
            LLAMA7,
            nodes=4,
            data_parallel=4,
            tensor_parallel=2,
            pipeline_parallel=4,
            microbatches=m,
            virtual_stages=v,
            recompute="none",
        )

    plain, inter = run(1), run(2)
    assert inter.bubble_seconds == pytest.approx(plain.bubble_seconds / 2)
    assert "interleaved v = 2" in inter.layout
    act = P.parallel_training_memory_per_gpu(
        LLAMA7,
        seq_len=4096,
        tensor_parallel=2,
        pipeline_parallel=4,
        data_parallel=4,
        sequence_parallel=True,
    )
    act2 = P.parallel_training_memory_per_gpu(
        LLAMA7,
        seq_len=4096,
        tensor_parallel=2,
        pipeline_parallel=4,
        data_parallel=4,
        sequence_parallel=True,
        virtual_stages=2,
    )
    assert act2.activations_bytes == pytest.approx(act.activations_bytes * (1 + 3 / 8))
    # fewer micro-batches than stages: only m in flight, and a note that the bubble dominates
    few = run(1, m=2)
    assert "fewer micro-batches (2) than stages (4)" in few.notes
    assert few.memory_per_gpu_bytes < plain.memory_per_gpu_bytes


def test_stages_that_do_not_divide_the_layers_are_noted_and_kv_heads_checked():
    r = P.layout_step(LLAMA7, nodes=3, data_parallel=8, pipeline_parallel=3, microbatches=8)
    assert "3 stages do not divide the 32 layers: the busiest stage has 11" in r.notes
    odd = dataclasses.replace(LLAMA7, heads=24, kv_heads=8, hidden=3072)
    with pytest.raises(ValueError, match="must divide the 8 K/V heads"):
        P.layout_step(odd, data_parallel=1, tensor_parallel=3, pipeline_parallel=1, gpus_per_node=3)
    mqa = P.layout_step(dataclasses.replace(LLAMA7, kv_heads=1), data_parallel=4, tensor_parallel=2)
    assert "copied 2 times" in mqa.notes


def test_data_parallel_over_infiniband_costs_more_than_inside_a_node():
    inside = P.layout_step(LLAMA7, gpus_per_node=8, nodes=1, data_parallel=8)
    across = P.layout_step(LLAMA7, gpus_per_node=1, nodes=8, data_parallel=8)
    assert across.data_parallel_comm_seconds / inside.data_parallel_comm_seconds == pytest.approx(
        INTERCONNECTS["nvlink4"].bandwidth_bytes_per_s
        / INTERCONNECTS["ib-ndr"].bandwidth_bytes_per_s
    )
    z3 = P.layout_step(LLAMA7, data_parallel=8, zero_stage=3)
    assert z3.data_parallel_comm_seconds == pytest.approx(1.5 * inside.data_parallel_comm_seconds)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"data_parallel": 4}, "must equal GPUs per node x nodes"),
        (
            {
                "data_parallel": 1,
                "tensor_parallel": 8,
                "pipeline_parallel": 1,
                "gpus_per_node": 4,
                "nodes": 2,
            },
            "at most GPUs per node",
        ),
        ({"data_parallel": 1, "pipeline_parallel": 64, "nodes": 8}, "at most the model's"),
        (
            {
                "data_parallel": 2,
                "tensor_parallel": 4,
                "pipeline_parallel": 1,
                "gpus_per_node": 8,
                "nodes": 1,
                "config": preset("gpt2-xl"),
            },
            "heads",
        ),
    ],
)
def test_impossible_layouts_are_refused_with_a_reason(change, match):
    kwargs = {"config": LLAMA7, "data_parallel": 8} | change
    config = kwargs.pop("config")
    with pytest.raises(ValueError, match=match):
        P.layout_step(config, **kwargs)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 256), more=st.integers(1, 256), p=st.sampled_from([2, 4, 8]))
def test_more_microbatches_shrink_the_layout_bubble(m, more, p):
    def bubble(k):
        return P.layout_step(
            LLAMA7, nodes=p, data_parallel=8, pipeline_parallel=p, microbatches=k
        ).bubble_fraction

    assert bubble(m + more) < bubble(m)
