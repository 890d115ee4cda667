"""Junk-input cases for ``queueing``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import queueing

CASES: dict[str, tuple] = {
    "route": (
        queueing.route,
        {
            "arrival_seconds": (0.0, 0.1, 0.15, 0.4, 0.5),
            "service_seconds": (0.3, 0.2, 0.5, 0.1, 0.2),
            "replicas": 2,
            "slots": 1,
            "policy": "least-outstanding",
        },
    ),
    "erlang_c": (queueing.erlang_c, {"servers": 8, "offered_erlangs": 6.0}),
    "latency_summary": (
        queueing.latency_summary,
        {"values_seconds": (0.12, 0.15, 0.11, 0.95)},
    ),
    "littles_law": (
        queueing.littles_law,
        {"arrivals_per_second": 4.0, "time_in_system_seconds": 2.5},
    ),
    "mmc": (
        queueing.mmc,
        {"arrivals_per_second": 6.0, "service_seconds": 1.0, "servers": 8},
    ),
    "percentile": (queueing.percentile, {"values_seconds": (0.1, 0.2, 0.4), "q": 99}),
    "percentile_interval": (
        queueing.percentile_interval,
        {"values_seconds": tuple(0.01 * k for k in range(1, 101)), "q": 90, "confidence": 0.95},
    ),
    "samples_for_bound": (
        queueing.samples_for_bound,
        {"q": 99, "confidence": 0.95, "sided": "upper"},
    ),
    "servers_for_wait": (
        queueing.servers_for_wait,
        {
            "arrivals_per_second": 6.0,
            "service_seconds": 1.0,
            "wait_slo_seconds": 0.5,
            "quantile": 0.99,
        },
    ),
    "ttft_quantile_seconds": (
        queueing.ttft_quantile_seconds,
        {
            "arrivals_per_second": 6.0,
            "service_seconds": 1.0,
            "servers": 8,
            "prefill_seconds": 0.05,
            "quantile": 0.99,
        },
    ),
}
