"""Junk-input cases for ``compute``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import compute
from junk_cases.presets import CFG, SMALL

CASES: dict[str, tuple] = {
    "attention_flops_per_token": (
        compute.attention_flops_per_token,
        {"config": CFG, "seq_len": 2048, "causal": False},
    ),
    "forward_flops_per_token": (
        compute.forward_flops_per_token,
        {"config": SMALL, "seq_len": 1024, "causal": True},
    ),
    "forward_flops": (
        compute.forward_flops,
        {"config": CFG, "seq_len": 128, "batch": 2, "causal": False},
    ),
    "training_flops": (compute.training_flops, {"params": 7e9, "tokens": 1e12}),
    "training_flops_with_attention": (
        compute.training_flops_with_attention,
        {"config": CFG, "tokens": 1e12, "seq_len": 4096, "recompute": False},
    ),
    "inference_flops": (compute.inference_flops, {"params": 7e9, "tokens": 1000}),
    "arithmetic_intensity": (
        compute.arithmetic_intensity,
        {"flops": 1e12, "bytes_moved": 1e9},
    ),
    "critical_intensity": (
        compute.critical_intensity,
        {"peak_flop_per_s": 1e15, "bandwidth_bytes_per_s": 3e12},
    ),
    "attainable_flop_per_s": (
        compute.attainable_flop_per_s,
        {"intensity": 10, "peak_flop_per_s": 1e15, "bandwidth_bytes_per_s": 3e12},
    ),
    "roofline_seconds": (
        compute.roofline_seconds,
        {"flops": 1e12, "bytes_moved": 1e9, "peak_flop_per_s": 1e15, "bandwidth_bytes_per_s": 3e12},
    ),
    "matmul_flops": (compute.matmul_flops, {"m": 64, "n": 64, "k": 64}),
    "matmul_bytes": (
        compute.matmul_bytes,
        {"m": 64, "n": 64, "k": 64, "bytes_per_element": 2},
    ),
    "weights_read_seconds": (
        compute.weights_read_seconds,
        {"params": 13e9, "dtype": "fp16", "bandwidth_bytes_per_s": 9e11},
    ),
    "core_paths": (
        compute.core_paths,
        {"gpu": "h100-sxm", "precision": "fp8", "m": 4096, "n": 1, "k": 4096},
    ),
    "precisions_on": (compute.precisions_on, {"gpu": "a100-80gb-sxm"}),
    "decode_step": (
        compute.decode_step,
        {"params": 7e9, "dtype": "bf16", "gpu": "h100-sxm", "batch": 8, "compute_dtype": "fp8"},
    ),
    "training_seconds": (
        compute.training_seconds,
        {
            "params": 7e9,
            "tokens": 1e12,
            "n_gpus": 64,
            "peak_flops_per_gpu": 1e15,
            "mfu": 0.4,
            "recompute": True,
        },
    ),
    "mfu": (
        compute.mfu,
        {
            "params": 7e9,
            "tokens_per_second": 1e5,
            "n_gpus": 8,
            "peak_flops_per_gpu": 1e15,
            "flops_per_token": 5e10,
        },
    ),
    "chinchilla_optimal": (
        compute.chinchilla_optimal,
        {"flops": 5.88e23, "tokens_per_param": 20},
    ),
    "attention_share": (
        compute.attention_share,
        {"config": SMALL, "seq_len": 1024, "causal": True},
    ),
    "hfu": (
        compute.hfu,
        {
            "params": 7e9,
            "tokens_per_second": 1e5,
            "n_gpus": 8,
            "peak_flops_per_gpu": 1e15,
            "recomputed_forward_fraction": 0.5,
        },
    ),
}
