"""Lesson 03 (data types and precision): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "What is the largest finite fp16 value? (5 exponent bits, 10 mantissa bits, IEEE rules)",
        answer=65504,
        rel_tol=0.0,
        explain="2**15 x (2 - 2**-10) = 65,504; the all-ones exponent is kept for inf/NaN.",
        hint="the all-ones exponent is reserved, so the top exponent is 30 - 15; set every mantissa bit.",
    ),
    MultipleChoice(
        "What is the smallest positive value of fp8 E5M2?",
        ("2**-23, about 1.2e-7", "2**-16, about 1.5e-5", "2**-14, about 6.1e-5"),
        answer=1,
        why=(
            "2**-23 is the gap between 1 and the next fp32 number. Computational Resources for "
            "Machine Learning gives about 1e-7 for E5M2; E5M2 would store 1e-7 as zero.",
            "The bit pattern 0...01: a subnormal, 2**(1 - 15) x 2**-2 = 2**-16.",
            "2**-14 is E5M2's smallest normal value; subnormals go four times lower.",
        ),
    ),
    MultipleChoice(
        "Why does bf16 training usually need no loss scaling?",
        (
            "It has as many exponent bits as fp32 has",
            "It has more mantissa bits than fp16 has",
            "Autocast rescales its gradients for it",
        ),
        answer=0,
        why=(
            "Range comes from exponent bits: with fp32's 8, small gradients stay representable "
            "where fp16 (5) would flush them to zero.",
            "bf16 has 7 mantissa bits, fp16 has 10: fewer, not more. Precision is not the problem "
            "loss scaling solves.",
            "Autocast only picks dtypes per operation; scaling is GradScaler's job, and bf16 does "
            "not need it.",
        ),
    ),
    Numeric(
        "Bytes per parameter of int4 weights with one fp16 scale per group of 128 weights?",
        answer=0.515625,
        unit="bytes",
        rel_tol=0.01,
        explain="0.5 for the level + 2/128 for the scale = 0.516.",
        hint="half a byte per level, plus the scale's 2 bytes shared by the 128 weights of its group.",
    ),
    MultipleChoice(
        "When does weight-only int8 quantisation make a model faster?",
        (
            "Always, since int8 arithmetic is 4x faster",
            "Only in training, where the gradients are big",
            "When reading weights dominates, as in decoding",
        ),
        answer=2,
        why=(
            "Weight-only int8 converts the weights back before multiplying: the arithmetic is not "
            "int8 at all.",
            "Weight-only quantisation is an inference technique; training needs high-precision "
            "weights to accumulate small updates.",
            "Only the bytes moved shrink, so it helps where reading the weights is the bottleneck, "
            "e.g. batch-1 decoding.",
        ),
    ),
)
