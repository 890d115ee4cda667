"""Communication calculators: the ring collectives and their bus bandwidth (nccl-tests
PERFORMANCE.md), the alpha-beta fit, practice question 6 with numbers on real links, tensor
parallelism's all-reduces."""

from __future__ import annotations

import pytest

from course.calculators import communication as C
from course.calculators.communication import (
    algorithm_bandwidth_bytes_per_s,
    bus_bandwidth_bytes_per_s,
    ring_allgather_seconds,
    ring_allreduce_seconds,
    ring_reduce_scatter_seconds,
)
from course.facts.hardware import INTERCONNECTS
from course.facts.models import param_count, preset

LLAMA7 = preset("llama-2-7b")
LLAMA70 = preset("llama-2-70b")


def test_ring_allreduce_moves_2_n_minus_1_over_n_of_the_message():
    """14 GB of fp16 gradients (7B) over 8 GPUs at 450 GB/s per direction (NVLink 4):
    2 x 7/8 x 14e9 / 450e9 = 54.4 ms."""
    t = ring_allreduce_seconds(14e9, 8, 450e9)
    assert t == pytest.approx(2 * 7 / 8 * 14e9 / 450e9)
    assert ring_allreduce_seconds(14e9, 1, 450e9) == 0
    assert ring_allreduce_seconds(0, 8, 1e9, latency_seconds=1e-5) == pytest.approx(14e-5)


def test_allreduce_is_reduce_scatter_then_all_gather():
    s, n, bw, lat = 1e9, 16, 25e9, 5e-6
    assert ring_allreduce_seconds(s, n, bw, latency_seconds=lat) == pytest.approx(
        ring_reduce_scatter_seconds(s, n, bw, latency_seconds=lat)
        + ring_allgather_seconds(s, n, bw, latency_seconds=lat)
    )


def test_bus_bandwidth_factors_follow_nccl_tests():
    """nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n
    (all-gather, reduce-scatter), x 1 (broadcast)."""
    algbw = algorithm_bandwidth_bytes_per_s(1e9, 0.01)
    assert algbw == 1e11
    assert bus_bandwidth_bytes_per_s(algbw, 8) == pytest.approx(1e11 * 14 / 8)
    assert bus_bandwidth_bytes_per_s(algbw, 8, collective="all_gather") == pytest.approx(
        1e11 * 7 / 8
    )
    assert bus_bandwidth_bytes_per_s(algbw, 8, collective="broadcast") == 1e11


def test_ring_allreduce_bus_bandwidth_equals_the_link_bandwidth():
    """The point of busbw: for an ideal ring, busbw equals the link's bandwidth for any n."""
    for n in (2, 4, 8, 64):
        t = ring_allreduce_seconds(1e9, n, 50e9)
        assert bus_bandwidth_bytes_per_s(
            algorithm_bandwidth_bytes_per_s(1e9, t), n
        ) == pytest.approx(50e9)


def test_collectives_reject_zero_bandwidth_and_zero_ranks():
    with pytest.raises(ValueError, match="bandwidth_bytes_per_s must be"):
        ring_allreduce_seconds(1e9, 8, 0)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        ring_allgather_seconds(1e9, 0, 1e9)
    with pytest.raises(ValueError, match="collective must be one of"):
        bus_bandwidth_bytes_per_s(1e9, 8, collective="all_to_all")


@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_ring_collective_seconds_matches_the_ring_functions(n):
    args = (3e8, n, 2e11)
    kw = {"latency_seconds": 5e-6}
    assert C.ring_collective_seconds("all_reduce", *args, **kw) == pytest.approx(
        C.ring_allreduce_seconds(*args, **kw)
    )
    assert C.ring_collective_seconds("all_gather", *args, **kw) == pytest.approx(
        C.ring_allgather_seconds(*args, **kw)
    )
    assert C.ring_collective_seconds("reduce_scatter", *args, **kw) == pytest.approx(
        C.ring_reduce_scatter_seconds(*args, **kw)
    )
    assert C.ring_collective_seconds("broadcast", 3e8, n, 2e11) == pytest.approx(3e8 / 2e11)


@pytest.mark.parametrize(
    "collective, n", [("all_reduce", 2), ("all_gather", 8), ("reduce_scatter", 4)]
)
def test_fit_alpha_beta_recovers_the_model_it_was_given(collective, n):
    sizes = [4e3, 6.5e4, 1e6, 1.6e7]
    times = [
        C.ring_collective_seconds(collective, s, n, 1.2e9, latency_seconds=2.5e-4) for s in sizes
    ]
    fit = C.fit_alpha_beta(sizes, times, collective=collective, n=n)
    assert fit.latency_seconds == pytest.approx(2.5e-4)
    assert fit.bandwidth_bytes_per_s == pytest.approx(1.2e9)
    assert fit.r_squared == pytest.approx(1.0)
    assert fit.points == 4 and "Alpha-beta" in str(fit)


def test_fit_alpha_beta_bus_bandwidth_matches_nccl_tests_busbw_of_a_large_message():
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce
    n, size = 8, 1e9
    t = C.ring_allreduce_seconds(size, n, 3.7e11)
    busbw = C.bus_bandwidth_bytes_per_s(C.algorithm_bandwidth_bytes_per_s(size, t), n)
    fit = C.fit_alpha_beta([1e8, size], [C.ring_allreduce_seconds(1e8, n, 3.7e11), t], n=n)
    assert fit.bus_bandwidth_bytes_per_s == pytest.approx(busbw) == pytest.approx(3.7e11)


@pytest.mark.parametrize(
    "sizes, times, match",
    [
        ([1e3, 1e3], [1e-3, 2e-3], "distinct"),
        ([1e3, 1e6], [2e-3, 1e-3], "grow"),
        ([1e3, 1e6, 1e7], [1e-3, 2e-3], "same length"),
        (None, [1e-3], "message_bytes"),
    ],
)
def test_fit_alpha_beta_refuses_what_it_cannot_fit(sizes, times, match):
    with pytest.raises(ValueError, match=match):
        C.fit_alpha_beta(sizes, times)


def test_practice_question_6_seven_b_gradients_across_8_gpus():
    """bf16 gradients of Llama-2-7B (6.74e9 params, 13.5 GB), ring all-reduce on 8 GPUs:
    2 x 7/8 x 13.5 GB / 450 GB/s = 52 ms on NVLink 4; / 63 GB/s = 374 ms on PCIe 5.0 x16;
    / 50 GB/s = 472 ms on one 400 Gb/s InfiniBand NDR port per GPU."""
    rows = C.gradient_allreduce_on_links(param_count(LLAMA7), 8)
    nvlink, pcie, ib = rows
    size = 2 * param_count(LLAMA7)
    assert nvlink.message_bytes == size
    assert nvlink.seconds == pytest.approx(1.75 * size / 450e9)
    assert pcie.seconds == pytest.approx(1.75 * size / 63e9)
    assert ib.seconds == pytest.approx(1.75 * size / 50e9)
    assert nvlink.seconds == pytest.approx(0.0524, abs=1e-3)
    assert pcie.seconds / nvlink.seconds == pytest.approx(450 / 63)
    assert nvlink.bus_bandwidth_bytes_per_s == INTERCONNECTS["nvlink4"].bandwidth_bytes_per_s


def test_nccl_reaches_370_of_nvlinks_450_gb_s():
    """NCCL's ring all-reduce reaches ~370 GB/s bus bandwidth on 8 H100s of the 450 GB/s line rate
    (S. Jeaugey, NCCL maintainer, github.com/NVIDIA/nccl-tests/issues/212, 2024-05-06)."""
    (row,) = C.gradient_allreduce_on_links(1e9, 8, links=("nvlink4",), efficiency=370 / 450)
    assert row.bus_bandwidth_bytes_per_s == pytest.approx(370e9)
    assert row.algorithm_bandwidth_bytes_per_s == pytest.approx(370e9 * 8 / 14)


def test_tensor_parallel_moves_four_activation_all_reduces_per_layer():
    """Llama-2-70B, s = 4096, b = 1, bf16: S = 4096 x 8192 x 2 = 67 MB per all-reduce; on 8 GPUs
    each sends 4 x 2 x 7/8 x S = 470 MB per layer per micro-batch."""
    r = C.tensor_parallel_layer_comm(
        LLAMA70, seq_len=4096, tensor_parallel=8, bandwidth_bytes_per_s=450e9
    )
    assert r.message_bytes == 4096 * 8192 * 2
    assert r.bytes_sent_per_gpu == pytest.approx(4 * 1.75 * 4096 * 8192 * 2)
    assert r.seconds == pytest.approx(r.bytes_sent_per_gpu / 450e9)
    ib = C.tensor_parallel_layer_comm(
        LLAMA70, seq_len=4096, tensor_parallel=8, bandwidth_bytes_per_s=50e9
    )
    assert ib.seconds == pytest.approx(9 * r.seconds)
    assert C.tensor_parallel_layer_comm(LLAMA70, seq_len=4096, tensor_parallel=1).seconds == 0
