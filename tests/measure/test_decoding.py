"""course.measure.decoding (lesson 07): records well formed, budgets respected."""

from __future__ import annotations

import os

import pytest
import torch

from course.measure import decoding


def test_serve_variants_reports_sizes_errors_and_int4_reason():
    config = decoding.SERVE_CONFIG.replace(
        layers=1, hidden=128, heads=2, kv_heads=2, ffn_hidden=256, vocab=256
    )
    sweep = decoding.serve_variants(config, batches=(1,), budget_seconds=30)
    sizes = {r.variant: r.weights_bytes for r in sweep.records}
    assert sizes["bf16"] < 0.6 * sizes["fp32"]
    assert sizes["int8"] < sizes["bf16"]
    assert sizes["int4"] < sizes["int8"]  # torchao's int4 where it runs, else the course's
    for r in sweep.records:
        assert r.relative_error < (0.2 if r.variant == "int4" else 0.05) and r.tokens_per_s > 0


def test_batch_sweep_records():
    model = decoding.serve_model(
        decoding.SERVE_CONFIG.replace(layers=1, hidden=64, heads=2, kv_heads=2, ffn_hidden=128)
    )
    sweep = decoding.batch_sweep(model, batches=(1, 4), budget_seconds=10)
    assert [r.batch for r in sweep.records] == [1, 4]
    assert all(r.tokens_per_s == pytest.approx(r.batch / r.step_seconds) for r in sweep.records)


def test_compile_overhead_reports_compile_time_and_matching_calls():
    # one small compiled function: tens of seconds cold, a few warm (torch's on-disk cache)
    result = decoding.compile_overhead(batches=(2, 64), hidden=16)
    if " " in os.path.dirname(torch.__file__):  # Inductor's C++ build does not quote its paths
        assert result.failure and "space" in result.failure and not result.records
        return
    assert result.failure is None
    assert result.compile_seconds > 0 and [r.batch for r in result.records] == [2, 64]
    for r in result.records:
        assert r.speedup == pytest.approx(r.eager_seconds / r.compiled_seconds)
