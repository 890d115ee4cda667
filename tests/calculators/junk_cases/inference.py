"""Junk-input cases for ``inference``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import inference
from junk_cases.presets import SMALL

CASES: dict[str, tuple] = {
    "prefill": (
        inference.prefill,
        {
            "config": SMALL,
            "prompt_tokens": 512,
            "gpu": "h100-sxm",
            "batch": 2,
            "dtype": "bf16",
            "efficiency": 0.6,
        },
    ),
    "decode": (
        inference.decode,
        {
            "config": SMALL,
            "gpu": "h100-sxm",
            "batch": 4,
            "context_tokens": 1024,
            "dtype": "bf16",
            "efficiency": 0.6,
        },
    ),
    "serving": (
        inference.serving,
        {
            "config": SMALL,
            "gpu": "h100-sxm",
            "requests_per_s": 5.0,
            "prompt_tokens": 512,
            "output_tokens": 128,
            "batch": 8,
            "dtype": "bf16",
            "efficiency": 0.6,
            "usd_per_gpu_hour": 2.5,
        },
    ),
    "request_tokens": (
        inference.request_tokens,
        {"config": SMALL, "prompt_tokens": 512, "output_tokens": 128},
    ),
    "serving_footprint": (
        inference.serving_footprint,
        {
            "s": inference.serving(SMALL, "h100-sxm", requests_per_s=5.0),
            "gpu": "h100-sxm",
            "usd_per_kwh": 0.1,
            "pue": 1.2,
            "grid_g_per_kwh": 400,
        },
    ),
}
