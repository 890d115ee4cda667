"""Lesson 13's figures draw from records of the shapes loadgen and fleet return."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from course.calculators import fleet  # noqa: E402
from course.presentation.plots import load_curves as serving_plots  # noqa: E402


def _p(rate, p99):
    return {
        "offered_per_s": rate,
        "requests_per_s": min(rate, 6),
        "goodput_per_s": min(rate, 4),
        "ttft_p50_seconds": p99 / 2,
        "ttft_p99_seconds": p99,
        "itl_p50_seconds": 0.01,
        "itl_p99_seconds": 0.05,
    }


def test_load_curve_has_three_panels_and_the_model():
    pts = [_p(2, 0.05), _p(4, 0.06), _p(6, 0.5)]
    fig = serving_plots.load_curve(
        pts, knee=6, predicted=lambda r, q: 0.01 if r < 6 else float("inf")
    )
    assert len(fig.axes) == 3
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert "p99 M/M/c model" in labels and "p99 measured" in labels


def test_day_fleet_draws_each_policy():
    rates = fleet.diurnal_rates(20, step_seconds=3600)
    days = [
        fleet.simulate_day(rates, step_seconds=3600, requests_per_s_per_replica=5, policy=p)
        for p in fleet.POLICIES
    ]
    fig = serving_plots.day_fleet(rates, days, step_seconds=3600, requests_per_s_per_replica=5)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "fixed replicas (right)" in labels and "autoscaled replicas (right)" in labels


def test_tp_frontier_draws_one_curve_per_degree_and_the_chosen_batches():
    from course.facts.models import preset

    l70 = preset("llama-2-70b")
    curves = [
        fleet.batch_latency_frontier(l70, "h100-sxm", tp=t, context_tokens=768)
        for t in fleet.tp_degrees(l70)
    ]
    assert curves[0] == ()  # one GPU cannot hold the weights
    chosen = fleet.tensor_parallel_options(l70, "h100-sxm", tpot_slo_seconds=0.04)
    fig = serving_plots.tp_frontier(curves, chosen)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["TP2", "TP4", "TP8", "batch within KV room and TPOT SLO"]
    assert len(fig.axes[0].lines) == 3 + len(chosen)
