"""Junk-input cases for ``parallel``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import parallel
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "zero_model_state_bytes_per_gpu": (
        parallel.zero_model_state_bytes_per_gpu,
        {"params": 7.5e9, "n_gpus": 64, "stage": 2, "precision": "mixed", "optimizer": "adam"},
    ),
    "parallel_training_memory_per_gpu": (
        parallel.parallel_training_memory_per_gpu,
        {
            "config": CFG,
            "seq_len": 2048,
            "micro_batch": 1,
            "tensor_parallel": 2,
            "pipeline_parallel": 4,
            "data_parallel": 8,
            "zero_stage": 1,
            "sequence_parallel": True,
            "recompute": "selective",
            "precision": "mixed",
            "optimizer": "adam",
        },
    ),
    "pipeline_bubble_fraction": (
        parallel.pipeline_bubble_fraction,
        {"stages": 4, "microbatches": 8, "virtual_stages": 2},
    ),
    "pipeline_bubble_overhead": (
        parallel.pipeline_bubble_overhead,
        {"stages": 4, "microbatches": 8, "virtual_stages": 2},
    ),
    "data_parallel_step_seconds": (
        parallel.data_parallel_step_seconds,
        {
            "compute_seconds": 0.5,
            "gradient_bytes": 14e9,
            "n_gpus": 8,
            "bandwidth_bytes_per_s": 4.5e11,
            "latency_seconds": 1e-5,
            "overlap": 0.5,
        },
    ),
    "layout_step": (
        parallel.layout_step,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "gpus_per_node": 8,
            "nodes": 2,
            "data_parallel": 4,
            "tensor_parallel": 2,
            "pipeline_parallel": 2,
            "zero_stage": 1,
            "micro_batch": 1,
            "microbatches": 8,
            "seq_len": 2048,
            "recompute": "selective",
            "compute_hfu": 0.4,
            "intra_node_link": "nvlink4",
            "inter_node_link": "ib-ndr",
        },
    ),
}
