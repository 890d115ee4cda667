"""Junk-input cases for ``finetune``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import finetune
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "lora_params": (
        finetune.lora_params,
        {"config": CFG, "rank": 8, "targets": ("q", "v")},
    ),
    "lora_targets": (finetune.lora_targets, {"config": CFG}),
    "lora_memory": (
        finetune.lora_memory,
        {
            "config": CFG,
            "rank": 8,
            "targets": ("q", "k", "v", "o"),
            "base_dtype": "int4",
            "batch": 1,
            "seq_len": 512,
            "recompute": "full",
        },
    ),
    "accumulation_steps": (
        finetune.accumulation_steps,
        {"global_batch": 64, "micro_batch": 4, "data_parallel": 2, "seq_len": 1024},
    ),
}
