"""Junk-input cases for ``techniques``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import techniques
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "rank_techniques": (
        techniques.rank_techniques,
        {
            "config": CFG,
            "workload": "serving",
            "constraint": "too_costly",
            "gpu": "l40s",
            "batch": 2,
            "seq_len": 1024,
            "measured": {"torch.compile": 1.2},
        },
    ),
}
