"""Junk-input cases for ``models``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.facts import models
from junk_cases.presets import CFG, MOE

CASES: dict[str, tuple] = {
    "param_count": (models.param_count, {"config": CFG}),
    "param_breakdown": (models.param_breakdown, {"config": CFG}),
    "non_embedding_param_count": (models.non_embedding_param_count, {"config": CFG}),
    "matmul_params_per_layer": (models.matmul_params_per_layer, {"config": CFG}),
    "preset": (models.preset, {"key": "gpt2"}),
    "TransformerConfig": (
        models.TransformerConfig,
        {
            "name": "x",
            "layers": 2,
            "hidden": 64,
            "heads": 4,
            "kv_heads": 2,
            "ffn_hidden": 128,
            "vocab": 100,
            "max_positions": 32,
            "gated_mlp": True,
            "tied_embeddings": False,
            "norm": "rmsnorm",
            "bias": False,
            "positions": "rope",
            "norm_placement": "pre",
            "token_types": 0,
            "causal": True,
            "lm_head": True,
            "pooler": False,
            "activation": "silu",
            "norm_eps": 1e-5,
            "experts": 4,
            "experts_per_token": 2,
            "shared_experts": 1,
            "expert_ffn_hidden": 32,
            "dense_layers": 1,
            "source": "test",
        },
    ),
    "active_param_count": (models.active_param_count, {"config": MOE}),
    "active_matmul_params": (models.active_matmul_params, {"config": MOE}),
    "checked_config": (models.checked_config, {"config": CFG}),
}
