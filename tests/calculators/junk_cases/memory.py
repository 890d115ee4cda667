"""Junk-input cases for ``memory``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import memory
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "weights_bytes": (memory.weights_bytes, {"params": 7e9, "dtype": "bf16"}),
    "model_state_bytes": (
        memory.model_state_bytes,
        {"params": 7e9, "precision": "mixed", "optimizer": "adam"},
    ),
    "activation_bytes_per_layer": (
        memory.activation_bytes_per_layer,
        {
            "seq_len": 2048,
            "batch": 1,
            "hidden": 4096,
            "heads": 32,
            "tensor_parallel": 2,
            "sequence_parallel": False,
            "recompute": "none",
        },
    ),
    "kv_cache_bytes": (
        memory.kv_cache_bytes,
        {
            "layers": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "tokens": 4096,
            "batch": 2,
            "bytes_per_value": 2,
        },
    ),
    "inference_memory": (
        memory.inference_memory,
        {
            "model": CFG,
            "dtype": "bf16",
            "seq_len": 512,
            "batch": 2,
            "kv_dtype": "fp8",
            "overhead_fraction": 0.1,
        },
    ),
    "training_memory": (
        memory.training_memory,
        {
            "model": CFG,
            "batch": 1,
            "seq_len": 512,
            "precision": "mixed",
            "optimizer": "adam",
            "recompute": "none",
        },
    ),
    "step_activation_bytes": (
        memory.step_activation_bytes,
        {
            "config": CFG,
            "batch": 1,
            "seq_len": 512,
            "precision": "bf16_autocast",
            "checkpointing": False,
        },
    ),
    "training_step_memory": (
        memory.training_step_memory,
        {"config": CFG, "batch": 1, "seq_len": 512, "precision": "fp32", "checkpointing": True},
    ),
    "gpus_needed": (
        memory.gpus_needed,
        {"total_bytes": 1e11, "gpu": "h100-sxm", "usable_fraction": 0.9},
    ),
    "params_of": (memory.params_of, {"name": "params", "value": 7e9}),
    "attention_scores_bytes": (
        memory.attention_scores_bytes,
        {"batch": 4, "heads": 16, "seq_len": 2048, "layers": 12, "bytes_per_value": 2},
    ),
}
