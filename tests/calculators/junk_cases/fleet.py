"""Junk-input cases for ``fleet``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import fleet
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "batch_latency_frontier": (
        fleet.batch_latency_frontier,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tp": 2,
            "context_tokens": 768,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "usable_fraction": 0.9,
            "kv_sharding": "heads",
        },
    ),
    "cost_per_million_tokens": (
        fleet.cost_per_million_tokens,
        {"usd_per_gpu_hour": 3.0, "gpus": 8, "capacity_tokens_per_s": 20_000, "utilisation": 0.7},
    ),
    "diurnal_rates": (
        fleet.diurnal_rates,
        {"peak_requests_per_s": 50, "trough_fraction": 0.2, "peak_hour": 14, "step_seconds": 3600},
    ),
    "kv_room_sequences": (
        fleet.kv_room_sequences,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tp": 2,
            "context_tokens": 768,
            "dtype": "bf16",
            "usable_fraction": 0.9,
            "kv_sharding": "heads",
        },
    ),
    "replica_option": (
        fleet.replica_option,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tp": 2,
            "batch": 16,
            "tpot_slo_seconds": 0.04,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "usable_fraction": 0.9,
        },
    ),
    "replicas_for_slo": (
        fleet.replicas_for_slo,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "peak_requests_per_s": 50,
            "ttft_slo_seconds": 1.0,
            "tpot_slo_seconds": 0.04,
            "quantile": 0.99,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "tp": None,
            "batch": None,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "max_tp": 8,
            "usd_per_gpu_hour": 3.0,
        },
    ),
    "scale_up_delay_seconds": (
        fleet.scale_up_delay_seconds,
        {"weights_bytes": 1.4e11, "load_bytes_per_s": 1e9, "boot_seconds": 120},
    ),
    "simulate_day": (
        fleet.simulate_day,
        {
            "rates_per_s": (10.0, 40.0, 80.0, 30.0),
            "step_seconds": 3600,
            "requests_per_s_per_replica": 20.0,
            "gpus_per_replica": 8,
            "policy": "autoscaled",
            "min_replicas": 1,
            "target_utilisation": 0.8,
            "scale_up_delay_seconds": 300,
        },
    ),
    "speculative_decoding": (
        fleet.speculative_decoding,
        {"acceptance_rate": 0.7, "draft_tokens": 4, "draft_cost_ratio": 0.05},
    ),
    "tensor_parallel_options": (
        fleet.tensor_parallel_options,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tpot_slo_seconds": 0.04,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "max_tp": 8,
            "usable_fraction": 0.9,
        },
    ),
    "tp_degrees": (fleet.tp_degrees, {"config": CFG, "max_tp": 8}),
    "tp_speedup": (fleet.tp_speedup, {"tp": 4, "tp_efficiency": 0.9}),
}
