"""The rules of *AI Infrastructure*, as written: 2 bytes per parameter to serve in FP16, 18 bytes
per parameter to train with Adam (lesson 04 checks them against :mod:`course.calculators.memory`),
and its purchase price per GPU (lesson 09's buy-vs-rent calculator and the DGX design calculator
start from it).
"""

from __future__ import annotations

from course.calculators.memory import params_of
from course.facts import validate
from course.facts.data.cloud_instances import PURCHASE_USD_PER_GPU_AS_WRITTEN


def model_bytes_as_written(params: float) -> float:
    """*AI Infrastructure*: "Model size (FP16): Parameters x 2 bytes"."""
    return 2 * params_of("params", params)


def training_bytes_as_written(params: float) -> float:
    """*AI Infrastructure*: "Training memory (FP16 + Adam): Parameters x 18 bytes".

    The 18 is right for mixed precision with fp32 gradients (see
    ``course.calculators.memory.model_state_bytes(..., precision="mixed_fp32_grads")``), but the
    reading's breakdown "2 model + 2 gradients + 4 optimizer + overheads" adds up to 8, and it
    excludes activations.
    """
    return 18 * params_of("params", params)


def purchase_usd_as_written(gpu: str, gpus: int) -> float:
    """*AI Infrastructure*'s purchase price of ``gpus`` GPUs of key ``gpu``: the midpoint of its
    range per GPU ("~$30,000-$40,000" for an H100 -> 35,000; "~$15,000" for an A100) x ``gpus``."""
    key = validate.choice("gpu", gpu, tuple(PURCHASE_USD_PER_GPU_AS_WRITTEN))
    n = validate.positive_int("gpus", gpus, maximum=10**6)
    low, high = PURCHASE_USD_PER_GPU_AS_WRITTEN[key]
    return n * (low + high) / 2


__all__ = ["model_bytes_as_written", "purchase_usd_as_written", "training_bytes_as_written"]
