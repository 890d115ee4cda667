"""Junk-input cases for ``moe``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import moe
from junk_cases.presets import MOE

CASES: dict[str, tuple] = {
    "moe_account": (moe.moe_account, {"config": MOE, "seq_len": 128, "dtype": "bf16"}),
    "all_to_all_bytes": (
        moe.all_to_all_bytes,
        {
            "tokens_per_rank": 4096,
            "hidden": 4096,
            "experts_per_token": 2,
            "ranks": 8,
            "moe_layers": 32,
            "bytes_per_value": 2,
            "training": True,
        },
    ),
    "all_to_all_seconds": (
        moe.all_to_all_seconds,
        {"bytes_off_rank": 1e9, "link_bytes_per_s": 450e9},
    ),
}
