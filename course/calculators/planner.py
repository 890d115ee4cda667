"""The one layout planner: the smallest tensor x pipeline split whose busiest GPU fits in memory.

Megatron-LM's rule (Narayanan et al. 2021, takeaway 1): raise the tensor-parallel degree t through
1, 2, 4 ... up to the GPUs of one server (t must divide the attention heads); if even the largest
t does not fit, keep it and add pipeline stages p (dividing the layers) until the busiest GPU's
memory (:func:`course.calculators.parallel.parallel_training_memory_per_gpu`, one data-parallel
replica) fits the usable memory of one GPU. Data parallelism is then chosen for time, not memory.

:func:`course.calculators.cluster.cluster_for_model` and
:func:`~course.calculators.cluster.dgx_design` compose this planner;
:func:`course.calculators.parallel.layout_step` prices any layout, and at the planner's layout it
reports the same memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.calculators.parallel import parallel_training_memory_per_gpu
from course.facts import validate
from course.facts.models import TransformerConfig, checked_config
from course.facts.report import Report

#: Tensor-parallel degrees tried, smallest first (powers of two, as Megatron-LM runs them).
TENSOR_PARALLEL_DEGREES = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class LayoutSettings:
    """How each GPU of a layout trains: the settings the memory of the busiest GPU depends on."""

    seq_len: int = 2048
    micro_batch: int = 1
    zero_stage: int = 1
    sequence_parallel: bool = True
    recompute: str = "selective"
    precision: str = "mixed"
    optimizer: str = "adam"


def _checked_settings(settings: object) -> LayoutSettings:
    if not isinstance(settings, LayoutSettings):
        raise ValueError(f"settings must be a LayoutSettings, got {settings!r}")
    return settings


def layout_memory_bytes(
    config: TransformerConfig,
    tensor_parallel: int,
    pipeline_parallel: int,
    data_parallel: int = 1,
    settings: LayoutSettings = LayoutSettings(),
) -> float:
    """Bytes on the busiest GPU of a t x p x d layout under ``settings`` (ZeRO over the d
    replicas)."""
    s = _checked_settings(settings)
    return parallel_training_memory_per_gpu(
        config,
        seq_len=s.seq_len,
        micro_batch=s.micro_batch,
        tensor_parallel=tensor_parallel,
        pipeline_parallel=pipeline_parallel,
        data_parallel=data_parallel,
        zero_stage=s.zero_stage,
        sequence_parallel=s.sequence_parallel,
        recompute=s.recompute,
        precision=s.precision,
        optimizer=s.optimizer,
    ).total_bytes


@dataclass(frozen=True)
class Layout(Report):
    """The smallest model-parallel split that fits: t x p GPUs per replica."""

    _title = "Smallest layout that fits"

    tensor_parallel: int
    pipeline_parallel: int
    memory_per_gpu_bytes: float  # busiest GPU, one data-parallel replica
    usable_memory_per_gpu_bytes: float


def smallest_layout(
    config: TransformerConfig,
    *,
    usable_memory_bytes: float,
    max_tensor_parallel: int,
    settings: LayoutSettings = LayoutSettings(),
) -> Layout:
    """The smallest t (then p) whose busiest GPU holds at most ``usable_memory_bytes``.

    ``max_tensor_parallel`` is the GPUs of one server (tensor parallelism stays inside its
    NVLink domain). Raises ValueError when even t = ``max_tensor_parallel`` (largest allowed
    power of two dividing the heads) and p = layers does not fit.
    """
    checked_config(config)
    _checked_settings(settings)
    usable = validate.number(
        "usable_memory_bytes", usable_memory_bytes, minimum=0, maximum=1e15, strict_min=True
    )
    most = validate.positive_int("max_tensor_parallel", max_tensor_parallel, maximum=1024)
    t_options = [t for t in TENSOR_PARALLEL_DEGREES if t <= most and config.heads % t == 0]

    def memory(t: int, p: int) -> float:
        return layout_memory_bytes(config, t, p, 1, settings)

    for t in t_options:
        if memory(t, 1) <= usable:
            return Layout(t, 1, memory(t, 1), usable)
    t = t_options[-1]
    for p in range(2, config.layers + 1):
        if config.layers % p == 0 and memory(t, p) <= usable:
            return Layout(t, p, memory(t, p), usable)
    raise ValueError(
        f"{config.name} does not fit in {usable / 1e9:,.1f} GB per GPU even with tensor_parallel="
        f"{t} and pipeline_parallel={config.layers}: try recompute='full', a smaller micro_batch "
        "or a GPU with more memory"
    )


__all__ = [
    "TENSOR_PARALLEL_DEGREES",
    "Layout",
    "LayoutSettings",
    "layout_memory_bytes",
    "smallest_layout",
]
