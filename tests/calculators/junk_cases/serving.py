"""Junk-input cases for ``serving``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import serving
from junk_cases.presets import MIX

CASES: dict[str, tuple] = {
    "request_mix": (
        serving.request_mix,
        {
            "n": 20,
            "mean_prompt_tokens": 100,
            "mean_output_tokens": 50,
            "max_seq_len": 512,
            "arrivals_per_second": 2.0,
            "seed": 1,
        },
    ),
    "kv_allocation": (
        serving.kv_allocation,
        {
            "requests": MIX,
            "kv_bytes_per_token": 819_200,
            "policy": "contiguous",
            "max_seq_len": 512,
            "block_tokens": 16,
            "memory_bytes": 1e10,
        },
    ),
    "simulate_batching": (
        serving.simulate_batching,
        {
            "requests": MIX,
            "policy": "static",
            "max_batch": 4,
            "step_base_seconds": 0.01,
            "step_per_seq_seconds": 0.001,
            "prefill_seconds_per_token": 1e-5,
        },
    ),
}
