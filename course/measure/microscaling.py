"""Blackwell's low-precision formats emulated in plain torch on any device: FP8 (E4M3, E5M2) with a
per-tensor scale, OCP microscaling MXFP8 / MXFP4 (blocks of 32 values sharing a power-of-two E8M0
scale) and NVIDIA's NVFP4 (blocks of 16 E2M1 values with an FP8 E4M3 scale, under one fp32 scale per
tensor), and the quantisation error of each against the block size. Lesson 03 uses it.

Sources: OCP Microscaling Formats (MX) Specification v1.0 (2023), sec. 5-6 (block of 32, E8M0 shared
scale = 2^(floor(log2(amax)) - emax of the element format), elements E4M3, E5M2, E2M1); Micikevicius
et al. 2022, "FP8 Formats for Deep Learning" (E4M3 max 448, E5M2 max 57,344); NVIDIA, "Introducing
NVFP4 for Efficient and Accurate Low-Precision Inference" (technical blog, June 2025: 16-value
blocks, E4M3 block scale, a second-level fp32 per-tensor scale). Emulation: values are rounded to
the format's grid and kept in fp32, so the *error* is the format's, the *speed* is not (real kernels
need the hardware).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from course.facts import validate
from course.facts.report import Table

#: Largest finite value and exponent of the largest binade, per element format.
ELEMENT_MAX = {"e4m3": 448.0, "e5m2": 57344.0, "e2m1": 6.0}
ELEMENT_EMAX = {"e4m3": 8, "e5m2": 15, "e2m1": 2}
#: The eight non-negative E2M1 values (1 sign, 2 exponent, 1 mantissa bits; OCP MX spec, Table 5).
E2M1_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
#: Named formats: element format, block size (None = one scale per tensor), kind of scale.
FORMATS = {
    "fp8-e4m3": ("e4m3", None, "fp32"),
    "fp8-e5m2": ("e5m2", None, "fp32"),
    "mxfp8": ("e4m3", 32, "e8m0"),
    "mxfp4": ("e2m1", 32, "e8m0"),
    "nvfp4": ("e2m1", 16, "e4m3"),
}
#: Bits per value including the shared scales (8-bit scale per block; NVFP4's fp32 per tensor
#: ignored).
BITS_PER_VALUE = {
    "fp8-e4m3": 8,
    "fp8-e5m2": 8,
    "mxfp8": 8 + 8 / 32,
    "mxfp4": 4 + 8 / 32,
    "nvfp4": 4 + 8 / 16,
}


def round_to_element(x: torch.Tensor, element: str) -> torch.Tensor:
    """``x`` (already scaled into range) rounded to the nearest value of ``element``, saturating."""
    element = validate.choice("element", element, tuple(ELEMENT_MAX))
    limit = ELEMENT_MAX[element]
    x = x.float().clamp(-limit, limit)
    if element == "e4m3":
        return x.to(torch.float8_e4m3fn).float()
    if element == "e5m2":
        return x.to(torch.float8_e5m2).float()
    grid = torch.tensor(E2M1_GRID, device=x.device)
    nearest = (x.abs().unsqueeze(-1) - grid).abs().argmin(dim=-1)
    return torch.sign(x) * grid[nearest]


def _blocks(x: torch.Tensor, block: int | None) -> torch.Tensor:
    flat = x.float().reshape(-1)
    if block is None:
        return flat.reshape(1, -1)
    if flat.numel() % block:
        raise ValueError(f"the tensor's {flat.numel():,} values must divide into blocks of {block}")
    return flat.reshape(-1, block)


def quantize(x: torch.Tensor, element: str, block: int | None, scale: str) -> torch.Tensor:
    """Emulated quantise-dequantise of ``x``: one scale per ``block`` values (None: per tensor).

    ``scale``: ``"fp32"`` (amax / element max, exact), ``"e8m0"`` (a power of two, OCP MX: 2^(floor(
    log2 amax) - emax); values above the element's max saturate) or ``"e4m3"`` (NVFP4: amax / 6
    rounded to FP8 E4M3, under a per-tensor fp32 scale that keeps the block scales within E4M3's
    range).
    """
    scale = validate.choice("scale", scale, ("fp32", "e8m0", "e4m3"))
    if block is not None:
        block = validate.positive_int("block", block, maximum=2**20)
    blocks = _blocks(x, block)
    amax = blocks.abs().amax(dim=1, keepdim=True).clamp_min(torch.finfo(torch.float32).tiny)
    top = ELEMENT_MAX[element]
    if scale == "fp32":
        s = amax / top
    elif scale == "e8m0":
        s = torch.exp2(torch.floor(torch.log2(amax)) - ELEMENT_EMAX[element])
    else:
        tensor_scale = amax.max() / (top * ELEMENT_MAX["e4m3"])
        s = round_to_element(amax / top / tensor_scale, "e4m3").clamp_min(2.0**-9) * tensor_scale
    return (round_to_element(blocks / s, element) * s).reshape(x.shape)


def sqnr_db(x: torch.Tensor, approx: torch.Tensor) -> float:
    """Signal-to-quantisation-noise ratio in dB: 10 log10(sum x^2 / sum (x - approx)^2)."""
    noise = (x.float() - approx.float()).pow(2).sum().item()
    signal = x.float().pow(2).sum().item()
    return math.inf if noise == 0 else 10 * math.log10(signal / noise)


@dataclass(frozen=True)
class FormatError:
    """Quantisation error of one format at one block size on one tensor."""

    format: str
    element: str
    block: int | None  # values per scale (None: one per tensor)
    scale: str
    bits_per_value: float
    sqnr_db: float


def format_errors(x: torch.Tensor, blocks: tuple[int, ...] = (8, 16, 32, 64, 128, 1024)) -> Table:
    """Each named format on ``x``, then E2M1 and E4M3 elements with power-of-two scales at each
    block size (and per tensor): the error against the block size that the formats' choices
    trade."""
    rows = []
    for name, (element, block, scale) in FORMATS.items():
        rows.append(
            FormatError(
                name,
                element,
                block,
                scale,
                BITS_PER_VALUE[name],
                sqnr_db(x, quantize(x, element, block, scale)),
            )
        )
    for element in ("e2m1", "e4m3"):
        bits = 4 if element == "e2m1" else 8
        for block in (*blocks, None):
            q = quantize(x, element, block, "e8m0")
            per_value = bits + (8 / block if block else 0.0)
            rows.append(
                FormatError(
                    f"{element} / pow-2 scale", element, block, "e8m0", per_value, sqnr_db(x, q)
                )
            )
    return Table(rows, title="Quantisation error by format and block size (SQNR: higher is better)")


__all__ = [
    "BITS_PER_VALUE",
    "E2M1_GRID",
    "FORMATS",
    "FormatError",
    "format_errors",
    "quantize",
    "round_to_element",
    "sqnr_db",
]
