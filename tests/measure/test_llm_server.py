"""The lesson-13 server: paged decoding is exact, memory matches lesson 07's calculator, and the
server and load generator leave no thread or port behind, also after client errors."""

from __future__ import annotations

import asyncio
import math
import socket
import threading

import pytest
import torch

from course.calculators import serving
from course.measure import llm_server, loadgen
from course.measure.decoding import serve_model

CFG = llm_server.MODEL_CONFIG


@pytest.fixture(scope="module")
def model():
    return serve_model(CFG)


def _closed(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


def _server_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("llm-server", "loadgen"))]


def test_paged_decoding_equals_the_plain_model(model):
    cache = llm_server.PagedKVCache(CFG, 32, block_tokens=4)
    dec = llm_server.PagedDecoder(model, cache)
    g = torch.Generator().manual_seed(0)
    prompts = [torch.randint(0, CFG.vocab, (n,), generator=g).tolist() for n in (9, 3, 1)]
    seqs = [p + [dec.prefill(i, p)] for i, p in enumerate(prompts)]
    for _ in range(7):  # sequences of different lengths share every step
        for s, t in zip(seqs, dec.decode([0, 1, 2], [s[-1] for s in seqs]), strict=True):
            s.append(t)
    with torch.inference_mode():
        for p, s in zip(prompts, seqs, strict=True):
            ref = model(torch.tensor([s[:-1]]))[0].argmax(-1).tolist()
            assert ref[len(p) - 1 :] == s[len(p) :]
    assert CFG.kv_heads < CFG.heads  # grouped-query attention is exercised


def test_peak_blocks_match_lesson_07s_paged_calculator(model):
    mix = [serving.Request(p, o) for p, o in ((5, 7), (16, 1), (1, 30), (9, 9))]
    bt = 8
    cache = llm_server.PagedKVCache(CFG, 64, block_tokens=bt)
    dec = llm_server.PagedDecoder(model, cache)
    last = {i: dec.prefill(i, [1] * r.prompt_tokens) for i, r in enumerate(mix)}
    for _ in range(max(r.output_tokens for r in mix)):  # feed every answer token back in
        live = [i for i, r in enumerate(mix) if cache.lengths[i] < r.tokens]
        for i, t in zip(live, dec.decode(live, [last[i] for i in live]), strict=True):
            last[i] = t
    alloc = serving.kv_allocation(
        mix, kv_bytes_per_token=1, policy="paged", block_tokens=bt, max_seq_len=64
    )
    assert cache.peak_blocks * bt == alloc.reserved_bytes
    for i in range(len(mix)):
        cache.release(i)
    assert cache.used_blocks == 0


def _mix(n, rate=200.0, seed=0):
    return serving.request_mix(
        n,
        mean_prompt_tokens=6,
        mean_output_tokens=6,
        max_seq_len=40,
        arrivals_per_second=rate,
        seed=seed,
    )


@pytest.mark.parametrize("policy", llm_server.POLICIES)
def test_server_serves_every_token_and_leaves_nothing(model, policy):
    engine = llm_server.Engine(model, policy=policy, max_batch=4, num_blocks=64)
    mix = _mix(10)
    with llm_server.running_server(engine) as srv:
        port = srv.port
        assert not _closed(port)
        recs = loadgen.run_load(srv.host, port, mix, vocab=CFG.vocab, budget_seconds=60)
    assert [r.received_tokens for r in recs] == [r.output_tokens for r in mix]
    assert all(r.ok and 0 < r.ttft_seconds <= r.e2e_seconds for r in recs)
    assert all(len(r.itl_seconds) == r.received_tokens - 1 for r in recs)
    assert engine.stats.completed == 10 and engine.cache.used_blocks == 0
    assert _closed(port) and _server_threads() == []


def test_client_errors_free_the_requests_and_the_port(model):
    engine = llm_server.Engine(model, max_batch=4, num_blocks=64)
    mix = serving.request_mix(
        8,
        mean_prompt_tokens=6,
        mean_output_tokens=20,
        max_seq_len=60,
        arrivals_per_second=100,
        seed=1,
    )
    with llm_server.running_server(engine) as srv:
        port = srv.port
        recs = loadgen.run_load(
            srv.host, port, mix, vocab=CFG.vocab, budget_seconds=60, abort_every=2
        )
        aborted = [r for r in recs if r.error == "aborted by the client"]
        assert len(aborted) == 4 and all(not r.ok for r in aborted)
        # a malformed request gets a 400 and the server keeps serving
        bad = asyncio.run(loadgen._request(srv.host, port, [], 3))
        assert "400" in bad[1]
        for _ in range(100):  # the engine notices the hang-ups within a few steps
            if engine.cache.used_blocks == 0 and not engine.running:
                break
            threading.Event().wait(0.05)
        assert engine.cache.used_blocks == 0 and engine.stats.cancelled >= 1
    assert _closed(port) and _server_threads() == []


def test_an_exception_in_the_caller_still_stops_the_server(model):
    engine = llm_server.Engine(model)
    with pytest.raises(RuntimeError, match="boom"), llm_server.running_server(engine) as srv:
        port = srv.port
        raise RuntimeError("boom")
    assert _closed(port) and _server_threads() == []


def test_time_budget_cancels_what_is_left(model):
    engine = llm_server.Engine(model, max_batch=1, num_blocks=64)
    mix = serving.request_mix(
        30,
        mean_prompt_tokens=6,
        mean_output_tokens=30,
        max_seq_len=120,
        arrivals_per_second=0,
        seed=2,
    )
    with llm_server.running_server(engine) as srv:
        port = srv.port
        recs = loadgen.run_load(srv.host, port, mix, vocab=CFG.vocab, budget_seconds=0.5)
    assert len(recs) < 30 or any(not r.ok for r in recs)
    assert _closed(port) and _server_threads() == []


def _drive(engine, requests):
    """Submit (prompt length, max tokens) requests at once and step the engine to the end; return,
    per step, the request ids running after it (no HTTP, no clock: the scheduler alone)."""
    loop = asyncio.new_event_loop()
    try:
        live = [engine.submit([1] * p, n, loop) for p, n in requests]
        batches = []
        while engine.step():
            batches.append({r.rid for r in engine.running})
        return [r.rid for r in live], batches
    finally:
        loop.close()


def test_continuous_batching_refills_a_freed_slot_while_others_decode(model):
    """Iteration-level scheduling (Orca): two slots, a long answer and two short ones; the third
    request takes the slot the first short one frees while the long one is still decoding."""
    engine = llm_server.Engine(model, policy="continuous", max_batch=2, num_blocks=64)
    (long, short, third), batches = _drive(engine, [(4, 12), (4, 2), (4, 2)])
    together = [b for b in batches if long in b and third in b]
    assert together, batches  # admit-only-when-empty would make the third wait for the long one
    assert engine.stats.completed == 3 and engine.cache.used_blocks == 0


def test_static_batching_waits_for_the_whole_batch(model):
    engine = llm_server.Engine(model, policy="static", max_batch=2, num_blocks=64)
    (long, short, third), batches = _drive(engine, [(4, 12), (4, 2), (4, 2)])
    assert not [b for b in batches if long in b and third in b]
    assert engine.stats.completed == 3


def test_the_paged_cache_grows_a_block_only_when_the_last_is_full():
    """PagedAttention's allocator: a sequence of 5 tokens in blocks of 4 holds 2 blocks, not
    the blocks of its longest possible length; the third arrives with the ninth token."""
    cache = llm_server.PagedKVCache(CFG, 16, block_tokens=4)
    cache.reserve(0, 5)
    assert len(cache.tables[0]) == 2 and cache.used_blocks == 2
    cache.reserve(0, 8)
    assert len(cache.tables[0]) == 2
    cache.reserve(0, 9)
    assert len(cache.tables[0]) == 3 and cache.peak_blocks == 3
    cache.release(0)
    assert cache.used_blocks == 0 and len(cache.free) == 16


def _tokens(model, requests, admission, blocks, chunk_tokens=0):
    engine = llm_server.Engine(
        model,
        max_batch=8,
        num_blocks=blocks,
        block_tokens=4,
        admission=admission,
        chunk_tokens=chunk_tokens,
    )
    loop = asyncio.new_event_loop()
    try:
        live = [engine.submit([7 + p] * p, cap, loop, stop_after=n) for p, cap, n in requests]
        while engine.step():
            pass
    finally:
        loop.close()
    return engine, [r.generated for r in live]


REQUESTS = [(3, 12, n) for n in (10, 2, 8, 1, 5, 7)]  # cap 12, real lengths below it


def test_optimistic_admission_preempts_and_recomputes_the_same_tokens(model):
    """A small pool (6 blocks of 4 tokens): reserving prompt + cap (4 blocks each) runs one
    sequence at a time; admitting on the prompt runs several, evicts the newest when the pool is
    dry and recomputes it on readmission. Greedy and exact, so every answer is the same."""
    res, tokens_res = _tokens(model, REQUESTS, "reserve", 6)
    opt, tokens_opt = _tokens(model, REQUESTS, "optimistic", 6)
    assert tokens_opt == tokens_res and [len(t) for t in tokens_res] == [n for *_, n in REQUESTS]
    assert res.stats.preempted == 0 and opt.stats.preempted > 0
    batch = lambda e: sum(s.batch for s in e.stats.steps) / len(e.stats.steps)  # noqa: E731
    assert batch(opt) > 1.5 * batch(res) and len(opt.stats.steps) < len(res.stats.steps)
    assert opt.cache.peak_blocks == 6 and opt.cache.used_blocks == res.cache.used_blocks == 0


def test_burst_compares_the_policies_and_a_large_pool_makes_them_equal(model):
    small = [
        llm_server.burst(model, REQUESTS, admission=a, num_blocks=6, block_tokens=4)
        for a in llm_server.ADMISSIONS
    ]
    assert [b.admission for b in small] == ["reserve", "optimistic"]
    assert small[0].output_tokens == small[1].output_tokens == sum(n for *_, n in REQUESTS)
    assert small[1].preempted > 0 and small[1].recomputed_tokens > 0
    assert small[0].recomputed_tokens == 0 and small[1].peak_pool_share == 1.0
    big = llm_server.burst(model, REQUESTS, admission="optimistic", num_blocks=64, block_tokens=4)
    big_res = llm_server.burst(model, REQUESTS, admission="reserve", num_blocks=64, block_tokens=4)
    assert big.steps == big_res.steps and big.preempted == 0 and big.peak_pool_share < 0.5


def test_a_prefill_chunk_attends_to_the_cached_prompt_exactly(model):
    """A prompt prefilled in chunks of 5 gives the logits and first token of the whole prompt."""
    g = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, CFG.vocab, (23,), generator=g).tolist()
    dec = llm_server.PagedDecoder(model, llm_server.PagedKVCache(CFG, 16, block_tokens=4))
    tokens = [dec.prefill_chunk(0, prompt[i : i + 5]) for i in range(0, len(prompt), 5)]
    assert dec.cache.lengths[0] == len(prompt)
    with torch.inference_mode():
        ref = model(torch.tensor([prompt]))[0, -1].argmax().item()
    assert tokens[-1] == ref == dec.prefill(1, prompt)
    nxt = dec.decode([0, 1], [ref, ref])
    assert nxt[0] == nxt[1]  # the chunked cache decodes as the whole-prompt one


LONG = [(4, 30), (120, 4), (3, 6)]  # one answer decoding while a long prompt arrives


def test_chunked_prefill_keeps_decoding_while_a_long_prompt_goes_in(model):
    """Sarathi-Serve's mechanism: with a budget of 16 tokens an iteration never carries more, the
    120-token prompt goes in over several iterations, and the first request decodes in each of
    them; whole-prompt prefill puts all 120 tokens in one iteration. Same greedy tokens."""
    whole = llm_server.Engine(model, max_batch=4, num_blocks=64, block_tokens=4)
    chunked = llm_server.Engine(model, max_batch=4, num_blocks=64, block_tokens=4, chunk_tokens=16)
    _, _ = _drive(whole, LONG)
    _, _ = _drive(chunked, LONG)
    assert max(s.prefill_tokens for s in whole.stats.steps) >= 120
    steps = chunked.stats.steps
    assert all(s.batch + s.prefill_tokens <= 16 for s in steps)
    sharing = [s for s in steps if s.batch and s.prefill_tokens]
    assert sum(s.prefill_tokens for s in sharing) >= 100  # the long prompt went in beside decodes
    assert chunked.stats.completed == 3 and chunked.cache.used_blocks == 0


def test_chunked_prefill_produces_the_same_answers_also_after_preemption(model):
    outs = []
    for chunk, admission in ((0, "reserve"), (9, "reserve"), (9, "optimistic")):
        engine, tokens = _tokens(model, REQUESTS, admission, 6, chunk_tokens=chunk)
        outs.append(tokens)
        assert all(s.batch + s.prefill_tokens <= (chunk or 10**9) for s in engine.stats.steps)
    assert outs[0] == outs[1] == outs[2]
    assert engine.stats.preempted > 0 and engine.cache.used_blocks == 0


def test_chunk_budget_must_leave_room_for_a_prompt(model):
    with pytest.raises(ValueError, match="chunk_tokens"):
        llm_server.Engine(model, max_batch=8, chunk_tokens=8)
    with pytest.raises(ValueError, match="chunk_tokens"):
        llm_server.Engine(model, policy="static", chunk_tokens=64)


def test_prefill_interference_measures_both_schedules_on_the_same_arrivals(model):
    points = loadgen.prefill_interference(
        model, requests=8, rate_per_s=200.0, long_every=4, long_prompt_tokens=64, repeats=2
    )
    assert [(p.policy, p.repeat) for p in points] == [
        (s, r) for r in range(2) for s in loadgen.PREFILLS
    ]
    for p in points:
        assert p.completed == p.sent == 8 and p.itl_samples > 0
        assert math.isnan(p.itl_p99_seconds) or p.itl_samples >= 100
    assert points[0].realised_per_s == points[1].realised_per_s  # the same arrivals
