"""Junk-input cases for ``context``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import context

CASES: dict[str, tuple] = {
    "causal_balance": (
        context.causal_balance,
        {"seq_len": 8192, "ranks": 8, "zigzag": True},
    ),
    "ring_overlap": (
        context.ring_overlap,
        {
            "seq_len": 131072,
            "ranks": 16,
            "heads": 32,
            "head_dim": 128,
            "flop_per_s": 989e12,
            "link_bytes_per_s": 450e9,
            "kv_heads": 8,
            "batch": 1,
            "bytes_per_value": 2,
        },
    ),
    "ring_attention_bytes": (
        context.ring_attention_bytes,
        {
            "seq_len": 8192,
            "ranks": 8,
            "heads": 32,
            "head_dim": 128,
            "kv_heads": 8,
            "batch": 1,
            "bytes_per_value": 2,
            "materialize_scores": True,
        },
    ),
}
