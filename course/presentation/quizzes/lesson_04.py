"""Lesson 04 (how much memory a model needs): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "Mixed-precision Adam (ZeRO's accounting): how many bytes of model states per parameter?",
        answer=16,
        unit="bytes",
        rel_tol=0.01,
        explain="2 (bf16 weight) + 2 (bf16 gradient) + 4 (fp32 master) + 4 + 4 (Adam m, v in fp32).",
        hint="add the bytes of the bf16 weight and gradient, the fp32 master copy and Adam's two fp32 moments.",
    ),
    MultipleChoice(
        "At the peak of the measured training step (no checkpointing), which category was zero?",
        (
            "the optimizer states",
            "the activations saved",
            "the parameter gradients",
        ),
        answer=2,
        why=(
            "The measured step runs the optimizer once before it measures, so Adam's two moments "
            "already exist at the peak.",
            "The peak comes when the forward pass has saved all its activations: they are at their "
            "largest there, not zero.",
            "The peak is at the start of the backward pass: every activation is saved and no "
            "gradient has been computed yet.",
        ),
    ),
    Numeric(
        "KV cache of Llama-3-8B (32 layers, 8 K/V heads of 128) per token in bf16, in KiB?",
        answer=128,
        unit="KiB",
        rel_tol=0.01,
        explain="2 x 32 x 8 x 128 x 2 bytes = 131,072 bytes = 128 KiB (Llama-2-7B: 512 KiB).",
        hint="2 (K and V) x layers x K/V heads x head size x 2 bytes; a KiB is 1,024 bytes.",
    ),
    MultipleChoice(
        "Computational Resources for Machine Learning says one A100 80GB can serve "
        "LLaMA-70B in fp16. Can it?",
        (
            "No: the fp16 weights alone need about 138 GB",
            "Yes: 80 GiB holds the weights and a small cache",
            "Yes, as long as the batch holds one sequence",
        ),
        answer=0,
        why=(
            "68.98e9 parameters x 2 bytes = 138 GB = 128 GiB > 80 GiB, before any KV cache.",
            "69 billion parameters x 2 bytes is 138 GB (128 GiB): more than the 80 GiB before any "
            "KV cache.",
            "The batch size changes the KV cache, not the weights, and the weights alone do not fit.",
        ),
    ),
    MultipleChoice(
        "bf16 autocast on the course's model cut activation memory by:",
        (
            "exactly half of the fp32 figure",
            "less than half of the fp32 figure",
            "nothing: it stayed at the fp32 figure",
        ),
        answer=1,
        why=(
            "Half would need every saved tensor in bf16; the residual stream and the norms stay "
            "in fp32 under autocast.",
            "Autocast keeps the fp32 residual stream and norms, and adds bf16 copies of each "
            "projection's input and of the weights: the saving is real but under half.",
            "The saved inputs of the matrix multiplications are bf16 under autocast, so activation "
            "memory does fall.",
        ),
    ),
)
