"""Number formats as bits: what sign, exponent and mantissa bits imply for range and precision.

A binary floating-point format stores a sign bit ``s``, ``E`` exponent bits holding a biased
exponent ``e`` and ``M`` mantissa (fraction) bits holding ``f``. A *normal* number is
``(-1)**s * 2**(e - bias) * (1 + f / 2**M)``; when ``e == 0`` the number is *subnormal*,
``(-1)**s * 2**(1 - bias) * (f / 2**M)``, which fills the gap between zero and the smallest normal.
Everything in the tables below (largest value, smallest normal and subnormal, machine epsilon,
decimal digits, spacing at a value) is *derived* from ``E``, ``M`` and the format's rule for the top
exponent; ``tests/facts/test_dtypes.py`` checks each derived number against ``torch.finfo`` and
decodes every 8- and 16-bit pattern to compare with torch.

How the formats treat the top of the exponent range (the "encoding"):

- ``"ieee"``: IEEE 754 (fp64, fp32, fp16) and bf16, fp8 E5M2: the all-ones exponent is reserved for
  infinity (``f == 0``) and NaN (``f != 0``).
- ``"fn"`` ("finite"): OCP fp8 E4M3 (torch ``float8_e4m3fn``): no infinity; only the pattern with
  all exponent *and* mantissa bits set is NaN, so the top exponent still holds values (max 448).
- ``"fnuz"`` ("finite, no negative zero"; AMD MI300 / Graphcore fp8): no infinity, the one NaN is
  the negative-zero pattern ``0x80``, and the bias is one larger than IEEE's.
- ``"e8m0"``: OCP MX scale format, unsigned, exponent only: ``2**(e - 127)``, ``e = 255`` is NaN, no
  zero and no subnormals.
- ``"finite"``: every pattern is a number (fp4 E2M1, the element type of MXFP4 and NVFP4).

Sources: IEEE 754-2019; Micikevicius et al. 2022, "FP8 Formats for Deep Learning"
(arXiv:2209.05433); OCP "8-bit Floating Point Specification (OFP8)" rev 1.0 (2023) and "Microscaling
Formats (MX) Specification" v1.0 (2023); NVIDIA A100 whitepaper (2020) for TF32; Kalamkar et al.
2019, "A Study of BFLOAT16 for Deep Learning Training" (arXiv:1905.12322). Used by lesson 03 (data
types and precision); ``course.measure.precision`` does the torch side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from course.facts import validate

Encoding = Literal["ieee", "fn", "fnuz", "e8m0", "finite"]

SRC_IEEE = "IEEE 754-2019, Standard for Floating-Point Arithmetic"
SRC_BF16 = "Kalamkar et al. 2019, A Study of BFLOAT16 for Deep Learning Training, arXiv:1905.12322"
SRC_TF32 = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), section TF32"
SRC_FP8 = (
    "Micikevicius et al. 2022, FP8 Formats for Deep Learning, arXiv:2209.05433; "
    "OCP 8-bit Floating Point Specification (OFP8) rev 1.0 (2023)"
)
SRC_FNUZ = "Graphcore/AMD fp8 proposal (Noune et al. 2022, arXiv:2206.02915); LLVM Float8E4M3FNUZ"
SRC_MX = "OCP Microscaling Formats (MX) Specification v1.0 (2023)"


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format described by its bit fields; every range follows from them."""

    key: str
    name: str
    exponent_bits: int
    mantissa_bits: int  # stored fraction bits (the leading 1 of normal numbers is implicit)
    encoding: Encoding
    torch_dtype: str | None  # attribute of ``torch`` holding this format, if torch has one
    source: str
    storage_bits: int | None = None  # bits a value occupies in memory, if not ``bits`` (TF32: 32)
    notes: str = ""

    @property
    def sign_bits(self) -> int:
        return 0 if self.encoding == "e8m0" else 1

    @property
    def bits(self) -> int:
        """Bits that carry information: sign + exponent + mantissa."""
        return self.sign_bits + self.exponent_bits + self.mantissa_bits

    @property
    def bytes_stored(self) -> float:
        """Bytes one value takes in memory (TF32 is stored as fp32: 4)."""
        return (self.storage_bits or self.bits) / 8

    @property
    def bias(self) -> int:
        """Exponent bias: 2**(E-1) - 1, one more for the "fnuz" formats."""
        return 2 ** (self.exponent_bits - 1) - 1 + (1 if self.encoding == "fnuz" else 0)

    @property
    def has_inf(self) -> bool:
        return self.encoding == "ieee"

    @property
    def has_subnormals(self) -> bool:
        return self.encoding != "e8m0"

    @property
    def max(self) -> float:
        """Largest finite value."""
        top = 2**self.exponent_bits - 1  # all-ones biased exponent
        full = 2 - 2.0**-self.mantissa_bits  # 1.111...1 in binary
        if self.encoding == "ieee":
            return math.ldexp(full, top - 1 - self.bias)
        if self.encoding == "fn":  # top exponent usable except mantissa all ones (NaN)
            return math.ldexp(full - 2.0**-self.mantissa_bits, top - self.bias)
        if self.encoding == "e8m0":  # 0xFF is NaN
            return math.ldexp(1.0, top - 1 - self.bias)
        return math.ldexp(full, top - self.bias)  # fnuz, finite: every exponent holds numbers

    @property
    def smallest_normal(self) -> float:
        """Smallest positive normal value, 2**(1 - bias) (``torch.finfo(...).smallest_normal``)."""
        if self.encoding == "e8m0":  # no subnormals: pattern 0 is 2**-127
            return math.ldexp(1.0, -self.bias)
        return math.ldexp(1.0, 1 - self.bias)

    @property
    def smallest_subnormal(self) -> float:
        """Smallest positive value: 2**(1 - bias - M), the bit pattern ...0001."""
        if not self.has_subnormals:
            return self.smallest_normal
        return math.ldexp(1.0, 1 - self.bias - self.mantissa_bits)

    @property
    def eps(self) -> float:
        """Machine epsilon: the gap between 1 and the next larger value, 2**-M."""
        return math.ldexp(1.0, -self.mantissa_bits)

    @property
    def decimal_digits(self) -> float:
        """Significant decimal digits, log10(2**(M+1)): how many digits a value keeps."""
        return (self.mantissa_bits + 1) * math.log10(2)

    @property
    def dynamic_range_decades(self) -> float:
        """log10(max / smallest subnormal): how many powers of ten the format spans."""
        return math.log10(self.max / self.smallest_subnormal)

    def spacing(self, value: float) -> float:
        """Gap between ``value`` and the next representable number away from zero (one ulp).

        Half of it is the largest rounding error when storing ``value``; an addend smaller than half
        of it is lost entirely (``1 + eps/2 == 1``).
        """
        x = abs(validate.number("value", value))
        if self.mantissa_bits == 0 or not self.has_subnormals:
            exponent = math.floor(math.log2(max(x, self.smallest_normal)))
            return math.ldexp(1.0, exponent)
        if x < self.smallest_normal:
            return self.smallest_subnormal
        return math.ldexp(1.0, math.frexp(x)[1] - 1 - self.mantissa_bits)

    def fields(self, pattern: int) -> tuple[int, int, int]:
        """Split an integer bit pattern into (sign, biased exponent, mantissa) fields."""
        validate.positive_int("pattern", pattern, minimum=0, maximum=2**self.bits - 1)
        mantissa = pattern & (2**self.mantissa_bits - 1)
        exponent = (pattern >> self.mantissa_bits) & (2**self.exponent_bits - 1)
        sign = (pattern >> (self.mantissa_bits + self.exponent_bits)) & self.sign_bits
        return sign, exponent, mantissa

    def bit_string(self, pattern: int) -> str:
        """A bit pattern as 'sign exponent mantissa', e.g. fp16 1.0 -> '0 01111 0000000000'."""
        sign, exponent, mantissa = self.fields(pattern)
        parts = [f"{sign}"] if self.sign_bits else []
        parts.append(f"{exponent:0{self.exponent_bits}b}")
        if self.mantissa_bits:
            parts.append(f"{mantissa:0{self.mantissa_bits}b}")
        return " ".join(parts)

    def decode(self, pattern: int) -> float:
        """The value a bit pattern stands for, by the formula in the module docstring."""
        sign, exponent, mantissa = self.fields(pattern)
        top = 2**self.exponent_bits - 1
        m_all = 2**self.mantissa_bits - 1
        s = -1.0 if sign else 1.0
        if self.encoding == "ieee" and exponent == top:
            return s * math.inf if mantissa == 0 else math.nan
        if self.encoding == "fn" and exponent == top and mantissa == m_all:
            return math.nan
        if self.encoding == "fnuz" and sign and exponent == 0 and mantissa == 0:
            return math.nan
        if self.encoding == "e8m0":
            return math.nan if exponent == top else math.ldexp(1.0, exponent - self.bias)
        if exponent == 0:  # zero and subnormals
            return s * math.ldexp(mantissa, 1 - self.bias - self.mantissa_bits)
        return s * math.ldexp(
            2**self.mantissa_bits + mantissa, exponent - self.bias - self.mantissa_bits
        )


def _f(key, name, e, m, encoding, torch_dtype, source, **kw) -> FloatFormat:
    return FloatFormat(key, name, e, m, encoding, torch_dtype, source, **kw)


#: The float family, widest first, keyed by format (``fp8_e4m3``); :data:`BYTES_PER_VALUE` maps the
#: shorter names the calculators use (``fp8``) onto these formats.
FLOAT_FORMATS: MappingProxyType = MappingProxyType(
    {
        f.key: f
        for f in (
            _f("fp64", "float64 (IEEE binary64)", 11, 52, "ieee", "float64", SRC_IEEE),
            _f("fp32", "float32 (IEEE binary32)", 8, 23, "ieee", "float32", SRC_IEEE),
            _f(
                "tf32",
                "TensorFloat-32",
                8,
                10,
                "ieee",
                None,
                SRC_TF32,
                storage_bits=32,
                notes="a Tensor Core input mode: fp32 in memory, 19 bits used in the multiply",
            ),
            _f("bf16", "bfloat16 (brain float)", 8, 7, "ieee", "bfloat16", SRC_BF16),
            _f("fp16", "float16 (IEEE binary16)", 5, 10, "ieee", "float16", SRC_IEEE),
            _f("fp8_e4m3", "fp8 E4M3 (OCP, 'fn')", 4, 3, "fn", "float8_e4m3fn", SRC_FP8),
            _f("fp8_e5m2", "fp8 E5M2 (OCP)", 5, 2, "ieee", "float8_e5m2", SRC_FP8),
            _f("fp8_e4m3fnuz", "fp8 E4M3 'fnuz' (AMD)", 4, 3, "fnuz", "float8_e4m3fnuz", SRC_FNUZ),
            _f("fp8_e5m2fnuz", "fp8 E5M2 'fnuz' (AMD)", 5, 2, "fnuz", "float8_e5m2fnuz", SRC_FNUZ),
            _f(
                "e8m0",
                "E8M0 (MX block scale)",
                8,
                0,
                "e8m0",
                "float8_e8m0fnu",
                SRC_MX,
                notes="powers of two only; scales a block of 32 fp8/fp6/fp4 values",
            ),
            _f(
                "fp4_e2m1",
                "fp4 E2M1 (MXFP4/NVFP4)",
                2,
                1,
                "finite",
                None,
                SRC_MX,
                notes="15 values from -6 to 6; torch stores it packed (float4_e2m1fn_x2)",
            ),
        )
    }
)

#: The formats a lesson table shows (the AMD "fnuz" variants and the MX scale are extras).
MAIN_FLOATS = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2")


@dataclass(frozen=True)
class IntFormat:
    """A two's-complement (or unsigned) integer format."""

    key: str
    bits: int
    signed: bool
    torch_dtype: str | None
    notes: str = ""

    @property
    def min(self) -> int:
        return -(2 ** (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return 2 ** (self.bits - 1) - 1 if self.signed else 2**self.bits - 1

    @property
    def symmetric_max(self) -> int:
        """Largest level a *symmetric* quantiser uses: it gives up the lone negative extreme
        (-128 for int8, -8 for int4) so that +x and -x are both representable."""
        return self.max if not self.signed else 2 ** (self.bits - 1) - 1

    @property
    def levels(self) -> int:
        return 2**self.bits

    @property
    def bytes_stored(self) -> float:
        return self.bits / 8


INT_FORMATS: MappingProxyType = MappingProxyType(
    {
        i.key: i
        for i in (
            IntFormat("int32", 32, True, "int32", "accumulator of int8 matmuls"),
            IntFormat("int8", 8, True, "int8"),
            IntFormat("uint8", 8, False, "uint8", "holds two packed int4 values"),
            IntFormat("int4", 4, True, None, "no arithmetic dtype in torch: packed two per byte"),
        )
    }
)


#: The course's dtype names for weights, activations and caches (calculators, widgets and the
#: hardware registry's peaks use them), each with the format whose bits it stores: "fp8" is either
#: OCP fp8 format (both take one byte and run at one Tensor Core rate).
DTYPE_FORMATS: MappingProxyType = MappingProxyType(
    {
        "fp32": "fp32",
        "tf32": "tf32",
        "fp16": "fp16",
        "bf16": "bf16",
        "fp8": "fp8_e4m3",
        "int8": "int8",
        "int4": "int4",
    }
)


def _bytes_of(format_key: str) -> float:
    fmt = FLOAT_FORMATS.get(format_key) or INT_FORMATS[format_key]
    size = fmt.bytes_stored
    return int(size) if size == int(size) else size


#: Bytes one value takes in memory, by the course's dtype name, derived from the formats' bits: the
#: one bytes-per-value table of the course (fp32 4, tf32 4, fp16 2, bf16 2, fp8 1, int8 1, int4
#: 0.5).
BYTES_PER_VALUE: MappingProxyType = MappingProxyType(
    {name: _bytes_of(fmt) for name, fmt in DTYPE_FORMATS.items()}
)


def float_format(key: str) -> FloatFormat:
    """The float format named ``key`` (ValueError naming the known keys otherwise)."""
    return FLOAT_FORMATS[validate.choice("key", key, FLOAT_FORMATS)]


def int_format(key: str) -> IntFormat:
    """The integer format named ``key``."""
    return INT_FORMATS[validate.choice("key", key, INT_FORMATS)]


@dataclass(frozen=True)
class FloatFamilyRow:
    """One row of "The Float Family" table of *Computational Resources for ML*, as printed there
    (text kept verbatim)."""

    key: str
    range_as_written: str
    low_as_written: float  # the lower end of the reading's range, as a number
    precision_as_written: str


#: *Computational Resources for ML*, section "Data Types: Precision, Speed, and Memory Trade-offs",
#: table "The Float Family".
FLOAT_FAMILY_AS_WRITTEN = (
    FloatFamilyRow("fp32", "~1e-38 to ~3e38", 1e-38, "~7 digits"),
    FloatFamilyRow("fp16", "~6e-5 to 65504", 6e-5, "~3 digits"),
    FloatFamilyRow("bf16", "~1e-38 to ~3e38", 1e-38, "~2 digits"),
    FloatFamilyRow("fp8_e4m3", "~0.001 to 448", 0.001, "~1 digit"),
    FloatFamilyRow("fp8_e5m2", "~1e-7 to 57344", 1e-7, "~0.5 digit"),
)


def loss_scale_needed(smallest_gradient: float, key: str = "fp16") -> float:
    """Smallest power-of-two loss scale that lifts ``smallest_gradient`` to a *normal* value of the
    format (so it keeps all its mantissa bits): 2**ceil(log2(smallest_normal / gradient)), at least
    1.

    Source: Micikevicius et al. 2018, "Mixed Precision Training" (arXiv:1710.03740), section 3.2.
    """
    g = validate.positive("smallest_gradient", smallest_gradient)
    need = float_format(key).smallest_normal / g
    return 2.0 ** max(0, math.ceil(math.log2(need)))


def sum_stall(addend: float, key: str) -> float:
    """Where a running sum of ``addend`` stops growing in format ``key``: the first power of two P
    at which ``addend`` is no more than half the spacing, 2**ceil(log2(addend) + M + 1). From there
    on every ``acc + addend`` rounds back to ``acc`` (round to nearest, ties to even)."""
    a = validate.positive("addend", addend)
    fmt = float_format(key)
    return 2.0 ** math.ceil(math.log2(a) + fmt.mantissa_bits + 1)


__all__ = [
    "BYTES_PER_VALUE",
    "DTYPE_FORMATS",
    "FLOAT_FORMATS",
    "INT_FORMATS",
    "MAIN_FLOATS",
    "FLOAT_FAMILY_AS_WRITTEN",
    "FloatFormat",
    "IntFormat",
    "FloatFamilyRow",
    "float_format",
    "int_format",
    "loss_scale_needed",
    "sum_stall",
]
