"""A transparent weight quantiser: symmetric int8 / int4, per output channel or per group, in torch.

For a weight matrix ``w`` of shape (out_features, in_features) and ``b`` bits, symmetric
quantisation keeps one fp32 *scale* per row (per channel) or per block of ``group_size`` inputs (per
group):

    qmax  = 2**(b-1) - 1              (127 for int8, 7 for int4)
    scale = max|w| over the row or group / qmax
    q     = round(w / scale) clipped to [-qmax, qmax]      (integers, stored in b bits)
    w_hat = q * scale                                      (dequantised)

Rounding to the nearest integer moves each value by at most half a step, so ``|w - w_hat| <=
scale / 2`` entry by entry; ``tests/measure/test_quantize.py`` checks that bound. Int4 values are
packed two per byte (``pack_int4``). Storage = b/8 bytes per weight + the scales.

``Int8WeightOnlyLinear`` is a drop-in ``nn.Linear`` that stores int8 weights and one scale per
output channel, and multiplies with torch's fused CPU kernel ``aten._weight_int8pack_mm`` (the one
gpt-fast and torchao's CPU path use) when it is available, otherwise by dequantising on the fly.
``Int4WeightOnlyLinear`` keeps int4 weights packed two per byte with one scale per group and
dequantises them in plain torch every call (lesson 07 serves with it where torchao's int4 cannot
run). ``torchao_int8_weight_only`` applies the library version (torchao's ``Int8WeightOnlyConfig``)
where torchao is installed. The deprecated ``torch.ao.quantization`` is deliberately not used.

Sources: Jacob et al. 2018, "Quantization and Training of Neural Networks for Efficient
Integer-Arithmetic-Only Inference" (arXiv:1712.05877); Dettmers et al. 2022, "LLM.int8()"
(arXiv:2208.07339); Frantar et al. 2023, "GPTQ" (arXiv:2210.17323) for group-wise int4 (group 128).
Used by lesson 03 (data types and precision) and lesson 07 (optimisation).
"""

from __future__ import annotations

import copy
import io
import logging
import math
import warnings
from dataclasses import dataclass
from types import MappingProxyType

import torch

from course.facts import validate
from course.facts.report import Report, Table
from course.measure import timing

BITS = (8, 4)


def qmax(bits: int) -> int:
    """Largest level of a symmetric ``bits``-bit quantiser: 127 for int8, 7 for int4."""
    return 2 ** (validate.choice("bits", bits, BITS) - 1) - 1


@dataclass(frozen=True)
class QuantizedWeight:
    """Integer levels ``q`` (int8 tensor, same shape as the weight) and their scales.

    ``scale`` has shape (out_features, groups): one column per channel when ``group_size`` is None.
    """

    q: torch.Tensor
    scale: torch.Tensor
    bits: int
    group_size: int | None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.q.shape)

    def step(self) -> torch.Tensor:
        """The quantisation step of every entry, broadcast to the weight's shape."""
        out_f, in_f = self.q.shape
        group = self.group_size or in_f
        return self.scale.repeat_interleave(group, dim=1)[:, :in_f]

    def dequantize(self) -> torch.Tensor:
        """``q * scale`` in fp32: the weight the quantised model actually uses."""
        return self.q.float() * self.step()

    def storage_bytes(self, scale_bytes: int = 4) -> int:
        """Bytes to store the levels packed (b/8 bytes each) plus the scales (``scale_bytes`` each:
        4 for fp32, 2 for fp16/bf16 scales as int4 libraries keep them)."""
        validate.choice("scale_bytes", scale_bytes, (1, 2, 4))
        return math.ceil(self.q.numel() * self.bits / 8) + self.scale.numel() * scale_bytes


def quantize(w: torch.Tensor, bits: int = 8, *, group_size: int | None = None) -> QuantizedWeight:
    """Symmetric quantisation of a 2-D weight (out_features, in_features) to ``bits`` (8 or 4), with
    one scale per output channel, or per ``group_size`` consecutive inputs of a channel."""
    top = qmax(bits)
    if not isinstance(w, torch.Tensor) or w.dim() != 2 or not w.is_floating_point():
        raise ValueError(f"w must be a 2-D floating-point tensor, got {getattr(w, 'shape', w)!r}")
    out_f, in_f = w.shape
    group = in_f if group_size is None else validate.positive_int("group_size", group_size)
    if in_f % group:
        raise ValueError(f"group_size must divide in_features={in_f}, got {group_size}")
    blocks = w.detach().float().reshape(out_f, in_f // group, group)
    amax = blocks.abs().amax(dim=2)
    scale = torch.where(amax > 0, amax / top, torch.ones_like(amax))  # all-zero rows: any scale
    q = torch.round(blocks / scale.unsqueeze(2)).clamp(-top, top).to(torch.int8)
    return QuantizedWeight(q.reshape(out_f, in_f), scale, bits, group_size)


def pack_int4(q: torch.Tensor) -> torch.Tensor:
    """Pack int4 levels (an int8 tensor with values in [-8, 7] and an even last dimension) two per
    byte: element 2i in the low nibble, 2i+1 in the high nibble. Returns uint8, half the size."""
    if q.dtype != torch.int8 or q.shape[-1] % 2:
        raise ValueError(
            f"q must be an int8 tensor with an even last dimension, got {q.dtype} {tuple(q.shape)}"
        )
    if q.numel() and (q.min() < -8 or q.max() > 7):
        raise ValueError("q must hold int4 values in [-8, 7]")
    nibbles = (q.to(torch.int16) & 0xF).to(torch.uint8)
    return nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """Inverse of ``pack_int4``: uint8 bytes back to int8 levels in [-8, 7]."""
    if packed.dtype != torch.uint8:
        raise ValueError(f"packed must be a uint8 tensor, got {packed.dtype}")
    low = (packed & 0xF).to(torch.int8)
    high = (packed >> 4).to(torch.int8)
    both = torch.stack([low, high], dim=-1).reshape(*packed.shape[:-1], packed.shape[-1] * 2)
    return torch.where(both > 7, both - 16, both)


@dataclass(frozen=True)
class QuantError(Report):
    """How far ``w_hat`` is from ``w``."""

    _title = "Quantisation error"
    _formats = MappingProxyType({"max_abs": "general", "rms": "general", "relative_rms": "percent"})

    max_abs: float  # largest |w - w_hat|
    rms: float  # root-mean-square error
    relative_rms: float  # rms error / rms of w
    sqnr_db: float  # signal-to-quantisation-noise ratio, 10 log10(sum w^2 / sum (w - w_hat)^2)
    max_steps: float  # largest |w - w_hat| / scale: <= 0.5 for round-to-nearest

    def __str__(self) -> str:
        return (
            f"max |error| {self.max_abs:.3g}, rms {self.rms:.3g} ({self.relative_rms:.2%} of "
            f"rms w), SQNR {self.sqnr_db:.1f} dB, worst error {self.max_steps:.3f} steps"
        )


def quantization_error(w: torch.Tensor, qw: QuantizedWeight) -> QuantError:
    """Error metrics of ``qw`` against the original weight ``w``."""
    if tuple(w.shape) != qw.shape:
        raise ValueError(f"w has shape {tuple(w.shape)}, qw has {qw.shape}")
    w = w.detach().float()
    err = w - qw.dequantize()
    signal = float(w.pow(2).sum())
    noise = float(err.pow(2).sum())
    rms = math.sqrt(noise / w.numel())
    rms_w = math.sqrt(signal / w.numel())
    return QuantError(
        max_abs=float(err.abs().max()),
        rms=rms,
        relative_rms=rms / rms_w if rms_w else 0.0,
        sqnr_db=10 * math.log10(signal / noise) if noise else math.inf,
        max_steps=float((err.abs() / qw.step()).max()),
    )


#: (bits, group size) of the schemes lesson 03 compares: int8 and int4 with one scale per output
#: channel, int4 with one per 128 weights.
SCHEMES = ((8, None), (4, None), (4, 128))


def scheme_errors(
    weights: dict[str, torch.Tensor], schemes: tuple[tuple[int, int | None], ...] = SCHEMES
) -> Table:
    """:func:`quantization_error` of each weight (by name) under each (bits, group size) scheme."""
    rows = [
        {
            "weights": name,
            "scheme": f"int{bits} " + ("per channel" if group is None else f"group {group}"),
            **vars(quantization_error(w, quantize(w, bits, group_size=group))),
        }
        for name, w in weights.items()
        for bits, group in schemes
    ]
    return Table(rows, title="Quantisation error by scheme", formats=QuantError._formats)


# --- modules
# ----------------------------------------------------------------------------------------


def _fused_int8_available(device: torch.device) -> bool:
    return device.type in ("cpu", "cuda") and hasattr(torch.ops.aten, "_weight_int8pack_mm")


class Int8WeightOnlyLinear(torch.nn.Module):
    """``nn.Linear`` with int8 weights (one fp32 scale per output channel) and float activations.

    ``compute_dtype`` is the dtype of the matmul's activations: bf16 by default, the case torch's
    fused int8 kernel is fast for on CPU. Weight-only quantisation saves memory and memory traffic;
    it only saves time where loading the weights is the bottleneck (small batches, e.g. decoding).
    """

    def __init__(self, linear: torch.nn.Linear, compute_dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        qw = quantize(linear.weight, 8)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.compute_dtype = compute_dtype
        self.register_buffer("weight_int8", qw.q.contiguous())
        self.register_buffer("scale", qw.scale[:, 0].contiguous())
        bias = None if linear.bias is None else linear.bias.detach().clone()
        self.register_buffer("bias", bias)
        self.fused = _fused_int8_available(linear.weight.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, self.in_features).to(self.compute_dtype)
        if self.fused:
            try:
                y = torch.ops.aten._weight_int8pack_mm(
                    x2, self.weight_int8, self.scale.to(self.compute_dtype)
                )
            except (RuntimeError, NotImplementedError):
                self.fused = False  # this build or device has no kernel: dequantise instead
        if not self.fused:
            w = self.weight_int8.to(self.compute_dtype) * self.scale.to(self.compute_dtype)[:, None]
            y = x2 @ w.t()
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y.reshape(*shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weights"


class Int4WeightOnlyLinear(torch.nn.Module):
    """``nn.Linear`` with int4 weights packed two per byte and one fp32 scale per group of inputs.

    The forward pass unpacks and dequantises the whole weight in torch operations, then multiplies
    in ``compute_dtype``: transparent, and on the CPU slower than a fused int4 kernel would be
    (lesson 07 measures it where torchao's int4 path cannot run). Storage: half a byte per weight
    plus 4 bytes per group of ``group_size``.
    """

    def __init__(
        self,
        linear: torch.nn.Linear,
        group_size: int = 32,
        compute_dtype: torch.dtype = torch.bfloat16,
    ):
        super().__init__()
        qw = quantize(linear.weight, 4, group_size=group_size)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.group_size, self.compute_dtype = group_size, compute_dtype
        self.register_buffer("weight_int4", pack_int4(qw.q.contiguous()))
        self.register_buffer("scale", qw.scale.contiguous())
        bias = None if linear.bias is None else linear.bias.detach().clone()
        self.register_buffer("bias", bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        scale = self.scale.repeat_interleave(self.group_size, dim=1)
        w = (unpack_int4(self.weight_int4).float() * scale).to(self.compute_dtype)
        y = x.reshape(-1, self.in_features).to(self.compute_dtype) @ w.t()
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y.reshape(*shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"int4 weights, group {self.group_size}"
        )


def quantize_linears(
    model: torch.nn.Module,
    compute_dtype: torch.dtype = torch.bfloat16,
    *,
    bits: int = 8,
    group_size: int = 32,
) -> torch.nn.Module:
    """A copy of ``model`` with every ``nn.Linear`` replaced by an ``Int8WeightOnlyLinear``
    (``bits=8``) or an ``Int4WeightOnlyLinear`` with groups of ``group_size`` (``bits=4``)."""
    validate.choice("bits", bits, BITS)
    model = copy.deepcopy(model)
    for name, child in list(model.named_children()):
        if isinstance(child, torch.nn.Linear):
            if bits == 8:
                setattr(model, name, Int8WeightOnlyLinear(child, compute_dtype))
            else:
                setattr(model, name, Int4WeightOnlyLinear(child, group_size, compute_dtype))
        else:
            setattr(
                model,
                name,
                quantize_linears(child, compute_dtype, bits=bits, group_size=group_size),
            )
    return model


def serialized_bytes(model: torch.nn.Module) -> int:
    """Bytes of ``torch.save(model.state_dict())``: what the model takes on disk (and, for plain
    tensors, in memory), written to a buffer rather than a file."""
    buf = io.BytesIO()
    with torch.inference_mode(False):  # torchao's tensors refuse state_dict() in inference mode
        torch.save(model.state_dict(), buf)
    return buf.getbuffer().nbytes


@dataclass(frozen=True)
class VariantRecord:
    """One version of a model (fp32, bf16, int8...) measured on one input batch."""

    name: str
    batch: int
    serialized_bytes: int
    median_seconds: float  # forward pass, median over timed blocks
    iqr_seconds: float  # interquartile range: the noise
    relative_error: float  # ||y - y_ref|| / ||y_ref||, y_ref from the first variant


def benchmark_variants(
    variants: dict[str, torch.nn.Module],
    x: torch.Tensor,
    *,
    min_run_time: float = 0.3,
    threads: int | None = None,
) -> list[VariantRecord]:
    """Size, forward time (``torch.utils.benchmark`` with ``threads`` CPU threads, default torch's
    current setting) and output error of each model in ``variants`` on input ``x``; the first entry
    is the reference. Each model gets ``x`` cast to the dtype of its first floating-point tensor."""
    if not variants:
        raise ValueError("variants must name at least one model")
    validate.positive("min_run_time", min_run_time)
    threads = (
        torch.get_num_threads() if threads is None else validate.positive_int("threads", threads)
    )
    records, reference = [], None
    for name, model in variants.items():
        dtype = next(
            (t.dtype for t in model.state_dict().values() if t.is_floating_point()), x.dtype
        )
        inp = x.to(dtype)
        with torch.inference_mode():
            y = model(inp).float()
            t = timing.time_call(lambda: model(inp), threads=threads, min_run_time=min_run_time)  # noqa: B023
        reference = y if reference is None else reference
        error = float((y - reference).norm() / reference.norm())
        records.append(
            VariantRecord(
                name, x.shape[0], serialized_bytes(model), t.median_seconds, t.iqr_seconds, error
            )
        )
    return records


def torchao_available() -> bool:
    """Whether torchao (the PyTorch quantisation library) imports here."""
    try:
        _import_torchao()
    except ImportError:
        return False
    return True


class QuietTorchao:
    """Mutes torchao's import-time noise: a logged warning for each CUDA-only extension it cannot
    load on a CPU-only build, and torch's deprecation messages about its pytree registrations."""

    names = ("torchao", "torch.utils._pytree")

    def __enter__(self):
        self.levels = [logging.getLogger(n).level for n in self.names]
        for n in self.names:
            logging.getLogger(n).setLevel(logging.ERROR)
        self.warnings = warnings.catch_warnings()
        self.warnings.__enter__()
        warnings.simplefilter("ignore")
        return self

    def __exit__(self, *exc):
        self.warnings.__exit__(*exc)
        for n, level in zip(self.names, self.levels, strict=True):
            logging.getLogger(n).setLevel(level)
        return False


def _import_torchao():
    with QuietTorchao():
        import torchao.quantization as tq
    return tq


def torchao_int8_weight_only(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` quantised by torchao's ``Int8WeightOnlyConfig`` (int8 weights, one scale
    per output channel: the same scheme as ``quantize_linears``). ImportError if torchao is
    absent."""
    tq = _import_torchao()
    model = copy.deepcopy(model)
    with QuietTorchao():
        tq.quantize_(model, tq.Int8WeightOnlyConfig())
    return model


__all__ = [
    "BITS",
    "Int4WeightOnlyLinear",
    "Int8WeightOnlyLinear",
    "QuantError",
    "QuantizedWeight",
    "SCHEMES",
    "VariantRecord",
    "benchmark_variants",
    "pack_int4",
    "qmax",
    "quantization_error",
    "quantize",
    "quantize_linears",
    "scheme_errors",
    "serialized_bytes",
    "torchao_available",
    "torchao_int8_weight_only",
    "unpack_int4",
]
