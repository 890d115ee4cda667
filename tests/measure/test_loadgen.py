"""course.measure.loadgen's summaries on hand-made records: percentiles that need their samples,
the warm-up left out, goodput against SLOs, TPOT as vLLM, GenAI-Perf and MLPerf LoadGen compute it.
The load generator against a live server: tests/measure/test_llm_server.py."""

from __future__ import annotations

import math

import pytest

from course.facts import report
from course.measure import loadgen


def _rec(i, ttft, gaps, err=""):
    n = len(gaps) + 1 if not err else 0
    return loadgen.RequestRecord(
        i, 4, len(gaps) + 1, n, i * 0.1, ttft, ttft + sum(gaps), tuple(gaps), err
    )


def test_summarise_synthetic_records():
    recs = [_rec(i, 0.01 * (i + 1), [0.02] * 4) for i in range(10)] + [_rec(10, math.nan, [], "x")]
    p = loadgen.summarise(
        recs,
        policy="continuous",
        offered_per_s=5,
        mean_batch=2,
        ttft_slo_seconds=0.05,
        tpot_slo_seconds=0.03,
    )
    assert p.sent == 11 and p.completed == 10
    assert p.ttft_p50_seconds == pytest.approx(0.055)
    # 40 pooled gaps carry a p90 but not a p99 (100 samples needed): NaN, not the maximum
    assert math.isnan(p.itl_p99_seconds) and math.isnan(p.ttft_p99_seconds)
    assert p.itl_p50_seconds == pytest.approx(0.02) and p.tpot_p50_seconds == pytest.approx(0.02)
    assert p.realised_per_s == pytest.approx(10 / 1.0)  # 11 sends, 0.1 s apart
    duration = 0.9 + 0.1 + 0.08 - 0.0  # last send + its e2e
    assert p.requests_per_s == pytest.approx(10 / duration)
    assert p.goodput_per_s == pytest.approx(5 / duration)  # TTFT <= 50 ms: the first five


def test_warm_up_is_left_out_and_a_percentile_needs_its_samples():
    assert [loadgen.samples_for(q) for q in (50, 90, 99, 99.9)] == [2, 10, 100, 1000]
    # 120 requests whose TTFT is their index in ms: the first 20 (warm-up) are the slow ones here
    recs = [_rec(i, 0.001 * (120 - i), [0.02]) for i in range(120)]
    p = loadgen.summarise(recs, policy="continuous", offered_per_s=10, mean_batch=1, warmup=20)
    assert p.measured == 100 and p.completed == 120
    assert p.ttft_p99_seconds == pytest.approx(
        loadgen.percentile_of([0.001 * k for k in range(1, 101)], 99)
    )
    assert p.ttft_p99_seconds < 0.1  # the warm-up's slow 101-120 ms are not in it
    few = loadgen.summarise(recs, policy="continuous", offered_per_s=10, mean_batch=1, warmup=30)
    assert math.isnan(few.ttft_p99_seconds) and math.isfinite(few.ttft_p90_seconds)


def test_the_course_load_generator_computes_tpot_as_the_sources_do():
    """Issue 19: course.measure.loadgen's TPOT on a hand record: e2e 1.0 s, TTFT 0.1 s, 10 tokens ->
    (1.0 - 0.1) / 9 = 0.1 s, the per-request formula of vLLM, GenAI-Perf (its ITL) and LoadGen."""
    r = loadgen.RequestRecord(
        rid=0,
        prompt_tokens=5,
        output_tokens=10,
        received_tokens=10,
        sent_seconds=0.0,
        ttft_seconds=0.1,
        e2e_seconds=1.0,
        itl_seconds=(0.1,) * 9,
    )
    assert r.tpot_seconds == pytest.approx(0.1)


def test_every_percentile_a_table_prints_carries_its_interval_or_n_too_small():
    """Issue 44: a table of load points prints each p50/p90/p99 with its 95 % distribution-free
    interval (400 requests: bounded) or '(n too small: n < need)' (40 requests: no p99 bound),
    whatever columns a lesson picks; the interval is the table's doing, not the cell's."""
    many = [_rec(i, 0.001 * (1 + i % 97), [0.002] * 3) for i in range(400)]
    few = many[:40]
    points = [
        loadgen.summarise(r, policy="continuous", offered_per_s=10, mean_batch=1)
        for r in (many, few)
    ]
    columns = [c for c in loadgen.LoadPoint.__dataclass_fields__ if "_p" in c and "seconds" in c]
    assert {"ttft_p50_seconds", "ttft_p90_seconds", "ttft_p99_seconds"} <= set(columns)
    bounded, small = report.Table(points, columns=["policy", *columns]).text_rows()
    assert all(" [" in cell and cell.endswith("]") for cell in bounded[1:]), bounded
    assert small[columns.index("ttft_p99_seconds") + 1].endswith("(n too small: 40 < 368)")
    assert all(" [" in cell or "(n too small: " in cell for cell in small[1:]), small
    # a column that prints the interval itself is not repeated in the percentile's cell
    both = report.Table(points, columns=["ttft_p99_seconds", "ttft_p99_ci"]).text_rows()
    assert both[0][0].count("[") == 0 and both[0][1].startswith("[")
