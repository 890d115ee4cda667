"""The GPU-count rules of *Computation Requirements* (and its longer version), as written.

"GPUs ~ params (billions) x precision (bytes) / GPU memory (GB)" for inference, and 6 x that for
training. Lesson 04 sets them beside :func:`course.calculators.memory.training_memory`.
"""

from __future__ import annotations

from course.calculators.memory import MAX_BYTES, params_of
from course.facts import validate


def inference_gpus_as_written(
    params: float, bytes_per_param: float, gpu_memory_bytes: float
) -> float:
    """The rule of *Computation Requirements*: GPUs ~ params (billions) x precision (bytes) / GPU
    memory (GB).

    Returns the ratio as the reading writes it (not rounded up). It counts weights only: no KV
    cache, no activations, no overhead, so round up and add headroom before buying.
    """
    n = params_of("params", params)
    bpp = validate.number("bytes_per_param", bytes_per_param, minimum=0, maximum=8, strict_min=True)
    mem = validate.number(
        "gpu_memory_bytes", gpu_memory_bytes, minimum=0, maximum=MAX_BYTES, strict_min=True
    )
    return n * bpp / mem


def training_gpus_as_written(
    params: float, bytes_per_param: float, gpu_memory_bytes: float
) -> float:
    """Its training rule: 6 x the inference ratio ("optimizer 2x, gradients 1x,
    activations 1x, buffers 2x").

    At 2 bytes/param this is 12 B/param, below the 16 B/param mixed-precision Adam needs for model
    states alone (ZeRO), and activations do not scale with parameters; see
    :func:`course.calculators.memory.training_memory`.
    """
    return 6 * inference_gpus_as_written(params, bytes_per_param, gpu_memory_bytes)


__all__ = ["inference_gpus_as_written", "training_gpus_as_written"]
