"""Junk-input cases for ``ai_infrastructure``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.claims import ai_infrastructure

CASES: dict[str, tuple] = {
    "model_bytes_as_written": (
        ai_infrastructure.model_bytes_as_written,
        {"params": 7e9},
    ),
    "training_bytes_as_written": (
        ai_infrastructure.training_bytes_as_written,
        {"params": 7e9},
    ),
    "purchase_usd_as_written": (
        ai_infrastructure.purchase_usd_as_written,
        {"gpu": "h100-sxm", "gpus": 8},
    ),
}
