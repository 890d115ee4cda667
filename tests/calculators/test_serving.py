"""KV-cache allocation and batching simulations (course/calculators/serving.py) against the
published anchors of Kwon et al. 2023 (vLLM) and hand-worked cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import memory, serving
from course.calculators.serving import Request

# OPT-13B: 40 layers, hidden 5,120 (40 heads of 128): 819,200 B of KV per token in fp16
# (Kwon et al. 2023, sec. 3: "800 KB").
OPT13B_KV = memory.kv_cache_bytes(40, 40, 128, 1)


def test_opt13b_kv_bytes_per_token_is_the_papers_800_kb():
    assert OPT13B_KV == 819_200


def test_contiguous_reservation_wastes_60_to_80_percent_on_a_sharegpt_like_mix():
    # Kwon et al. 2023, Fig. 2: earlier systems use 20.4-38.2 % of the KV memory they reserve.
    mix = serving.request_mix(2000, seed=0)
    result = serving.kv_allocation(mix, kv_bytes_per_token=OPT13B_KV, policy="contiguous")
    assert 0.60 <= result.wasted_fraction <= 0.80


def test_paging_wastes_under_4_percent():
    # Kwon et al. 2023, sec. 1 / Fig. 2: vLLM wastes under 4 % (96.3 % of the KV memory used).
    mix = serving.request_mix(2000, seed=0)
    result = serving.kv_allocation(mix, kv_bytes_per_token=OPT13B_KV, policy="paged")
    assert result.wasted_fraction < 0.04
    # the waste is only the partly filled last block: under one block per request
    assert result.wasted_bytes < len(mix) * 16 * OPT13B_KV


def test_paging_fits_more_requests_in_the_same_memory():
    mix = serving.request_mix(500, seed=1)
    budget = 12e9  # about what OPT-13B on a 40 GB A100 leaves for the cache (Kwon et al. Fig. 1)
    contiguous = serving.kv_allocation(
        mix, kv_bytes_per_token=OPT13B_KV, policy="contiguous", memory_bytes=budget
    )
    paged = serving.kv_allocation(mix, kv_bytes_per_token=OPT13B_KV, memory_bytes=budget)
    assert contiguous.batch_that_fits == int(budget // (2048 * OPT13B_KV)) == 7
    assert paged.batch_that_fits > 2 * contiguous.batch_that_fits


def test_exact_block_multiples_waste_nothing_when_paged():
    mix = [Request(16, 16), Request(30, 2)]
    result = serving.kv_allocation(mix, kv_bytes_per_token=1, block_tokens=16)
    assert result.wasted_bytes == 0 and result.reserved_bytes == 64


def test_a_request_longer_than_max_seq_len_is_refused():
    with pytest.raises(ValueError, match="max_seq_len"):
        serving.kv_allocation([Request(3000, 10)], kv_bytes_per_token=1, max_seq_len=2048)


def test_static_and_continuous_agree_when_every_request_is_alike():
    mix = [Request(10, 5) for _ in range(8)]
    static = serving.simulate_batching(
        mix, policy="static", max_batch=4, step_base_seconds=1, step_per_seq_seconds=0
    )
    cont = serving.simulate_batching(
        mix, policy="continuous", max_batch=4, step_base_seconds=1, step_per_seq_seconds=0
    )
    assert static.makespan_seconds == cont.makespan_seconds == 10
    assert static.tokens_per_second == cont.tokens_per_second == 4


def test_static_batching_waits_for_the_longest_request_by_hand():
    # two slots, requests of 1, 9 and 1 tokens at t=0, 1 s per step whatever the batch: static: {1,
    # 9} takes 9 s, then {1} ends at 10 s; continuous: the third joins at 1 s, ends at 2 s.
    mix = [Request(0, 1), Request(0, 9), Request(0, 1)]
    kw = dict(max_batch=2, step_base_seconds=1, step_per_seq_seconds=0)
    static = serving.simulate_batching(mix, policy="static", **kw)
    cont = serving.simulate_batching(mix, policy="continuous", **kw)
    assert static.makespan_seconds == 10 and cont.makespan_seconds == 9
    assert static.p50_latency_seconds == 9 and cont.p50_latency_seconds == 2


def test_continuous_batching_beats_static_on_a_varied_stream():
    mix = serving.request_mix(300, arrivals_per_second=10, seed=3)
    static = serving.simulate_batching(mix, policy="static", max_batch=16)
    cont = serving.simulate_batching(mix, policy="continuous", max_batch=16)
    assert cont.tokens_per_second > static.tokens_per_second
    assert cont.p99_latency_seconds < static.p99_latency_seconds
    assert cont.p50_latency_seconds <= cont.p99_latency_seconds


def test_idle_gaps_are_skipped_and_latency_is_service_time_when_unloaded():
    mix = [Request(0, 3, 0.0), Request(0, 3, 100.0)]
    result = serving.simulate_batching(mix, step_base_seconds=1, step_per_seq_seconds=0)
    assert result.p50_latency_seconds == 3 and result.makespan_seconds == 103


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 40), cap=st.integers(1, 8), seed=st.integers(0, 100))
def test_a_bigger_batch_limit_never_slows_continuous_batching(n, cap, seed):
    mix = serving.request_mix(n, mean_output_tokens=20, arrivals_per_second=5, seed=seed)
    small = serving.simulate_batching(mix, max_batch=cap, step_per_seq_seconds=0)
    big = serving.simulate_batching(mix, max_batch=cap + 4, step_per_seq_seconds=0)
    assert big.makespan_seconds <= small.makespan_seconds + 1e-9


@pytest.mark.parametrize("bad", [[], "abc", [1, 2], None])
def test_requests_must_be_request_objects(bad):
    with pytest.raises(ValueError, match="requests"):
        serving.kv_allocation(bad, kv_bytes_per_token=1)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 50), block=st.integers(1, 64), seed=st.integers(0, 100))
def test_paging_never_reserves_more_than_contiguous_and_wastes_under_a_block_each(n, block, seed):
    mix = serving.request_mix(n, max_seq_len=1024, seed=seed)
    paged = serving.kv_allocation(mix, kv_bytes_per_token=1, block_tokens=block, max_seq_len=1024)
    contiguous = serving.kv_allocation(
        mix, kv_bytes_per_token=1, policy="contiguous", max_seq_len=1024
    )
    assert paged.used_bytes == contiguous.used_bytes
    assert paged.reserved_bytes <= contiguous.reserved_bytes + n * block
    assert 0 <= paged.wasted_bytes < n * block
