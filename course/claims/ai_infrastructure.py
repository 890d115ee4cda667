"""The memory rules of *AI Infrastructure*, as written: 2 bytes per parameter to serve in FP16,
18 bytes per parameter to train with Adam. Lesson 04 checks them against
:mod:`course.calculators.memory`. Layer: claims.
"""

from __future__ import annotations

from course.calculators.memory import params_of


def model_bytes_as_written(params: float) -> float:
    """*AI Infrastructure*: "Model size (FP16): Parameters x 2 bytes"."""
    return 2 * params_of("params", params)


def training_bytes_as_written(params: float) -> float:
    """*AI Infrastructure*: "Training memory (FP16 + Adam): Parameters x 18 bytes".

    The 18 is right for mixed precision with fp32 gradients (see
    ``course.calculators.memory.model_state_bytes(..., precision="mixed_fp32_grads")``), but the reading's breakdown
    "2 model + 2 gradients + 4 optimizer + overheads" adds up to 8, and it excludes activations.
    """
    return 18 * params_of("params", params)


__all__ = ["model_bytes_as_written", "training_bytes_as_written"]
