"""Junk-input cases for ``planner``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import planner
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "layout_memory_bytes": (
        planner.layout_memory_bytes,
        {
            "config": CFG,
            "tensor_parallel": 2,
            "pipeline_parallel": 2,
            "data_parallel": 4,
            "settings": planner.LayoutSettings(),
        },
    ),
    "smallest_layout": (
        planner.smallest_layout,
        {
            "config": CFG,
            "usable_memory_bytes": 72e9,
            "max_tensor_parallel": 8,
            "settings": planner.LayoutSettings(),
        },
    ),
}
