"""FLOPs, the roofline, and the time, energy and cost of a workload.

- FLOPs of a transformer: about 2 per parameter per token forward and 6 training (Kaplan et al.
  2020, sec. 2.1), plus an attention term that grows with the context: forward
  ``4 * layers * seq_len * heads * head_dim`` per token (Q K^T and attention x V; Narayanan et al.
  2021, sec. 5.1, count the same). :func:`forward_flops_per_token` counts every matrix multiply of a
  config exactly; tests/calculators/test_compute.py checks it against ``torch.utils.flop_counter``
  on real models built from the same config.
- The roofline (Williams, Waterman, Patterson 2009): time >= max(FLOPs / peak, bytes / bandwidth);
  the critical intensity peak / bandwidth says which bound applies.
- Time, MFU, energy and cost of a training run from a GPU in ``course.facts.hardware``.

Used by lessons 02, 05, 07 and 10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from course.calculators.memory import MAX_COUNT, params_of
from course.facts import hardware, validate
from course.facts.dtypes import BYTES_PER_VALUE, float_format
from course.facts.models import (
    TransformerConfig,
    active_matmul_params,
    checked_config,
)
from course.facts.report import Report
from course.facts.validate import MAX_GPUS

#: Largest FLOP count accepted (1e40; a frontier training run is ~1e26).
MAX_FLOPS = 1e40
#: Largest FLOP rate accepted, per GPU or per cluster (a zettaFLOP/s).
MAX_FLOP_RATE = 1e21
#: Largest bandwidth accepted (an exabyte per second).
MAX_BANDWIDTH_BYTES_PER_S = 1e18
#: Largest byte count accepted for data moved by a workload.
MAX_BYTES_MOVED = 1e30


def _flops(name: str, value: object) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_FLOPS)


def _rate(name: str, value: object) -> float:
    """A FLOP rate in [1, MAX_FLOP_RATE] FLOP/s (below 1 FLOP/s nothing is a computer)."""
    return validate.number(name, value, minimum=1, maximum=MAX_FLOP_RATE)


def _bandwidth_bytes_per_s(name: str, value: object) -> float:
    """A bandwidth in [1, MAX_BANDWIDTH_BYTES_PER_S] bytes/s."""
    return validate.number(name, value, minimum=1, maximum=MAX_BANDWIDTH_BYTES_PER_S)


def _utilisation(name: str, value: object) -> float:
    """A share of peak in [1e-6, 1] (a zero share would mean infinite time)."""
    return validate.number(name, value, minimum=1e-6, maximum=1)


def _bytes(name: str, value: object) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_BYTES_MOVED)


# ---------------------------------------------------------------------------------------------
# FLOPs of a transformer
# ---------------------------------------------------------------------------------------------


def attention_flops_per_token(
    config: TransformerConfig, seq_len: int, *, causal: bool = False
) -> float:
    """Forward FLOPs per token of the attention scores and their product with V, all layers.

    ``2 * 2 * layers * seq_len * heads * head_dim``: Q K^T and (softmax) x V, each a multiply-add
    per key position per query dimension. Dense kernels compute the full square even with a
    causal mask; ``causal=True`` halves it, as causal FlashAttention does and Kaplan et al. 2020
    assume (their ``2 * n_layer * n_ctx * d_attn``).
    """
    c = checked_config(config)
    s = validate.positive_int("seq_len", seq_len, maximum=10**8)
    validate.choice("causal", causal, (True, False))
    full = 4.0 * c.layers * s * c.heads * c.head_dim
    return full / 2 if causal else full


def forward_flops_per_token(
    config: TransformerConfig, seq_len: int, *, causal: bool = False
) -> float:
    """Forward-pass FLOPs per token of a sequence of ``seq_len`` tokens, every matmul counted.

    = 2 x (matmul weights of all layers) + 2 x hidden x vocab (LM head, tied or not: the multiply
    happens either way) + :func:`attention_flops_per_token` + BERT's pooler (2 x hidden^2 once per
    sequence, spread over its tokens). Norms, softmax, activations, residual adds and embedding
    lookups are left out: they are O(hidden) per token against O(hidden^2), and
    ``FlopCounterMode`` does not count them either. Compare Kaplan's ``2N + 2 n_layer n_ctx d``.
    """
    c = checked_config(config)
    attention = attention_flops_per_token(c, seq_len, causal=causal)
    dense = 2.0 * active_matmul_params(c)  # a mixture of experts: its active experts only
    head = 2.0 * c.hidden * c.vocab if c.lm_head else 0.0
    pooler = 2.0 * c.hidden * c.hidden / seq_len if c.pooler else 0.0
    return dense + head + attention + pooler


def forward_flops(
    config: TransformerConfig, seq_len: int, *, batch: int = 1, causal: bool = False
) -> float:
    """Forward FLOPs of ``batch`` sequences of ``seq_len`` tokens (see
    :func:`forward_flops_per_token`)."""
    b = validate.positive_int("batch", batch, maximum=10**9)
    return forward_flops_per_token(config, seq_len, causal=causal) * seq_len * b


def training_flops(params: float, tokens: float, *, recompute: bool = False) -> float:
    """Training FLOPs ~ 6 x params x tokens (Kaplan et al. 2020, sec. 2.1), 8 x with full
    activation recomputation.

    2N per token forward and 4N backward (gradients with respect to activations and to weights);
    the optimizer step is O(N) per *step*, not per token, so it is negligible. GPT-3: 6 x 175e9 x
    300e9 = 3.15e23; Brown et al. 2020 (Table D.1) give 3.14e23. Full recomputation runs each
    forward again during the backward: 8N per token executed (Narayanan et al. 2021, sec. 5.1).
    This is the one place the 6 (or 8) is written; every other calculator calls it.
    """
    validate.choice("recompute", recompute, (True, False))
    return (8.0 if recompute else 6.0) * params_of("params", params) * params_of("tokens", tokens)


def training_flops_with_attention(
    config: TransformerConfig, tokens: float, seq_len: int, *, recompute: bool = False
) -> float:
    """Training FLOPs counting attention: 3 x forward (4 x for the layers with full recomputation).

    Backward costs twice the forward for every matmul, so training is 3 x the forward pass
    (:func:`forward_flops_per_token`, attention over ``seq_len`` included). With full activation
    recomputation each transformer layer's forward runs again during the backward pass: the layers
    cost 4 x their forward, while the LM head, which is not recomputed, stays at 3 x its forward.
    This is Narayanan et al. 2021, sec. 5.1, per iteration of B sequences:

    - with recomputation (their eq. 3): ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``;
    - without recomputation: ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))``.

    (``96 B s l h^2 * V/(16 l h) = 6 B s h V``: the head's forward 2BshV, times 3, in both.) Per
    token without recomputation this is ``6N + 12 * layers * seq_len * hidden`` plus the LM head
    (72 B s l h^2 / (B s) = 6 x 12 l h^2 = 6N). Attention is counted over the full s x s scores,
    as in the paper.
    """
    n_tokens = params_of("tokens", tokens)
    validate.choice("recompute", recompute, (True, False))
    forward = forward_flops_per_token(config, seq_len)
    if not recompute:
        return 3.0 * forward * n_tokens
    head = 2.0 * config.hidden * config.vocab if config.lm_head else 0.0
    return (4.0 * (forward - head) + 3.0 * head) * n_tokens


def inference_flops(params: float, tokens: float) -> float:
    """Inference (forward) FLOPs ~ 2 x params x tokens generated or processed.

    Leaves out attention over the context; for that use :func:`forward_flops_per_token` with the
    context length.
    """
    return 2.0 * params_of("params", params) * params_of("tokens", tokens)


# ---------------------------------------------------------------------------------------------
# The roofline
# ---------------------------------------------------------------------------------------------


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOPs per byte moved to or from memory."""
    f = _flops("flops", flops)
    moved = validate.number(
        "bytes_moved", bytes_moved, minimum=0, maximum=MAX_BYTES_MOVED, strict_min=True
    )
    return f / moved


def critical_intensity(peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """The ridge point: intensity (FLOP/byte) above which a kernel is compute-bound.

    H100 SXM at bf16: 989.4e12 / 3.35e12 = 295 FLOP/byte.
    """
    return _rate("peak_flop_per_s", peak_flop_per_s) / _bandwidth_bytes_per_s(
        "bandwidth_bytes_per_s", bandwidth_bytes_per_s
    )


def attainable_flop_per_s(
    intensity: float, peak_flop_per_s: float, bandwidth_bytes_per_s: float
) -> float:
    """Roofline ceiling at a given intensity: min(peak, intensity x bandwidth)."""
    i = validate.number("intensity", intensity, minimum=0, maximum=MAX_FLOPS)
    return min(
        _rate("peak_flop_per_s", peak_flop_per_s),
        i * _bandwidth_bytes_per_s("bandwidth_bytes_per_s", bandwidth_bytes_per_s),
    )


@dataclass(frozen=True)
class Roofline(Report):
    """Lower bound on a kernel's time from the roofline model."""

    _title = "Roofline estimate"

    compute_seconds: float  # flops / peak
    memory_seconds: float  # bytes / bandwidth
    seconds: float  # the larger of the two
    bound: str  # "compute" or "memory"
    intensity_flop_per_byte: float
    critical_intensity_flop_per_byte: float
    attainable_flop_per_s: float  # min(peak, intensity x bandwidth)
    #: attainable / peak: the most of the compute peak this operation can use (not in the table)
    peak_fraction: float = field(default=math.nan, repr=False)


def roofline_seconds(
    flops: float, bytes_moved: float, peak_flop_per_s: float, bandwidth_bytes_per_s: float
) -> Roofline:
    """Time >= max(flops / peak_flop_per_s, bytes_moved / bandwidth), and which bound applies.

    ``bound`` is ``"compute"`` when the FLOP time is the larger (ties count as compute). Real
    kernels reach 50-80 % of either roof; divide by an efficiency to estimate, not to bound.
    """
    f = _flops("flops", flops)
    moved = _bytes("bytes_moved", bytes_moved)
    peak = _rate("peak_flop_per_s", peak_flop_per_s)
    bw = _bandwidth_bytes_per_s("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    if f == 0 and moved == 0:
        raise ValueError("flops and bytes_moved cannot both be 0: there is no work to time")
    t_compute, t_memory = f / peak, moved / bw
    seconds = max(t_compute, t_memory)
    return Roofline(
        compute_seconds=t_compute,
        memory_seconds=t_memory,
        seconds=seconds,
        bound="compute" if t_compute >= t_memory else "memory",
        intensity_flop_per_byte=f / moved if moved else math.inf,
        critical_intensity_flop_per_byte=peak / bw,
        attainable_flop_per_s=min(peak, (f / moved if moved else math.inf) * bw),
        peak_fraction=min(peak, (f / moved if moved else math.inf) * bw) / peak,
    )


def _dims(m: object, n: object, k: object) -> tuple[int, int, int]:
    return (
        validate.positive_int("m", m, maximum=10**9),
        validate.positive_int("n", n, maximum=10**9),
        validate.positive_int("k", k, maximum=10**9),
    )


def matmul_flops(m: int, n: int, k: int) -> float:
    """FLOPs of an (m x k) @ (k x n) matrix multiply: 2mnk (one multiply and one add each).

    4096^3: 2 x 68.7e9 multiply-adds = 137.4 GFLOP (*Computational Resources for ML* calls these
    "multiply-add operations").
    """
    dims = _dims(m, n, k)
    return 2.0 * dims[0] * dims[1] * dims[2]


def matmul_bytes(m: int, n: int, k: int, *, bytes_per_element: float = 2) -> float:
    """Least bytes an (m x k) @ (k x n) multiply moves: read A and B once, write C once."""
    dims = _dims(m, n, k)
    bpe = validate.number(
        "bytes_per_element", bytes_per_element, minimum=0, maximum=8, strict_min=True
    )
    a, b, c = dims[0] * dims[2], dims[2] * dims[1], dims[0] * dims[1]
    return float(a + b + c) * bpe


def weights_read_seconds(params: float, dtype: str, bandwidth_bytes_per_s: float) -> float:
    """Time to read every weight once from memory: the floor on one decoding step at batch 1.

    A 13B model in fp16 at 900 GB/s: 26e9 / 900e9 = 28.9 ms (*GPU Infrastructure & Computational
    Requirements* says ~15 ms).
    """
    n = params_of("params", params)
    bpp = BYTES_PER_VALUE[validate.choice("dtype", dtype, BYTES_PER_VALUE)]
    return n * bpp / _bandwidth_bytes_per_s("bandwidth_bytes_per_s", bandwidth_bytes_per_s)


@dataclass(frozen=True)
class DecodeStep(Report):
    """Roofline floor of one decoding step of a whole batch (weights only; see
    :func:`decode_step`)."""

    _title = "Decoding step (roofline floor)"

    gpu: str
    weights_dtype: str
    compute_dtype: str
    batch: int
    weights_bytes: float  # read once per step, shared by the whole batch
    work_flops: float  # 2 x params x batch
    memory_floor_seconds: float  # weights_bytes / bandwidth
    compute_floor_seconds: float  # work_flops / peak
    step_seconds: float  # the larger of the two
    bound: str  # "memory" or "compute"
    tokens_per_s: float  # batch / seconds: tokens generated per second, all sequences together
    compute_bound_batch: float  # batch above which the step is compute-bound


def decode_step(
    params: float,
    dtype: str,
    gpu: hardware.GPU | str,
    batch: int = 1,
    *,
    compute_dtype: str | None = None,
) -> DecodeStep:
    """Floor on the time of one decoding step: every weight read once, 2 FLOPs per weight per token.

    time >= max(params x bytes(dtype) / bandwidth, 2 x params x batch / peak(compute_dtype)).
    At batch 1 the memory term wins by far on every GPU; the batch at which the two are equal,
    bytes per param x peak / (2 x bandwidth), is where batching stops being free (H100 SXM, bf16:
    2 x 989.4e12 / (2 x 3.35e12) = 295). ``compute_dtype`` defaults to ``dtype`` where the GPU
    has a peak for it, else fp16 (weight-only int4/int8 is dequantised to 16 bits to multiply).
    Leaves out the KV cache and activations, which add bytes per sequence (lessons 04 and 07).
    """
    card = hardware.gpu(gpu)
    # at least one weight: a subnormal count would make the step take 0 s (tokens/s = b / 0)
    n = validate.number("params", params, minimum=1, maximum=MAX_COUNT)
    w_bytes = n * BYTES_PER_VALUE[validate.choice("dtype", dtype, BYTES_PER_VALUE)]
    b = validate.positive_int("batch", batch, maximum=10**7)
    if compute_dtype is None:
        compute_dtype = dtype if dtype in card.dense_flop_per_s else "fp16"
    peak = card.peak_flop_per_s(validate.choice("compute_dtype", compute_dtype, hardware.DTYPES))
    flops = 2.0 * n * b
    t_mem, t_compute = w_bytes / card.memory_bandwidth_bytes_per_s, flops / peak
    seconds = max(t_mem, t_compute)
    return DecodeStep(
        gpu=card.name,
        weights_dtype=dtype,
        compute_dtype=compute_dtype,
        batch=b,
        weights_bytes=w_bytes,
        work_flops=flops,
        memory_floor_seconds=t_mem,
        compute_floor_seconds=t_compute,
        step_seconds=seconds,
        bound="compute" if t_compute >= t_mem else "memory",
        tokens_per_s=b / seconds,
        compute_bound_batch=w_bytes / card.memory_bandwidth_bytes_per_s * peak / (2.0 * n),
    )


# ---------------------------------------------------------------------------------------------
# Time, utilisation, energy and cost of training
# ---------------------------------------------------------------------------------------------


def training_seconds(
    params: float,
    tokens: float,
    n_gpus: int,
    peak_flops_per_gpu: float,
    *,
    mfu: float = 0.4,
    recompute: bool = False,
) -> float:
    """Wall-clock seconds to train: FLOPs / (n_gpus x peak x mfu).

    FLOPs are 6 x params x tokens, or 8 x with full activation recomputation, whose extra forward
    the GPUs really execute: Narayanan et al. 2021 (sec. 5.1) estimate ``8 T P / (n X)``, with X the
    achieved FLOP/s per GPU counting that recomputation. So ``mfu`` here is the achieved fraction
    of ``peak_flops_per_gpu`` on the FLOPs executed (hardware FLOPs utilisation when
    ``recompute=True``, model FLOPs utilisation otherwise). 0.3-0.5 is typical of large runs.
    """
    flops = training_flops(params, tokens, recompute=recompute)
    gpus = validate.positive_int("n_gpus", n_gpus, maximum=MAX_GPUS)
    peak = _rate("peak_flops_per_gpu", peak_flops_per_gpu)
    util = _utilisation("mfu", mfu)
    return flops / (gpus * peak * util)


def mfu(
    params: float,
    tokens_per_second: float,
    n_gpus: int,
    peak_flops_per_gpu: float,
    *,
    flops_per_token: float | None = None,
) -> float:
    """Model FLOPs utilisation: model FLOP/s achieved / peak FLOP/s (Chowdhery et al. 2022, PaLM,
    appendix B).

    Model FLOPs per token default to 6 x params (training); pass ``flops_per_token`` to include
    attention (``training_flops_with_attention(...) / tokens``) or to measure inference (2 x
    params). Recomputation does not count: it is not model work. A result above 1 means the
    inputs are inconsistent (or the peak is the sparse one).
    """
    n = params_of("params", params)
    rate = validate.number("tokens_per_second", tokens_per_second, minimum=0, maximum=MAX_COUNT)
    gpus = validate.positive_int("n_gpus", n_gpus, maximum=MAX_GPUS)
    peak = _rate("peak_flops_per_gpu", peak_flops_per_gpu)
    if flops_per_token is None:
        per_token = 6.0 * n
    else:
        per_token = validate.number(
            "flops_per_token",
            flops_per_token,
            minimum=0,
            maximum=MAX_FLOPS / MAX_COUNT,
            strict_min=True,
        )
    return per_token * rate / (gpus * peak)


# ---------------------------------------------------------------------------------------------
# Compute-optimal size, attention share, hardware utilisation (lesson 05)
# ---------------------------------------------------------------------------------------------


def chinchilla_optimal(flops: float, *, tokens_per_param: float = 20) -> tuple[float, float]:
    """(params, tokens) that spend ``flops`` compute-optimally: C = 6ND with D = k x N.

    Hoffmann et al. 2022 ("Chinchilla") find that parameters and tokens should grow together,
    about 20 tokens per parameter (Chinchilla itself: 70B parameters on 1.4T tokens). Solving
    C = 6 N (k N) gives N = sqrt(C / 6k), D = k N. Returns floats (params, tokens).
    """
    c = validate.number("flops", flops, minimum=0, maximum=MAX_FLOPS, strict_min=True)
    k = validate.number(
        "tokens_per_param", tokens_per_param, minimum=0, maximum=1e6, strict_min=True
    )
    params = math.sqrt(c / (6.0 * k))
    return params, k * params


def attention_share(config: TransformerConfig, seq_len: int, *, causal: bool = False) -> float:
    """Fraction of the forward FLOPs per token spent on attention scores and attention x V.

    = :func:`attention_flops_per_token` / :func:`forward_flops_per_token`. Small at short context
    (Llama-2-7B at 2,048 tokens: ~7 %), it grows with the context length because the attention
    term is ``4 * layers * seq_len * hidden`` per token while the weights' term is fixed.
    """
    return attention_flops_per_token(config, seq_len, causal=causal) / forward_flops_per_token(
        config, seq_len, causal=causal
    )


def hfu(
    params: float,
    tokens_per_second: float,
    n_gpus: int,
    peak_flops_per_gpu: float,
    *,
    recomputed_forward_fraction: float = 1.0,
) -> float:
    """Hardware FLOPs utilisation: FLOPs the hardware executed per second / peak (PaLM, app. B).

    Like :func:`mfu` but counting the recomputed (rematerialised) forward pass too: per token
    ``6N + 2N x recomputed_forward_fraction`` (1.0 = full activation recomputation, 8N per token;
    0 = none, and HFU equals MFU). So HFU / MFU = 1 + fraction / 3; PaLM's 57.8 % HFU over
    46.2 % MFU (Chowdhery et al. 2022, Table 3) is a ratio of 1.25, about three quarters of the
    forward recomputed. MFU is the fairer measure: recomputation is work, not progress.
    """
    frac = validate.number(
        "recomputed_forward_fraction", recomputed_forward_fraction, minimum=0, maximum=1
    )
    n = params_of("params", params)
    return mfu(
        n, tokens_per_second, n_gpus, peak_flops_per_gpu, flops_per_token=(6.0 + 2.0 * frac) * n
    )


# ---------------------------------------------------------------------------------------------
# Tensor Cores against CUDA cores (practice question 2)
# ---------------------------------------------------------------------------------------------

#: The precisions a matmul can be asked in, and the registry's peak key on each path: the Tensor
#: Core path (``None``: there is none; an FP32 matmul runs on CUDA cores unless TF32 is allowed)
#: and the CUDA-core path (FP64 units for fp64, the FP32 lanes for everything else: a 16- or
#: 8-bit product without Tensor Cores is widened and computed in FP32).
PRECISION_PATHS = {
    "fp64": ("fp64_tc", "fp64"),
    "fp32": (None, "fp32"),
    "tf32": ("tf32", "fp32"),
    "fp16": ("fp16", "fp32"),
    "bf16": ("bf16", "fp32"),
    "fp8": ("fp8", "fp32"),
}


def precisions_on(gpu: hardware.GPU | str) -> tuple[str, ...]:
    """The precisions of :data:`PRECISION_PATHS` that ``gpu`` has at least one path for."""
    card = hardware.gpu(gpu)
    return tuple(
        p
        for p, (tensor, cuda) in PRECISION_PATHS.items()
        if (tensor in card.dense_flop_per_s)
        or (p in ("fp64", "fp32") and cuda in card.dense_flop_per_s)
    )


@dataclass(frozen=True)
class CorePaths(Report):
    """One precision on one GPU: Tensor Core peaks against CUDA cores, and a matmul on each."""

    _title = "Tensor Cores against CUDA cores"

    gpu: str
    precision: str
    tensor_core_dense_flop_per_s: float | None  # None: no Tensor Core path for this precision
    tensor_core_sparse_flop_per_s: float | None  # 2:4 structured sparsity; None where not quoted
    cuda_core_flop_per_s: float
    tensor_over_cuda: float | None  # dense Tensor Core peak / CUDA-core peak
    matmul_flops: float
    matmul_bytes: float  # A and B read once, C written once, in this precision
    tensor_core_seconds: float | None  # roofline floor of the matmul on the Tensor Cores
    tensor_core_bound: str | None
    cuda_core_seconds: float
    cuda_core_bound: str


def core_paths(
    gpu: hardware.GPU | str, precision: str, m: int = 4096, n: int = 4096, k: int = 4096
) -> CorePaths:
    """Practice question 2 of *AI Infrastructure* ("how do Tensor Cores differ from CUDA cores?"),
    with numbers: dense and sparse Tensor Core peaks of ``precision`` on ``gpu`` against its
    CUDA-core peak (datasheet figures from ``course.facts.hardware``), and the roofline floor
    (:func:`roofline_seconds`) of an (m x k) @ (k x n) product on each path.

    H100 SXM, fp16: 989.4 TFLOP/s dense and 1,978.9 sparse on Tensor Cores against 67 TFLOP/s of
    FP32 on CUDA cores: 14.8x (NVIDIA H100 datasheet). The CUDA-core path computes a 16- or 8-bit
    product in FP32 (the FP32 lanes' peak), the fp64 path on the FP64 units; the bytes moved are
    the same on both paths (the operands stay in ``precision``; tf32 is stored as fp32).
    """
    card = hardware.gpu(gpu)
    p = validate.choice("precision", precision, precisions_on(card))
    tensor_key, cuda_key = PRECISION_PATHS[p]
    flops = matmul_flops(m, n, k)
    # fp64 is not a weight dtype of the course (BYTES_PER_VALUE); its size comes from its format
    bpe = float_format("fp64").bytes_stored if p == "fp64" else BYTES_PER_VALUE[p]
    moved = matmul_bytes(m, n, k, bytes_per_element=bpe)
    bw = card.memory_bandwidth_bytes_per_s
    cuda_peak = card.dense_flop_per_s.get(cuda_key, card.dense_flop_per_s["fp32"])
    cuda = roofline_seconds(flops, moved, cuda_peak, bw)
    dense = card.dense_flop_per_s.get(tensor_key) if tensor_key else None
    sparse = card.sparse_flop_per_s.get(tensor_key) if tensor_key else None
    tensor = roofline_seconds(flops, moved, dense, bw) if dense else None
    return CorePaths(
        gpu=card.name,
        precision=p,
        tensor_core_dense_flop_per_s=dense,
        tensor_core_sparse_flop_per_s=sparse,
        cuda_core_flop_per_s=cuda_peak,
        tensor_over_cuda=dense / cuda_peak if dense else None,
        matmul_flops=flops,
        matmul_bytes=moved,
        tensor_core_seconds=tensor.seconds if tensor else None,
        tensor_core_bound=tensor.bound if tensor else None,
        cuda_core_seconds=cuda.seconds,
        cuda_core_bound=cuda.bound,
    )


__all__ = [
    "CorePaths",
    "DecodeStep",
    "PRECISION_PATHS",
    "Roofline",
    "arithmetic_intensity",
    "attainable_flop_per_s",
    "attention_flops_per_token",
    "attention_share",
    "chinchilla_optimal",
    "core_paths",
    "critical_intensity",
    "decode_step",
    "forward_flops",
    "forward_flops_per_token",
    "hfu",
    "inference_flops",
    "matmul_bytes",
    "matmul_flops",
    "mfu",
    "precisions_on",
    "roofline_seconds",
    "training_flops",
    "training_flops_with_attention",
    "training_seconds",
    "weights_read_seconds",
]
