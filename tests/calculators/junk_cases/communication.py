"""Junk-input cases for ``communication``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import communication
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "ring_allreduce_seconds": (
        communication.ring_allreduce_seconds,
        {"message_bytes": 1e9, "n": 8, "bandwidth_bytes_per_s": 4.5e11, "latency_seconds": 1e-5},
    ),
    "ring_allgather_seconds": (
        communication.ring_allgather_seconds,
        {"message_bytes": 1e9, "n": 8, "bandwidth_bytes_per_s": 4.5e11, "latency_seconds": 1e-5},
    ),
    "ring_reduce_scatter_seconds": (
        communication.ring_reduce_scatter_seconds,
        {"message_bytes": 1e9, "n": 8, "bandwidth_bytes_per_s": 4.5e11, "latency_seconds": 1e-5},
    ),
    "algorithm_bandwidth_bytes_per_s": (
        communication.algorithm_bandwidth_bytes_per_s,
        {"message_bytes": 1e9, "seconds": 0.01},
    ),
    "bus_bandwidth_bytes_per_s": (
        communication.bus_bandwidth_bytes_per_s,
        {"algorithm_bytes_per_s": 1e11, "n": 8, "collective": "all_gather"},
    ),
    "ring_collective_seconds": (
        communication.ring_collective_seconds,
        {
            "collective": "reduce_scatter",
            "message_bytes": 1e9,
            "n": 8,
            "bandwidth_bytes_per_s": 4.5e11,
            "latency_seconds": 1e-5,
        },
    ),
    "fit_alpha_beta": (
        communication.fit_alpha_beta,
        {
            "message_bytes": [1e3, 1e6, 1e7],
            "seconds": [1e-4, 2e-3, 1.5e-2],
            "collective": "all_gather",
            "n": 4,
        },
    ),
    "gradient_allreduce_on_links": (
        communication.gradient_allreduce_on_links,
        {
            "params": 7e9,
            "n_gpus": 8,
            "bytes_per_gradient": 2,
            "links": ("nvlink4", "ib-ndr"),
            "efficiency": 0.8,
        },
    ),
    "gpu_links": (communication.gpu_links, {"gpu": "h100-sxm"}),
    "link_or_default": (
        communication.link_or_default,
        {"name": "inter_node_link", "key": "ib-ndr", "default": None},
    ),
    "tensor_parallel_layer_comm": (
        communication.tensor_parallel_layer_comm,
        {
            "config": CFG,
            "seq_len": 4096,
            "micro_batch": 1,
            "tensor_parallel": 8,
            "bandwidth_bytes_per_s": 4.5e11,
            "bytes_per_value": 2,
        },
    ),
}
