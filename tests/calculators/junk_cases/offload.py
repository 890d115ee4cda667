"""Junk-input cases for ``offload``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import offload
from course.facts.models import PRESETS

CASES: dict[str, tuple] = {
    "offload_decode_step": (
        offload.offload_decode_step,
        {
            "model": PRESETS["llama-2-70b"],
            "gpu": "gh200-96gb",
            "dtype": "bf16",
            "seq_len": 4096,
            "batch": 2,
            "usable_fraction": 0.9,
        },
    ),
    "link_bandwidth_bytes_per_s": (offload.link_bandwidth_bytes_per_s, {"link": "pcie4"}),
    "optimizer_offload": (
        offload.optimizer_offload,
        {
            "params": 7e9,
            "link": 55e9,
            "compute_seconds": 2.0,
            "cpu_seconds_per_param": 1e-9,
            "overlap": 0.5,
        },
    ),
    "weight_streaming": (
        offload.weight_streaming,
        {"params": 7e9, "dtype": "bf16", "link": "nvlink-c2c", "gpu": "h100-sxm"},
    ),
}
