"""Parallel training on paper: ZeRO/FSDP sharding, tensor and pipeline parallelism, a layout's step.

- ZeRO stages (Rajbhandari et al. 2019): stage 1 shards optimizer states (with the fp32 master
  weights) over the data-parallel GPUs, stage 2 also gradients, stage 3 also the weights (what
  PyTorch FSDP's ``FULL_SHARD`` / FSDP2 ``fully_shard`` do).
- Tensor and pipeline parallelism (Megatron-LM: Shoeybi et al. 2019, Narayanan et al. 2021,
  Korthikanti et al. 2022): weights split t x p ways, activations per Korthikanti's Table 2.
- Pipeline bubble: GPipe's (p - 1) / (m + p - 1) of the schedule (Huang et al. 2019); the
  interleaved schedule divides the bubble by the number of virtual stages (Narayanan et al. 2021).
- A layout's step: compute, the bubble and the communication that
  :mod:`course.calculators.communication` prices (collectives, links), for any DP x TP x PP split;
  :mod:`course.calculators.planner` picks the smallest split that fits.

Used by lessons 06, 08 and 10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators.communication import (
    gpu_links,
    link_or_default,
    ring_allreduce_seconds,
    tensor_parallel_layer_comm,
)
from course.calculators.memory import (
    MAX_BATCH,
    MAX_SEQ_LEN,
    RECOMPUTE,
    activation_bytes_per_layer,
    model_state_bytes,
)
from course.facts import validate
from course.facts.models import TransformerConfig, param_breakdown
from course.facts.report import Report
from course.facts.validate import MAX_GPUS

ZERO_STAGES = (0, 1, 2, 3)


def _gpus(name: str, value: object) -> int:
    return validate.positive_int(name, value, maximum=MAX_GPUS)


def _stage(value: object) -> int:
    return int(validate.choice("stage", value, ZERO_STAGES))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# ZeRO / FSDP
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardedModelState(Report):
    """Model-state memory on each GPU under a ZeRO stage (no activations)."""

    _title = "Model states per GPU (ZeRO)"

    stage: int
    n_gpus: int
    weights_bytes: float
    gradients_bytes: float
    master_weights_bytes: float
    optimizer_states_bytes: float
    total_bytes: float


def zero_model_state_bytes_per_gpu(
    params: float,
    n_gpus: int,
    stage: int,
    *,
    precision: str = "mixed",
    optimizer: str = "adam",
) -> ShardedModelState:
    """Per-GPU model states with ZeRO ``stage`` over ``n_gpus`` data-parallel GPUs.

    Stage 0 keeps everything on every GPU; 1 divides the optimizer states and fp32 master weights
    by ``n_gpus`` (ZeRO's P_os); 2 also the gradients (P_os+g); 3 also the 16-bit weights
    (P_os+g+p, = FSDP full sharding). Rajbhandari et al. 2019, Fig. 1: 7.5B params, 64 GPUs,
    mixed-precision Adam: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
    """
    states = model_state_bytes(params, precision=precision, optimizer=optimizer)
    n = _gpus("n_gpus", n_gpus)
    s = _stage(stage)
    opt_div = n if s >= 1 else 1
    grad_div = n if s >= 2 else 1
    weight_div = n if s >= 3 else 1
    weights = states.weights_bytes / weight_div
    grads = states.gradients_bytes / grad_div
    master = states.master_weights_bytes / opt_div
    opt = states.optimizer_states_bytes / opt_div
    return ShardedModelState(
        stage=s,
        n_gpus=n,
        weights_bytes=weights,
        gradients_bytes=grads,
        master_weights_bytes=master,
        optimizer_states_bytes=opt,
        total_bytes=weights + grads + master + opt,
    )


# ---------------------------------------------------------------------------------------------
# Tensor x pipeline x data parallelism: memory of the busiest GPU
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParallelMemory(Report):
    """Training memory of the busiest GPU under tensor x pipeline x data parallelism."""

    _title = "Training memory per GPU (3D parallel)"
    _formats = {"params_per_gpu": "count"}

    params_per_gpu: float
    weights_bytes: float
    gradients_bytes: float
    master_weights_bytes: float
    optimizer_states_bytes: float
    activations_bytes: float
    total_bytes: float


def parallel_training_memory_per_gpu(
    config: TransformerConfig,
    *,
    seq_len: int,
    micro_batch: int = 1,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
    data_parallel: int = 1,
    zero_stage: int = 0,
    sequence_parallel: bool = False,
    recompute: str = "none",
    precision: str = "mixed",
    optimizer: str = "adam",
    microbatches: int | None = None,
    virtual_stages: int = 1,
) -> ParallelMemory:
    """Memory of the busiest GPU when training ``config`` with t x p x d parallelism.

    Each pipeline stage holds ``ceil(layers / p)`` layers, split ``t`` ways; the first stage also
    holds the token (and position) embedding, the last the LM head (and the fp32 logits,
    ``4*s*b*vocab/t``). Under the 1F1B schedule the first stage keeps the activations of ``p``
    micro-batches in flight, so its activations are ``p x layers/p = layers`` layers' worth,
    whatever ``p`` (Korthikanti et al. 2022, "pipeline parallelism" in sec. 4); the last stage keeps
    one. With fewer ``microbatches`` than stages (m < p) only m are ever in flight. The interleaved
    schedule (``virtual_stages`` v > 1) holds 1 + (p - 1)/(p v) times as much on the first stage
    (Korthikanti et al. 2022, sec. 4.2.3). Model states are then sharded over ``data_parallel`` GPUs
    by ``zero_stage``. Returns the larger of the first and last stage. Norm weights are counted as
    split t ways (they are replicated; the error is negligible).
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    c = config
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    b = validate.positive_int("micro_batch", micro_batch, maximum=MAX_BATCH)
    t = validate.positive_int("tensor_parallel", tensor_parallel, maximum=c.heads)
    if c.heads % t:
        raise ValueError(f"tensor_parallel must divide heads ({c.heads}), got {t}")
    p = validate.positive_int("pipeline_parallel", pipeline_parallel, maximum=c.layers)
    d = _gpus("data_parallel", data_parallel)
    zs = validate.choice("zero_stage", zero_stage, ZERO_STAGES)
    m = (
        p
        if microbatches is None
        else validate.positive_int("microbatches", microbatches, maximum=10**9)
    )
    v = validate.positive_int("virtual_stages", virtual_stages, maximum=c.layers)
    in_flight = min(p, m) * (1 + (p - 1) / (p * v) if v > 1 else 1.0)

    parts = param_breakdown(c)
    per_layer = (parts.attention_params + parts.mlp_params + parts.norm_params) / c.layers
    layers_per_stage = math.ceil(c.layers / p)
    vocab_table = c.vocab * c.hidden
    head = vocab_table if c.lm_head else 0  # tied: the last stage keeps its own copy
    first_params = (layers_per_stage * per_layer + parts.embedding_params) / t
    last_params = (layers_per_stage * per_layer + parts.pooler_params + head) / t
    if p == 1:
        first_params = last_params = parts.total_params / t

    act_layer = activation_bytes_per_layer(
        s,
        b,
        c.hidden,
        c.heads,
        tensor_parallel=t,
        sequence_parallel=sequence_parallel,
        recompute=recompute,
    )
    logits = 4.0 * s * b * c.vocab / t if c.lm_head else 0.0
    first_act = in_flight * layers_per_stage * act_layer + (logits if p == 1 else 0.0)
    last_act = layers_per_stage * act_layer + logits

    def stage(params: float, activations: float) -> ParallelMemory:
        st = zero_model_state_bytes_per_gpu(params, d, zs, precision=precision, optimizer=optimizer)
        return ParallelMemory(
            params_per_gpu=params,
            weights_bytes=st.weights_bytes,
            gradients_bytes=st.gradients_bytes,
            master_weights_bytes=st.master_weights_bytes,
            optimizer_states_bytes=st.optimizer_states_bytes,
            activations_bytes=activations,
            total_bytes=st.total_bytes + activations,
        )

    first, last = stage(first_params, first_act), stage(last_params, last_act)
    return first if first.total_bytes >= last.total_bytes else last


# ---------------------------------------------------------------------------------------------
# Pipeline bubble
# ---------------------------------------------------------------------------------------------


def _pipeline_args(stages: object, microbatches: object, virtual_stages: object):
    p = validate.positive_int("stages", stages, maximum=10**6)
    m = validate.positive_int("microbatches", microbatches, maximum=10**9)
    v = validate.positive_int("virtual_stages", virtual_stages, maximum=10**6)
    return p, m, v


def pipeline_bubble_fraction(stages: int, microbatches: int, *, virtual_stages: int = 1) -> float:
    """Fraction of a pipeline schedule's time each GPU sits idle: (p - 1) / (v*m + p - 1).

    With ``virtual_stages`` v = 1 this is GPipe's bubble, (p - 1) / (m + p - 1) = 1 - m/(m + p - 1)
    (Huang et al. 2019; 1F1B has the same bubble). The interleaved schedule of Narayanan et al.
    2021 shrinks the bubble time to (p - 1)/v micro-batch times. More micro-batches, fewer stages
    or more virtual stages: a smaller bubble.
    """
    p, m, v = _pipeline_args(stages, microbatches, virtual_stages)
    return (p - 1) / (v * m + p - 1)


def pipeline_bubble_overhead(stages: int, microbatches: int, *, virtual_stages: int = 1) -> float:
    """Bubble time relative to the ideal (bubble-free) time: (p - 1) / (v*m), Narayanan et al.
    2021's form. ``overhead / (1 + overhead)`` = :func:`pipeline_bubble_fraction`."""
    p, m, v = _pipeline_args(stages, microbatches, virtual_stages)
    return (p - 1) / (v * m)


# ---------------------------------------------------------------------------------------------
# Data-parallel step time and scaling efficiency
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataParallelStep(Report):
    """One data-parallel training step: compute, gradient all-reduce, and what overlaps."""

    _title = "Data-parallel step"

    n_gpus: int
    compute_seconds: float
    communication_seconds: float
    exposed_communication_seconds: float
    step_seconds: float
    scaling_efficiency: float  # compute / step: 1.0 is perfect scaling
    speedup: float  # throughput relative to one GPU = n_gpus x scaling efficiency


def data_parallel_step_seconds(
    compute_seconds: float,
    gradient_bytes: float,
    n_gpus: int,
    bandwidth_bytes_per_s: float,
    *,
    latency_seconds: float = 0.0,
    overlap: float = 0.0,
) -> DataParallelStep:
    """Step time of data parallelism with a fixed per-GPU batch (weak scaling).

    Communication is one ring all-reduce of the gradients (:func:`ring_allreduce_seconds`).
    ``overlap`` is the fraction of the compute time during which that all-reduce can run
    concurrently (DDP overlaps bucketed all-reduces with the backward pass, about 2/3 of the
    compute); only what does not fit is exposed: step = compute + max(0, comm - overlap x compute).
    Scaling efficiency = compute / step; speedup = n_gpus x efficiency.
    """
    t_compute = validate.number(
        "compute_seconds", compute_seconds, minimum=0, maximum=1e9, strict_min=True
    )
    n = _gpus("n_gpus", n_gpus)
    comm = ring_allreduce_seconds(
        gradient_bytes, n, bandwidth_bytes_per_s, latency_seconds=latency_seconds
    )
    hidden = validate.fraction("overlap", overlap, allow_zero=True) * t_compute
    exposed = max(0.0, comm - hidden)
    step = t_compute + exposed
    efficiency = t_compute / step
    return DataParallelStep(
        n_gpus=n,
        compute_seconds=t_compute,
        communication_seconds=comm,
        exposed_communication_seconds=exposed,
        step_seconds=step,
        scaling_efficiency=efficiency,
        speedup=n * efficiency,
    )


# ---------------------------------------------------------------------------------------------
# Choosing a layout: data x tensor x pipeline parallelism on nodes of GPUs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutStep(Report):
    """One training step of a DP x TP x PP layout: memory of the busiest GPU and where time goes."""

    _title = "Training layout: one step"
    _formats = {"mfu": "percent", "hfu": "percent"}

    layout: str
    gpu: str
    dtype: str  # the GPU's own 16-bit format: bf16, or fp16 where it has none (V100)
    intra_node_link: str
    inter_node_link: str
    n_gpus: int
    global_batch: int  # sequences per step = data_parallel x micro-batches x micro-batch size
    memory_per_gpu_bytes: float
    gpu_memory_bytes: float
    fits: str
    model_flops: float  # per step: forward + backward, attention included, no recomputation
    hardware_flops: float  # what the GPUs execute: model FLOPs + the recomputed forward
    compute_seconds: float
    tensor_parallel_comm_seconds: float
    pipeline_comm_seconds: float
    data_parallel_comm_seconds: float
    bubble_seconds: float
    step_seconds: float
    bubble_fraction: float
    communication_fraction: float
    compute_efficiency: float  # compute / step
    mfu: float  # model FLOPs / (step x GPUs x peak): what the run reports as MFU
    hfu: float  # hardware FLOPs / (step x GPUs x peak): Megatron-LM's "% of peak"
    notes: str


def layout_step(
    config: TransformerConfig,
    *,
    gpu: str = "h100-sxm",
    gpus_per_node: int = 8,
    nodes: int = 1,
    data_parallel: int = 8,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
    zero_stage: int = 1,
    micro_batch: int = 1,
    microbatches: int = 8,
    seq_len: int = 4096,
    recompute: str = "selective",
    compute_hfu: float = 0.5,
    virtual_stages: int = 1,
    intra_node_link: str | None = None,
    inter_node_link: str | None = None,
) -> LayoutStep:
    """Memory per GPU and the step time of a layout, split into compute, communication, bubble.

    An estimate with stated assumptions (Narayanan et al. 2021 for the layout, Korthikanti et al.
    2022 for activations and recomputation):

    - ``data_parallel x tensor_parallel x pipeline_parallel`` must equal ``gpus_per_node x
      nodes``, and tensor parallelism stays inside a node (its all-reduces run on every layer);
      anything else is refused with ``ValueError``. Ranks are ordered TP, then DP, then PP
      (Megatron's order): DP crosses nodes once ``tensor_parallel x data_parallel`` exceeds a node.
      TP must divide the heads and the K/V heads (or be a multiple of them: K/V heads are then
      copied); stages that do not divide the layers are allowed, with a note (the busiest stage
      has ``ceil(layers / p)``).
    - Memory: :func:`parallel_training_memory_per_gpu` (mixed precision, Adam, sequence
      parallelism on when TP > 1; at most ``min(p, m)`` micro-batches in flight; the interleaved
      schedule's 1 + (p - 1)/(p v)), against the GPU's memory.
    - Compute: the model FLOPs of :func:`course.calculators.compute.training_flops_with_attention`
      (6 N per token plus attention's 12 l s h, which matters at long context), plus the recomputed
      forward (all layers with ``recompute="full"``, the attention core with ``"selective"``): the
      *hardware* FLOPs, executed at ``compute_hfu`` x the GPU's dense peak in its own 16-bit format
      (bf16, fp16 on a V100). ``compute_hfu`` is the kernels' efficiency while computing, an HFU
      before any bubble or communication; its default 0.5 is about what Narayanan et al. 2021, Table
      2, imply for GPT-3 175B on A100s (0.53; 0.59 for their 530B:
      tests/calculators/test_parallel.py calibrates it on each model's smallest cluster and
      predicts the two larger ones within 2 %). It grows with the model's matrices: Korthikanti et
      al. 2022, Table 5, imply 0.47 for 22B on 8 GPUs up to 0.66 for 1T on 512, and with it the
      full-recomputation times within 2.5 % (tests/presentation/test_layout_korthikanti.py).
    - Bubble: compute x (p - 1) / (v m) (:func:`pipeline_bubble_overhead`; ``virtual_stages`` v > 1
      is the interleaved schedule of Narayanan et al. 2021, sec. 2.2.2).
    - TP: per layer and micro-batch, 2 all-reduces forward and 2 backward of b x s x h 16-bit
      activations over the node's link. PP: one activation send forward and one gradient back per
      stage boundary and micro-batch (v times as many when interleaved). DP: one all-reduce of the
      16-bit gradients of the GPU's parameters (ZeRO-3 adds the weights' all-gathers: 1.5x,
      Rajbhandari et al. 2019), over the inter-node link (one port per GPU) once DP leaves the node.
    - Links: the GPU's own (:func:`gpu_links`) unless ``intra_node_link`` / ``inter_node_link``
      name a row of ``course.facts.hardware.INTERCONNECTS``.
    - Nothing overlaps (an upper bound: real frameworks hide much of the DP all-reduce behind the
      backward pass).

    The result's ``mfu`` and ``hfu`` are the whole step's: model FLOPs and hardware FLOPs over
    (step time x GPUs x peak). Megatron-LM reports the second (its FLOPs count the recomputation).
    Korthikanti et al. 2022's HFU (their eq. 8, Table 5) adds 12 B L s^2 h for selective
    recomputation, three times the recomputed attention forward their appendix A lists; ``hfu``
    here counts it once, so it reads lower than theirs by that much.
    """
    from course.calculators.compute import attention_flops_per_token, training_flops_with_attention
    from course.facts.hardware import gpu as lookup_gpu

    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    device = lookup_gpu(gpu)
    per_node = validate.positive_int("gpus_per_node", gpus_per_node, maximum=1024)
    n_nodes = _gpus("nodes", nodes)
    d = _gpus("data_parallel", data_parallel)
    t = validate.positive_int("tensor_parallel", tensor_parallel, maximum=MAX_GPUS)
    p = validate.positive_int("pipeline_parallel", pipeline_parallel, maximum=MAX_GPUS)
    total = per_node * n_nodes
    if d * t * p != total:
        raise ValueError(
            f"data x tensor x pipeline parallel = {d} x {t} x {p} = {d * t * p:,} GPUs must equal "
            f"GPUs per node x nodes = {per_node} x {n_nodes} = {total:,}"
        )
    if t > per_node:
        raise ValueError(
            f"tensor_parallel ({t}) must be at most GPUs per node ({per_node}): its all-reduces "
            "run on every layer and need the node's NVLink"
        )
    if config.heads % t:
        raise ValueError(
            f"tensor_parallel ({t}) must divide the {config.heads} attention heads "
            "(each GPU computes whole heads)"
        )
    if config.kv_heads % t and t % config.kv_heads:
        raise ValueError(
            f"tensor_parallel ({t}) must divide the {config.kv_heads} K/V heads, or "
            "be a multiple of them (each GPU then keeps a copy of one)"
        )
    if p > config.layers:
        raise ValueError(
            f"pipeline_parallel ({p}) must be at most the model's {config.layers} "
            "layers (one layer per stage at least)"
        )
    m = validate.positive_int("microbatches", microbatches, maximum=10**6)
    v = validate.positive_int("virtual_stages", virtual_stages, maximum=config.layers)
    if p * v > config.layers:
        raise ValueError(
            f"pipeline_parallel x virtual_stages = {p * v} must be at most the "
            f"model's {config.layers} layers"
        )
    b = validate.positive_int("micro_batch", micro_batch, maximum=MAX_BATCH)
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    rc = validate.choice("recompute", recompute, RECOMPUTE)
    eff = validate.fraction("compute_hfu", compute_hfu)
    own_intra, own_inter = gpu_links(device.key)
    intra = link_or_default("intra_node_link", intra_node_link, own_intra)
    inter = link_or_default("inter_node_link", inter_node_link, own_inter)
    dtype = "bf16" if "bf16" in device.dense_flop_per_s else "fp16"
    peak = device.peak_flop_per_s(dtype)

    mem = parallel_training_memory_per_gpu(
        config,
        seq_len=s,
        micro_batch=b,
        tensor_parallel=t,
        pipeline_parallel=p,
        data_parallel=d,
        zero_stage=zero_stage,
        sequence_parallel=t > 1,
        recompute=rc,
        microbatches=m,
        virtual_stages=v,
    )
    tokens = d * m * b * s
    model_flops = training_flops_with_attention(config, tokens, s)
    if rc == "full":
        hardware_flops = training_flops_with_attention(config, tokens, s, recompute=True)
    elif rc == "selective":  # the attention core's forward (Q K^T, softmax, x V) runs again
        hardware_flops = model_flops + attention_flops_per_token(config, s) * tokens
    else:
        hardware_flops = model_flops
    compute = hardware_flops / (total * eff * peak)
    bubble = compute * pipeline_bubble_overhead(p, m, virtual_stages=v)
    act_bytes = 2.0 * b * s * config.hidden
    layers_here = math.ceil(config.layers / p)
    per_layer = tensor_parallel_layer_comm(
        config,
        seq_len=s,
        micro_batch=b,
        tensor_parallel=t,
        bandwidth_bytes_per_s=intra.bandwidth_bytes_per_s,
    )
    tp_comm = layers_here * m * per_layer.seconds
    pp_link = intra if t * d * p <= per_node else inter
    pp_comm = 0.0 if p == 1 else 2 * v * m * act_bytes / (t * pp_link.bandwidth_bytes_per_s)
    dp_link = intra if t * d <= per_node else inter
    grad_bytes = 2.0 * mem.params_per_gpu
    dp_comm = ring_allreduce_seconds(grad_bytes, d, dp_link.bandwidth_bytes_per_s) * (
        1.5 if zero_stage == 3 else 1.0
    )
    comm = tp_comm + pp_comm + dp_comm
    step = compute + bubble + comm
    capacity = device.memory_bytes
    notes = []
    if config.layers % p:
        notes.append(
            f"{p} stages do not divide the {config.layers} layers: the busiest stage has "
            f"{layers_here}, the others wait for it"
        )
    if m < p:
        notes.append(f"fewer micro-batches ({m}) than stages ({p}): most of the step is bubble")
    if t > config.kv_heads:
        notes.append(
            f"TP {t} exceeds the {config.kv_heads} K/V heads: each is copied "
            f"{t // config.kv_heads} times"
        )
    if dtype != "bf16":
        notes.append(f"the {device.name} has no bf16: priced in fp16")
    sched = f", interleaved v = {v}" if v > 1 else ""
    return LayoutStep(
        layout=f"DP {d} x TP {t} x PP {p}{sched}, ZeRO-{zero_stage}, {m} micro-batches of {b}",
        gpu=device.name,
        dtype=dtype,
        intra_node_link=intra.name,
        inter_node_link=inter.name,
        n_gpus=total,
        global_batch=d * m * b,
        memory_per_gpu_bytes=mem.total_bytes,
        gpu_memory_bytes=capacity,
        fits="yes"
        if mem.total_bytes <= capacity
        else f"no: {mem.total_bytes / capacity:.1f}x the GPU's memory",
        model_flops=model_flops,
        hardware_flops=hardware_flops,
        compute_seconds=compute,
        tensor_parallel_comm_seconds=tp_comm,
        pipeline_comm_seconds=pp_comm,
        data_parallel_comm_seconds=dp_comm,
        bubble_seconds=bubble,
        step_seconds=step,
        bubble_fraction=bubble / step,
        communication_fraction=comm / step,
        compute_efficiency=compute / step,
        mfu=model_flops / (step * total * peak),
        hfu=hardware_flops / (step * total * peak),
        notes="; ".join(notes) or "none",
    )


__all__ = [
    "LayoutStep",
    "layout_step",
    "DataParallelStep",
    "ParallelMemory",
    "ShardedModelState",
    "data_parallel_step_seconds",
    "parallel_training_memory_per_gpu",
    "pipeline_bubble_fraction",
    "pipeline_bubble_overhead",
    "zero_model_state_bytes_per_gpu",
]
