"""Alpha-beta model, practice question 6 with numbers, the layout calculator, seed 000's rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import parallel as P
from course.claims import gpu_infrastructure
from course.facts.hardware import INTERCONNECTS
from course.facts.models import param_count, preset

LLAMA7 = preset("llama-2-7b")
LLAMA70 = preset("llama-2-70b")


@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_ring_collective_seconds_matches_the_ring_functions(n):
    args = (3e8, n, 2e11)
    kw = {"latency_s": 5e-6}
    assert P.ring_collective_seconds("all_reduce", *args, **kw) == pytest.approx(
        P.ring_allreduce_seconds(*args, **kw)
    )
    assert P.ring_collective_seconds("all_gather", *args, **kw) == pytest.approx(
        P.ring_allgather_seconds(*args, **kw)
    )
    assert P.ring_collective_seconds("reduce_scatter", *args, **kw) == pytest.approx(
        P.ring_reduce_scatter_seconds(*args, **kw)
    )
    assert P.ring_collective_seconds("broadcast", 3e8, n, 2e11) == pytest.approx(3e8 / 2e11)


@pytest.mark.parametrize("collective, n", [("all_reduce", 2), ("all_gather", 8),
                                           ("reduce_scatter", 4)])  # fmt: skip
def test_fit_alpha_beta_recovers_the_model_it_was_given(collective, n):
    sizes = [4e3, 6.5e4, 1e6, 1.6e7]
    times = [P.ring_collective_seconds(collective, s, n, 1.2e9, latency_s=2.5e-4) for s in sizes]
    fit = P.fit_alpha_beta(sizes, times, collective=collective, n=n)
    assert fit.latency_seconds == pytest.approx(2.5e-4)
    assert fit.bandwidth_bytes_per_s == pytest.approx(1.2e9)
    assert fit.r_squared == pytest.approx(1.0)
    assert fit.points == 4 and "Alpha-beta" in str(fit)


def test_fit_alpha_beta_bus_bandwidth_matches_nccl_tests_busbw_of_a_large_message():
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce
    n, size = 8, 1e9
    t = P.ring_allreduce_seconds(size, n, 3.7e11)
    busbw = P.bus_bandwidth(P.algorithm_bandwidth(size, t), n)
    fit = P.fit_alpha_beta([1e8, size], [P.ring_allreduce_seconds(1e8, n, 3.7e11), t], n=n)
    assert fit.bus_bandwidth_bytes_per_s == pytest.approx(busbw) == pytest.approx(3.7e11)


@pytest.mark.parametrize("sizes, times, match", [
    ([1e3, 1e3], [1e-3, 2e-3], "distinct"),
    ([1e3, 1e6], [2e-3, 1e-3], "grow"),
    ([1e3, 1e6, 1e7], [1e-3, 2e-3], "same length"),
    (None, [1e-3], "message_bytes"),
])  # fmt: skip
def test_fit_alpha_beta_refuses_what_it_cannot_fit(sizes, times, match):
    with pytest.raises(ValueError, match=match):
        P.fit_alpha_beta(sizes, times)


def test_practice_question_6_seven_b_gradients_across_8_gpus():
    """bf16 gradients of Llama-2-7B (6.74e9 params, 13.5 GB), ring all-reduce on 8 GPUs:
    2 x 7/8 x 13.5 GB / 450 GB/s = 52 ms on NVLink 4; / 63 GB/s = 374 ms on PCIe 5.0 x16;
    / 50 GB/s = 472 ms on one 400 Gb/s InfiniBand NDR port per GPU."""
    rows = P.gradient_allreduce_on_links(param_count(LLAMA7), 8)
    nvlink, pcie, ib = rows
    size = 2 * param_count(LLAMA7)
    assert nvlink.message_bytes == size
    assert nvlink.seconds == pytest.approx(1.75 * size / 450e9)
    assert pcie.seconds == pytest.approx(1.75 * size / 63e9)
    assert ib.seconds == pytest.approx(1.75 * size / 50e9)
    assert nvlink.seconds == pytest.approx(0.0524, abs=1e-3)
    assert pcie.seconds / nvlink.seconds == pytest.approx(450 / 63)
    assert nvlink.bus_bandwidth_bytes_per_s == INTERCONNECTS["nvlink4"].bandwidth


def test_nccl_reaches_370_of_nvlinks_450_gb_s():
    """NCCL's ring all-reduce reaches ~370 GB/s bus bandwidth on 8 H100s of the 450 GB/s line rate
    (S. Jeaugey, NCCL maintainer, github.com/NVIDIA/nccl-tests/issues/212, 2024-05-06)."""
    (row,) = P.gradient_allreduce_on_links(1e9, 8, links=("nvlink4",), efficiency=370 / 450)
    assert row.bus_bandwidth_bytes_per_s == pytest.approx(370e9)
    assert row.algorithm_bandwidth_bytes_per_s == pytest.approx(370e9 * 8 / 14)


def test_a_megatron_style_layout_fits_llama_70b_on_64_h100s_and_plain_dp_does_not():
    ok = P.layout_step(LLAMA70, nodes=8, data_parallel=4, tensor_parallel=8, pipeline_parallel=2,
                       microbatches=16)  # fmt: skip
    assert ok.fits == "yes" and ok.n_gpus == 64
    assert ok.step_seconds == pytest.approx(ok.compute_seconds + ok.bubble_seconds
        + ok.tensor_parallel_comm_seconds + ok.pipeline_comm_seconds
        + ok.data_parallel_comm_seconds)  # fmt: skip
    assert ok.bubble_seconds == pytest.approx(ok.compute_seconds * (2 - 1) / 16)
    dp = P.layout_step(LLAMA70, nodes=8, data_parallel=64, zero_stage=0, microbatches=1)
    assert dp.fits.startswith("no") and dp.memory_per_gpu_bytes > 1e12
    assert dp.tensor_parallel_comm_seconds == 0 and dp.bubble_seconds == 0


def test_compute_is_six_n_d_over_the_gpus():
    r = P.layout_step(LLAMA7, data_parallel=8, microbatches=4, micro_batch=2, seq_len=1024,
                      recompute="none", mfu=0.5)  # fmt: skip
    tokens = 8 * 4 * 2 * 1024
    assert r.global_batch == 64
    assert r.compute_seconds == pytest.approx(
        6 * param_count(LLAMA7) * tokens / (8 * 0.5 * 989.4e12)
    )
    full = P.layout_step(LLAMA7, data_parallel=8, microbatches=4, micro_batch=2, seq_len=1024,
                         recompute="full", mfu=0.5)  # fmt: skip
    assert full.compute_seconds == pytest.approx(r.compute_seconds * 8 / 6)


def test_data_parallel_over_infiniband_costs_more_than_inside_a_node():
    inside = P.layout_step(LLAMA7, gpus_per_node=8, nodes=1, data_parallel=8)
    across = P.layout_step(LLAMA7, gpus_per_node=1, nodes=8, data_parallel=8)
    assert across.data_parallel_comm_seconds / inside.data_parallel_comm_seconds == pytest.approx(
        INTERCONNECTS["nvlink4"].bandwidth / INTERCONNECTS["ib-ndr"].bandwidth
    )
    z3 = P.layout_step(LLAMA7, data_parallel=8, zero_stage=3)
    assert z3.data_parallel_comm_seconds == pytest.approx(1.5 * inside.data_parallel_comm_seconds)


@pytest.mark.parametrize("change, match", [
    ({"data_parallel": 4}, "must equal GPUs per node x nodes"),
    ({"data_parallel": 1, "tensor_parallel": 8, "pipeline_parallel": 1, "gpus_per_node": 4,
      "nodes": 2}, "at most GPUs per node"),
    ({"data_parallel": 1, "pipeline_parallel": 64, "nodes": 8}, "at most the model's"),
    ({"data_parallel": 2, "tensor_parallel": 4, "pipeline_parallel": 1, "gpus_per_node": 8,
      "nodes": 1, "config": preset("gpt2-xl")}, "heads"),
])  # fmt: skip
def test_impossible_layouts_are_refused_with_a_reason(change, match):
    kwargs = {"config": LLAMA7, "data_parallel": 8} | change
    config = kwargs.pop("config")
    with pytest.raises(ValueError, match=match):
        P.layout_step(config, **kwargs)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 256), more=st.integers(1, 256), p=st.sampled_from([2, 4, 8]))
def test_more_microbatches_shrink_the_layout_bubble(m, more, p):
    def bubble(k):
        return P.layout_step(LLAMA7, nodes=p, data_parallel=8, pipeline_parallel=p,
                             microbatches=k).bubble_fraction  # fmt: skip

    assert bubble(m + more) < bubble(m)


def test_seed_000_rule_as_written_and_what_it_misses():
    """'GPU Infrastructure & Computational Requirements', calculate_multi_gpu_efficiency."""
    dp = gpu_infrastructure.multi_gpu_efficiency_as_written(8, "data", 14, 64)
    assert dp == {"memory_per_gpu_gb": 14, "scaling_efficiency": pytest.approx(1 - 0.1 * 7 / 8)}
    # its data-parallel efficiency ignores the model size and the link altogether ...
    assert gpu_infrastructure.multi_gpu_efficiency_as_written(8, "data", 1400, 64) ["scaling_efficiency"] == \
        dp["scaling_efficiency"]  # fmt: skip
    # ... while the ring model's communication grows with the gradients and shrinks with the link
    small, big = (P.gradient_allreduce_on_links(p, 8, links=("pcie5",))[0].seconds
                  for p in (7e8, 7e10))  # fmt: skip
    assert big == pytest.approx(100 * small)
    # and its memory per GPU is the weights alone: ZeRO-0 mixed-precision Adam needs 8x that
    zero0 = P.zero_model_state_bytes_per_gpu(7e9, 8, 0)
    assert zero0.total_bytes / 14e9 == pytest.approx(8)
    # pipeline: it takes the batch size for the number of micro-batches
    pp = gpu_infrastructure.multi_gpu_efficiency_as_written(8, "pipeline", 140, 32)
    assert pp["scaling_efficiency"] == pytest.approx(1 - P.pipeline_bubble_fraction(8, 32) - 0.1)
    assert gpu_infrastructure.multi_gpu_efficiency_as_written(4, "model", 140, 1) == {
        "memory_per_gpu_gb": 35,
        "scaling_efficiency": pytest.approx(0.8),
    }


def test_tensor_parallel_moves_four_activation_all_reduces_per_layer():
    """Llama-2-70B, s = 4096, b = 1, bf16: S = 4096 x 8192 x 2 = 67 MB per all-reduce; on 8 GPUs
    each sends 4 x 2 x 7/8 x S = 470 MB per layer per micro-batch."""
    r = P.tensor_parallel_layer_comm(LLAMA70, seq_len=4096, tensor_parallel=8,
                                     bandwidth_bytes_per_s=450e9)  # fmt: skip
    assert r.message_bytes == 4096 * 8192 * 2
    assert r.bytes_sent_per_gpu == pytest.approx(4 * 1.75 * 4096 * 8192 * 2)
    assert r.seconds == pytest.approx(r.bytes_sent_per_gpu / 450e9)
    ib = P.tensor_parallel_layer_comm(LLAMA70, seq_len=4096, tensor_parallel=8,
                                      bandwidth_bytes_per_s=50e9)  # fmt: skip
    assert ib.seconds == pytest.approx(9 * r.seconds)
    assert P.tensor_parallel_layer_comm(LLAMA70, seq_len=4096, tensor_parallel=1).seconds == 0
