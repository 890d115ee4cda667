"""How much memory a model needs: weights, training state, activations, KV cache, GPUs.

Every function is a pure calculator in bytes (GB = 1e9 bytes when displayed; results also show
GiB). The principled estimates follow published accounting:

- model states (weights, gradients, optimizer states, fp32 master weights): Rajbhandari et al.
  2019, "ZeRO" sec. 3.1 (mixed-precision Adam = 2 + 2 + 12 = 16 bytes/param);
- activations per layer: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  Transformer Models", Table 2 (16-bit activations);
- KV cache: 2 (K and V) x layers x kv_heads x head_dim x tokens x bytes (Kwon et al. 2023, sec. 3).

For the course's own Llama-style transformer, :func:`step_activation_bytes` and
:func:`training_step_memory` count one training step tensor by tensor and follow its peak through
the backward pass: that is what ``course.measure.step_memory`` measures with torch's MemTracker, and
the two agree (tests/measure/test_step_memory.py).

The readings' rules of thumb are in :mod:`course.claims`, beside these. Used by lessons 04, 07 and
10. About 640 lines, kept as one module: it answers one question (how many bytes), and its two
accountings, per parameter and tensor by tensor, check each other (tests/calculators/test_memory.py)
and share their input checks and limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.facts import hardware, validate
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import TransformerConfig, matmul_params_per_layer
from course.facts.report import Report

#: Largest parameter or token count accepted (a quadrillion): beyond any real model or dataset.
MAX_COUNT = 1e15
#: Largest byte count accepted (a zettabyte).
MAX_BYTES = 1e21
#: Largest sequence length / batch / layer count accepted.
MAX_SEQ_LEN = 10**8
MAX_BATCH = 10**8
#: Share of a GPU's memory a model may fill: the rest holds the CUDA context, the allocator's
#: fragmentation and communication buffers (a planning figure; 1.0 is the datasheet ceiling).
USABLE_MEMORY_FRACTION = 0.9

PRECISIONS = ("mixed", "mixed_fp32_grads", "fp32")
OPTIMIZERS = ("adam", "adamw", "sgd", "sgd_momentum", "adam_8bit")
RECOMPUTE = ("none", "selective", "full")

# bytes/param of (weights, gradients, fp32 master weights) per precision
_PRECISION_BYTES = {"mixed": (2, 2, 4), "mixed_fp32_grads": (2, 4, 4), "fp32": (4, 4, 0)}
# bytes/param of optimizer state: Adam m and v in fp32; SGD momentum fp32; 8-bit Adam 1 + 1
_OPTIMIZER_BYTES = {"adam": 8, "adamw": 8, "sgd": 0, "sgd_momentum": 4, "adam_8bit": 2}


def params_of(name: str, value: object) -> float:
    """A parameter (or token) count: a finite number in (0, MAX_COUNT]; floats like 7e9 are fine."""
    return validate.number(name, value, minimum=0, maximum=MAX_COUNT, strict_min=True)


def _params_or_config(model: object) -> tuple[float, TransformerConfig | None]:
    if isinstance(model, TransformerConfig):
        return float(model.params), model
    try:
        return params_of("model", model), None
    except ValueError:
        raise ValueError(
            f"model must be a TransformerConfig or a parameter count in (0, {MAX_COUNT:g}], "
            f"got {model!r}"
        ) from None


def _dtype(name: str, value: object) -> float:
    return BYTES_PER_VALUE[validate.choice(name, value, BYTES_PER_VALUE)]


def weights_bytes(params: float, dtype: str) -> float:
    """Bytes to store ``params`` weights in ``dtype`` (a key of :data:`BYTES_PER_VALUE`).

    ``weights_bytes(7e9, "bf16")`` = 14e9 bytes (14 GB, 13.0 GiB).
    """
    return params_of("params", params) * _dtype("dtype", dtype)


@dataclass(frozen=True)
class ModelState(Report):
    """Memory of the model states during training (no activations)."""

    _title = "Model-state memory"

    params: float
    weights_bytes: float  # the weights the forward/backward pass uses (16-bit in mixed precision)
    gradients_bytes: float
    master_weights_bytes: float  # fp32 copy kept by mixed-precision optimizers
    optimizer_states_bytes: float  # Adam m and v, SGD momentum
    total_bytes: float
    bytes_per_param: float


def model_state_bytes(
    params: float, *, precision: str = "mixed", optimizer: str = "adam"
) -> ModelState:
    """Weights + gradients + master weights + optimizer states, per parameter and in total.

    ``precision``:
      - ``"mixed"`` (default): 16-bit weights and gradients, fp32 master weights. With Adam that is
        2 + 2 + (4 + 4 + 4) = 16 bytes/param, ZeRO's accounting (Rajbhandari et al. 2019, sec.
        3.1, K = 12). This is what DeepSpeed and Megatron keep.
      - ``"mixed_fp32_grads"``: as mixed, but gradients kept in fp32 (4 bytes): with Adam
        2 + 4 + 4 + 8 = **18 bytes/param**, the figure of the Hugging Face "Efficient training on a
        single GPU" guide, Bekman's "ML Engineering" and *AI Infrastructure* (whose breakdown, "2
        model + 2 gradients + 4 optimizer + overheads", does not add up to it). Use this option when
        you want 18; it is not the default because frameworks that reduce gradients in 16-bit need
        16.
      - ``"fp32"``: everything fp32, no separate master copy: Adam 4 + 4 + 8 = 16 bytes/param.

    ``optimizer``: ``"adam"``/``"adamw"`` (two fp32 moments, 8 B/param), ``"sgd"`` (none),
    ``"sgd_momentum"`` (one fp32 buffer, 4 B/param), ``"adam_8bit"`` (bitsandbytes' block-wise
    8-bit moments, Dettmers et al. 2022: 2 B/param).
    """
    n = params_of("params", params)
    w, g, master = _PRECISION_BYTES[validate.choice("precision", precision, PRECISIONS)]
    opt = _OPTIMIZER_BYTES[validate.choice("optimizer", optimizer, OPTIMIZERS)]
    per_param = w + g + master + opt
    return ModelState(
        params=n,
        weights_bytes=n * w,
        gradients_bytes=n * g,
        master_weights_bytes=n * master,
        optimizer_states_bytes=n * opt,
        total_bytes=n * per_param,
        bytes_per_param=float(per_param),
    )


def activation_bytes_per_layer(
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    *,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    bytes_per_value: int = 2,
) -> float:
    """Activation bytes one transformer layer keeps for the backward pass.

    Korthikanti et al. 2022, Table 2, with s = seq_len, b = batch, h = hidden, a = heads,
    t = tensor_parallel:

    ===========================================  ==============================
    no recomputation                              s*b*h*(34 + 5*a*s/h)     (t=1)
    tensor parallel                               s*b*h*(10 + 24/t + 5*a*s/(h*t))
    tensor + sequence parallel                    s*b*h*(34 + 5*a*s/h)/t
    selective recomputation (+ tensor parallel)   s*b*h*(10 + 24/t)
    selective + sequence parallel                 s*b*h*34/t
    full recomputation                            2*s*b*h   (only the layer's input)
    ===========================================  ==============================

    The ``5*a*s/h`` term is the attention scores, softmax and its dropout mask (quadratic in s);
    "selective" recomputes exactly those. FlashAttention never stores them, so with it the
    ``"selective"`` figure is the one to use.

    The table counts 16-bit activations (``bytes_per_value=2``) and 1-byte dropout masks: of the
    34 s*b*h, 32 are 16-bit values and 2 are masks (after the attention and the MLP); of the
    5 a*s^2*b, 4 are 16-bit (softmax input and output) and 1 is the mask. With
    ``bytes_per_value=4`` (fp32 training) every value doubles and the masks stay 1 byte:
    s*b*h*(66 + 9*a*s/h) without recomputation, 1.9x the 16-bit figure, not the same.
    """
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    h = validate.positive_int("hidden", hidden, maximum=10**6)
    a = validate.positive_int("heads", heads, maximum=h)
    t = validate.positive_int("tensor_parallel", tensor_parallel, maximum=a)
    if a % t:
        raise ValueError(f"tensor_parallel must divide heads ({a}), got {t}")
    sp = validate.choice("sequence_parallel", sequence_parallel, (True, False))
    mode = validate.choice("recompute", recompute, RECOMPUTE)
    k = validate.choice("bytes_per_value", bytes_per_value, (2, 4)) / 2  # 1: 16-bit, 2: fp32
    sbh = float(s) * b * h
    if mode == "full":
        return 2 * k * sbh
    attention_scores = (4 * k + 1) * a * s / h  # softmax in and out (16-bit), dropout mask (1 B)
    if mode == "selective":
        attention_scores = 0.0
    if sp:
        return sbh * (32 * k + 2 + attention_scores) / t
    return sbh * (8 * k + 2 + 24 * k / t + attention_scores / t)


def kv_cache_bytes(
    layers: int,
    kv_heads: int,
    head_dim: int,
    tokens: int,
    *,
    batch: int = 1,
    bytes_per_value: float = 2,
) -> float:
    """Bytes of the key/value cache: 2 (K and V) x layers x kv_heads x head_dim x tokens x batch
    x bytes_per_value.

    ``tokens`` is the context length per sequence (prompt + generated so far). Grouped-query
    attention caches ``kv_heads`` heads, not ``heads``. Check: OPT-13B (40 layers, hidden 5,120)
    needs 2 x 5,120 x 40 x 2 = 819,200 bytes ("800 KB") per token (Kwon et al. 2023, sec. 3).
    """
    n_layers = validate.positive_int("layers", layers, maximum=10_000)
    kvh = validate.positive_int("kv_heads", kv_heads, maximum=10**5)
    hd = validate.positive_int("head_dim", head_dim, maximum=10**5)
    n_tokens = validate.positive_int("tokens", tokens, minimum=0, maximum=MAX_SEQ_LEN)
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    bpv = validate.number("bytes_per_value", bytes_per_value, minimum=0, maximum=8, strict_min=True)
    return 2.0 * n_layers * kvh * hd * n_tokens * b * bpv


def attention_scores_bytes(
    batch: int, heads: int, seq_len: int, *, layers: int = 1, bytes_per_value: float = 2
) -> float:
    """Bytes of the attention score matrices ``batch x heads x seq_len x seq_len`` in ``layers``.

    Naive attention materialises ``softmax(Q K^T)`` for every head; FlashAttention-style kernels
    (``torch.nn.functional.scaled_dot_product_attention``) compute it tile by tile and never hold
    it. *Computational Resources for Machine Learning: From Silicon to Tensors* takes a batch of 32
    sequences of 2,048 tokens in fp32: 32 x 2048^2 x 4 = 512 MiB for one head of one layer (right),
    then "with 32 layers and multiple attention heads: several GB". With 32 heads and 32 layers it
    is 512 GiB. Training keeps more than the scores per layer (softmax output and dropout mask:
    Korthikanti et al. 2022's ``5as/h`` term).
    """
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    a = validate.positive_int("heads", heads, maximum=10**5)
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    n_layers = validate.positive_int("layers", layers, maximum=10_000)
    bpv = validate.number("bytes_per_value", bytes_per_value, minimum=0, maximum=8, strict_min=True)
    return float(b) * a * s * s * n_layers * bpv


@dataclass(frozen=True)
class InferenceMemory(Report):
    """Memory to serve a model: weights, KV cache and an overhead allowance."""

    _title = "Inference memory"

    params: float
    weights_bytes: float
    kv_cache_bytes: float
    overhead_bytes: float
    total_bytes: float


def inference_memory(
    model: TransformerConfig | float,
    *,
    dtype: str = "bf16",
    seq_len: int = 0,
    batch: int = 1,
    kv_dtype: str | None = None,
    overhead_fraction: float = 0.0,
) -> InferenceMemory:
    """Weights in ``dtype`` + KV cache for ``batch`` sequences of ``seq_len`` tokens + overhead.

    ``model`` is a :class:`TransformerConfig` (needed for the KV cache) or a parameter count (then
    ``seq_len`` must be 0). ``kv_dtype`` defaults to ``dtype`` when that is 16-bit or wider, else
    bf16 (weight-only quantisation keeps a 16-bit cache). ``overhead_fraction`` adds a share of the
    subtotal for the CUDA context, allocator fragmentation and temporary activations (*GPU
    Infrastructure & Computational Requirements* uses 0.2); it is 0 by default so the parts stay
    visible.
    """
    params, config = _params_or_config(model)
    weight_bytes_per_param = _dtype("dtype", dtype)
    tokens = validate.positive_int("seq_len", seq_len, minimum=0, maximum=MAX_SEQ_LEN)
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    if kv_dtype is None:
        kv_dtype = dtype if weight_bytes_per_param >= 2 else "bf16"
    kv_bpv = _dtype("kv_dtype", kv_dtype)
    overhead = validate.number("overhead_fraction", overhead_fraction, minimum=0, maximum=10)
    if config is None:
        if tokens:
            raise ValueError(
                f"seq_len must be 0 when model is a parameter count (got seq_len={seq_len}): "
                "sizing the KV cache needs a TransformerConfig"
            )
        kv = 0.0
    else:
        kv = kv_cache_bytes(
            config.layers,
            config.kv_heads,
            config.head_dim,
            tokens,
            batch=b,
            bytes_per_value=kv_bpv,
        )
    weights = params * weight_bytes_per_param
    extra = overhead * (weights + kv)
    return InferenceMemory(
        params=params,
        weights_bytes=weights,
        kv_cache_bytes=kv,
        overhead_bytes=extra,
        total_bytes=weights + kv + extra,
    )


@dataclass(frozen=True)
class TrainingMemory(Report):
    """Memory to train a model on one device: model states and activations."""

    _title = "Training memory (one device, no sharding)"

    params: float
    weights_bytes: float
    gradients_bytes: float
    master_weights_bytes: float
    optimizer_states_bytes: float
    activations_bytes: float  # all layers, Korthikanti et al. 2022
    logits_bytes: float  # fp32 logits kept for the loss: 4 * seq_len * batch * vocab
    total_bytes: float


def training_memory(
    model: TransformerConfig | float,
    *,
    batch: int = 1,
    seq_len: int | None = None,
    precision: str = "mixed",
    optimizer: str = "adam",
    recompute: str = "none",
) -> TrainingMemory:
    """Model states (:func:`model_state_bytes`) plus activations of one micro-batch.

    With a :class:`TransformerConfig` and a ``seq_len``, activations are ``layers`` x
    :func:`activation_bytes_per_layer` plus the fp32 logits the cross-entropy keeps
    (4*s*b*vocab bytes, also in Korthikanti et al. 2022's count); with ``precision="fp32"`` the
    activations are fp32 (``bytes_per_value=4``, 1.9x the 16-bit count). With ``seq_len=None`` (or a
    bare parameter count) only the model states are counted, and the activation rows read 0. Not
    counted: the CUDA context (~0.5-1 GB), allocator fragmentation and temporary buffers.
    """
    params, config = _params_or_config(model)
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    states = model_state_bytes(params, precision=precision, optimizer=optimizer)
    validate.choice("recompute", recompute, RECOMPUTE)
    activations = logits = 0.0
    if seq_len is not None:
        if config is None:
            raise ValueError(
                f"seq_len must be None when model is a parameter count (got {seq_len!r}): "
                "activations need a TransformerConfig"
            )
        s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
        per_layer = activation_bytes_per_layer(
            s,
            b,
            config.hidden,
            config.heads,
            recompute=recompute,
            bytes_per_value=4 if precision == "fp32" else 2,
        )
        activations = config.layers * per_layer
        logits = 4.0 * s * b * config.vocab if config.lm_head else 0.0
    return TrainingMemory(
        params=params,
        weights_bytes=states.weights_bytes,
        gradients_bytes=states.gradients_bytes,
        master_weights_bytes=states.master_weights_bytes,
        optimizer_states_bytes=states.optimizer_states_bytes,
        activations_bytes=activations,
        logits_bytes=logits,
        total_bytes=states.total_bytes + activations + logits,
    )


def gpus_needed(
    total_bytes: float, gpu: hardware.GPU | str, *, usable_fraction: float = USABLE_MEMORY_FRACTION
) -> int:
    """Fewest GPUs whose memory holds ``total_bytes``, using ``usable_fraction`` of each.

    ``gpu`` is a :class:`course.facts.hardware.GPU` or its key (``"a100-80gb-sxm"``);
    ``usable_fraction`` is in [0.01, 1]; the default is :data:`USABLE_MEMORY_FRACTION`
    (1.0 gives the datasheet ceiling). Assumes the memory can be split evenly (sharding).
    """
    need = validate.number("total_bytes", total_bytes, minimum=0, maximum=MAX_BYTES)
    card = hardware.gpu(gpu)
    usable = validate.number("usable_fraction", usable_fraction, minimum=0.01, maximum=1)
    return max(1, math.ceil(need / (card.memory_bytes * usable)))


# ---------------------------------------------------------------------------------------------
# One training step of the course's own transformer, tensor by tensor: what MemTracker measures.
# ---------------------------------------------------------------------------------------------

#: How a measured training step computes (see course.measure.step_memory.measure_training_step).
#: Devices whose autocast :func:`step_activation_bytes` models.
STEP_DEVICES = ("cpu", "cuda")
STEP_PRECISIONS = ("fp32", "bf16_autocast")


def _check_step_config(config: object) -> TransformerConfig:
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    llama_like = (
        config.norm == "rmsnorm"
        and config.positions == "rope"
        and config.gated_mlp
        and config.norm_placement == "pre"
        and config.causal
        and config.lm_head
        and not config.bias
    )
    if not llama_like:
        raise ValueError(
            "config must be a Llama-style decoder (RMSNorm, RoPE, gated MLP, pre-norm, no biases, "
            f"LM head) for the tensor-by-tensor count, got {config.name!r}; use training_memory"
        )
    return config


@dataclass(frozen=True)
class StepActivations(Report):
    """Bytes autograd keeps for the backward pass of ``course.measure.torchmodels``' transformer."""

    _title = "Activations kept for the backward pass (estimate, tensor by tensor)"

    attention_per_layer_bytes: float  # first norm, Q/K/V, softmax output, mask, RoPE, attn output
    mlp_per_layer_bytes: float  # second norm and the gated MLP's four s x b x f tensors
    weight_copies_per_layer_bytes: float  # autocast's bf16 weight copies (0 in fp32)
    layers_bytes: float  # all blocks; with checkpointing only their inputs
    head_bytes: float  # final norm, LM-head input, fp32 log-softmax output over the vocabulary
    head_weight_copy_bytes: float  # autocast's bf16 copy of the LM head (0 in fp32)
    total_bytes: float


def step_activation_bytes(
    config: TransformerConfig,
    *,
    batch: int,
    seq_len: int,
    precision: str = "fp32",
    checkpointing: bool = False,
    device: str = "cpu",
) -> StepActivations:
    """Count, tensor by tensor, the activations ``course.measure.torchmodels`` keeps for the
    backward pass.

    This is Korthikanti et al. 2022's method (sec. 4.1: list every tensor the backward pass needs)
    applied to the course's Llama-style implementation rather than to Megatron's GPT block, so it
    can be checked exactly against ``MemTracker`` (``course.measure.step_memory``). With s =
    seq_len, b = batch, h = hidden, f = ffn_hidden, a = heads, d = head_dim, V = vocab, one block
    keeps, in bytes:

    - ``"fp32"``: 40*s*b*h + 16*s*b*f + 4*a*b*s^2 + s^2 + 8*s*b + 8*s*d: two RMSNorms (input,
      normalised input, output: 3 x 4sbh each, and 1/rms: 4sb), Q, K, V after RoPE (K and V
      repeated to all a heads under grouped-query attention: 3 x 4sbh), the softmax output
      (4abs^2), the causal mask (s^2 bools), RoPE's cos and sin (2 x 4sd), the attention output
      (4sbh), and four s x b x f tensors of the gated MLP (gate, up, SiLU output, their product).
    - ``"bf16_autocast"`` (CPU autocast op lists): 34*s*b*h + 8*s*b*f + 2*a*b*s^2 + s^2 + 8*s*b +
      4*s*d, plus a bf16 copy of every matmul weight (2 bytes/param). The residual stream and the
      norms stay fp32 (16sbh), each of the five input projections keeps its own bf16 copy of its
      input (10sbh), Q, K, V and the attention output are bf16 (8sbh). Autocast does *not* halve
      activation memory.
    - ``device="cuda"`` with ``"bf16_autocast"``: CUDA's autocast runs softmax in fp32 (CPU's
      does not), so each block keeps the fp32 softmax output for the softmax backward (4abs^2)
      *and* the bf16 copy the attention-times-V matmul saves (2abs^2): 4abs^2 more than on the
      CPU. Checked against MemTracker on an H100 (``course/facts/data/reference``, memory_cuda.json:
      within 4 % of the measured peak, where the CPU accounting was 17-28 % under). fp32 is the
      same on both devices.

    The head keeps the final norm (8sbh + 4sb, plus 4sbh in fp32 or a 2sbh bf16 copy) and the
    fp32 log-softmax output (4sbV). With ``checkpointing`` each block keeps only its fp32 input
    (4sbh) and recomputes the rest in the backward pass; autocast's weight copies inside the
    blocks are then freed when the forward pass ends. Inputs and targets are not counted here
    (see :func:`training_step_memory`). Only Llama-style configs are modelled (ValueError else).
    """
    c = _check_step_config(config)
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    mode = validate.choice("precision", precision, STEP_PRECISIONS)
    ckpt = validate.choice("checkpointing", checkpointing, (True, False))
    kind = validate.choice("device", device, STEP_DEVICES)
    sb = float(s) * b
    sbh, sbf, scores = sb * c.hidden, sb * c.ffn_hidden, float(c.heads) * b * s * s
    x = 4.0 if mode == "fp32" else 2.0  # bytes per value of Q, K, V, scores, the MLP's tensors
    norm = 8 * sbh + 4 * sb  # fp32 input and normalised input, 1/rms
    if mode == "fp32":  # each norm's output, kept once for the projections that read it
        norm_out_attn = norm_out_mlp = norm_out_head = 4 * sbh
        copies = 0.0
    else:  # every projection keeps its own bf16 copy of its input
        norm_out_attn, norm_out_mlp, norm_out_head = 3 * 2 * sbh, 2 * 2 * sbh, 2 * sbh
        copies = 2.0 * matmul_params_per_layer(c)
    mask, rope = float(s) * s, 2 * x * s * c.head_dim
    softmax_fp32 = 4.0 * scores if kind == "cuda" and mode != "fp32" else 0.0
    attention = norm + norm_out_attn + 4 * x * sbh + x * scores + softmax_fp32 + mask + rope
    mlp = norm + norm_out_mlp + 4 * x * sbf
    head = norm + norm_out_head + 4 * sb * c.vocab
    head_copy = 0.0 if mode == "fp32" else 2.0 * c.vocab * c.hidden
    layers = c.layers * (4 * sbh if ckpt else attention + mlp + copies)
    return StepActivations(
        attention_per_layer_bytes=attention,
        mlp_per_layer_bytes=mlp,
        weight_copies_per_layer_bytes=copies,
        layers_bytes=layers,
        head_bytes=head,
        head_weight_copy_bytes=head_copy,
        total_bytes=layers + head + head_copy,
    )


@dataclass(frozen=True)
class StepMemory(Report):
    """Estimated peak of one training step, split like MemTracker splits its measurement."""

    _title = "Estimated peak of one training step"

    params: int
    parameters_bytes: float
    gradients_bytes: float  # those that exist at the peak
    optimizer_states_bytes: float  # AdamW's moments (and, in the optimizer step, its temporaries)
    activations_bytes: float  # those that exist at the peak
    temporaries_bytes: float  # gradients of activations held during the backward pass
    other_bytes: float  # inputs and targets (int64 token ids)
    total_bytes: float
    peak_phase: str


def _param_sizes(c: TransformerConfig) -> list[int]:
    """Parameter tensor sizes in ``course.measure.torchmodels``' registration order
    (Llama-style)."""
    h, q, kv = c.hidden, c.heads * c.head_dim, c.kv_heads * c.head_dim
    block = [
        h,
        h * q,
        h * kv,
        h * kv,
        q * h,
        h,
        h * c.ffn_hidden,
        h * c.ffn_hidden,
        c.ffn_hidden * h,
    ]
    head = [] if c.tied_embeddings else [c.vocab * h]
    return [c.vocab * h] + block * c.layers + [h] + head


def training_step_memory(
    config: TransformerConfig,
    *,
    batch: int,
    seq_len: int,
    precision: str = "fp32",
    checkpointing: bool = False,
    device: str = "cpu",
) -> StepMemory:
    """The peak memory of one AdamW training step of ``config``, as MemTracker would measure it.

    Parameters, their gradients and AdamW's two moments are fp32 in both precisions (autocast
    casts weights on the fly): 4 + 4 + 8 bytes/param, :func:`model_state_bytes` with
    ``precision="fp32"``. Activations are :func:`step_activation_bytes`. Memory changes as the
    step runs, so the estimate follows it through the phases where it can peak and reports the
    largest total:

    1. start of the backward pass: all activations, two fp32 s*b*V gradients of the
       cross-entropy (8sbV), no parameter gradients yet;
    2. in each block's backward (top block first; with checkpointing, just after the block is
       recomputed), activations of the blocks below, gradients of those above, the 4sbh gradient
       arriving from above, and either three s*b*f gradients of the gated MLP or two a*b*s^2
       gradients of the attention softmax;
    3. the optimizer step: all gradients plus AdamW's per-tensor temporaries (``foreach=False``:
       ``sqrt`` and a division for one parameter while the previous one's result is still
       referenced). MemTracker files those under optimizer states, and so does this estimate.

    With tied embeddings the LM head's gradient waits as a temporary until the embedding's arrives.
    The allocator's rounding (512 B on CUDA) and tensors under a kilobyte are not counted.
    ``device`` ("cpu" or "cuda") is where the step runs: under bf16 autocast the two keep different
    tensors (see :func:`step_activation_bytes`). MemTracker counts tensors only;
    ``torch.cuda.max_memory_allocated`` is higher by the cuBLAS/cuBLASLt workspaces and buffers that
    kernels allocate internally (on the H100 reference run: 64 MiB more for the demo model).
    Accounting after Korthikanti et al. 2022 sec. 4 (activations) and Rajbhandari et al. 2019 sec. 3
    (model states); checked against MemTracker in tests/measure/test_step_memory.py (CPU) and
    tests/measure/test_memory_cuda.py (the H100 reference run, and CUDA itself where present).
    """
    c = _check_step_config(config)
    acts = step_activation_bytes(
        c,
        batch=batch,
        seq_len=seq_len,
        precision=precision,
        checkpointing=checkpointing,
        device=device,
    )
    n = c.params
    states = model_state_bytes(n, precision="fp32", optimizer="adamw")
    tokens = float(batch) * seq_len
    x = 4.0 if precision == "fp32" else 2.0
    bf16 = precision != "fp32"
    h, f = c.hidden, c.ffn_hidden
    sbh, sbf, scores = tokens * h, tokens * f, float(c.heads) * batch * seq_len**2
    block_params = sum(_param_sizes(c)[1:10])
    mlp_params = h + 3 * h * f  # second norm and the MLP
    block = acts.attention_per_layer_bytes + acts.mlp_per_layer_bytes
    block += acts.weight_copies_per_layer_bytes
    kept_per_block = 4 * sbh if checkpointing else block
    tied_wait = 4.0 * c.vocab * h if c.tied_embeddings else 0.0
    head_grads = 4.0 * (h + (0 if c.tied_embeddings else c.vocab * h))
    o_proj = c.heads * c.head_dim * h
    sizes = _param_sizes(c)
    adam_temps = 4.0 * max(2 * b + a for a, b in zip([0, *sizes], sizes, strict=False))
    # (phase, gradients, activations, temporaries, optimizer temporaries)
    phases = [("start of backward", 0.0, acts.total_bytes, 8 * tokens * c.vocab, 0.0)]
    for k in range(c.layers, 0, -1):  # top block first
        grads = head_grads + 4.0 * block_params * (c.layers - k)
        kept = (k - 1) * kept_per_block + block
        # MLP: down projection done (weight gradient made, its input and weight copy freed)
        phases.append(
            (
                f"backward of block {k}'s MLP",
                grads + 4.0 * h * f,
                kept - x * sbf - (2.0 * h * f if bf16 else 0.0),
                4 * sbh + 3 * x * sbf + tied_wait,
                0.0,
            )
        )
        # attention softmax: MLP and output projection done, V's matmul done
        phases.append(
            (
                f"backward of block {k}'s attention",
                grads + 4.0 * (mlp_params + o_proj),
                kept
                - acts.mlp_per_layer_bytes
                - (2.0 * 3 * h * f + 2.0 * o_proj if bf16 else 0.0)
                - 2 * x * sbh,
                4 * sbh + x * sbh + 2 * x * scores + tied_wait,
                0.0,
            )
        )
    phases.append(("optimizer step", states.gradients_bytes, 0.0, 0.0, adam_temps))
    name, grads, activations, temps, opt_temps = max(phases, key=lambda p: sum(p[1:]))
    optimizer = states.optimizer_states_bytes + opt_temps
    inputs = 2 * 8 * tokens  # int64 inputs and targets
    return StepMemory(
        params=n,
        parameters_bytes=states.weights_bytes,
        gradients_bytes=grads,
        optimizer_states_bytes=optimizer,
        activations_bytes=activations,
        temporaries_bytes=temps,
        other_bytes=inputs,
        total_bytes=states.weights_bytes + optimizer + grads + activations + temps + inputs,
        peak_phase=name,
    )


__all__ = [
    "USABLE_MEMORY_FRACTION",
    "InferenceMemory",
    "STEP_DEVICES",
    "STEP_PRECISIONS",
    "StepActivations",
    "StepMemory",
    "ModelState",
    "TrainingMemory",
    "activation_bytes_per_layer",
    "attention_scores_bytes",
    "gpus_needed",
    "inference_memory",
    "kv_cache_bytes",
    "model_state_bytes",
    "params_of",
    "step_activation_bytes",
    "training_memory",
    "training_step_memory",
    "weights_bytes",
]
