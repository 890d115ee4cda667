"""Lesson 02 (memory hierarchy and bandwidth): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "Floor on the time per token of a 13B fp16 model at 900 GB/s, batch 1?",
        answer=28.9,
        rel_tol=0.03,
        unit="ms",
        explain="13e9 x 2 bytes = 26 GB; 26e9 / 900e9 = 28.9 ms (GPU Infrastructure & "
        "Computational Requirements says ~15 ms).",
        hint="every weight is read once per token: bytes of weights (2 per fp16 parameter) / bandwidth; answer in ms.",
    ),
    Numeric(
        "Ridge point of an H100 SXM in bf16 (989.4 TFLOP/s dense, 3.35 TB/s)?",
        answer=295,
        rel_tol=0.03,
        unit="FLOP/byte",
        explain="989.4e12 / 3.35e12 = 295: kernels below it are memory-bound.",
        hint="the ridge is peak FLOP/s / bytes per second, both in the same prefix (TFLOP/s over TB/s).",
    ),
    MultipleChoice(
        "A matrix-vector product in fp32 has an arithmetic intensity of about...",
        ("0.5 FLOP/byte", "5 FLOP/byte", "n/6 FLOP/byte"),
        answer=0,
        why=(
            "2 FLOPs (a multiply and an add) per 4-byte weight, and every weight is used once.",
            "That would need each weight to be used about ten times; in a matrix-vector product "
            "each is used once.",
            "n/6 is an n x n matrix-matrix product in fp32: 2n**3 FLOPs over 3 x 4n**2 bytes.",
        ),
    ),
    MultipleChoice(
        "Which change raises the tokens/s ceiling of batch-1 decoding on one GPU?",
        (
            "Twice the FP16 TFLOP/s, the same memory bandwidth",
            "A larger L1 cache in each SM, on the same GPU",
            "int8 weights instead of fp16, on the same GPU",
        ),
        answer=2,
        why=(
            "At batch 1 the GPU waits for weights, not for arithmetic: more FLOP/s leaves the "
            "bandwidth floor where it was.",
            "The weights (gigabytes) are read once per token and do not fit in any cache; L1 is "
            "hundreds of KiB per SM.",
            "Half the bytes per weight to read for each token: twice the ceiling.",
        ),
    ),
)
