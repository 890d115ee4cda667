"""Lesson 07 (optimisation strategies): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "A global batch of 256 sequences, micro-batches of 4 on 8 GPUs: how many micro-batches "
        "does each GPU accumulate per optimizer step?",
        answer=8,
        unit="micro-batches",
        rel_tol=0.0,
        explain="256 / (4 x 8) = 8 (course.calculators.finetune.accumulation_steps).",
        hint="divide the global batch by (micro-batch size x number of GPUs).",
    ),
    MultipleChoice(
        "Selective recomputation (Korthikanti et al. 2022) recomputes which activations?",
        (
            "the attention scores, softmax and dropout mask",
            "every activation of every transformer layer",
            "the MLP's four large intermediate tensors",
        ),
        answer=0,
        why=(
            "Right: the 5as/h term, quadratic in the sequence length, is large to store and cheap "
            "to recompute, so dropping it saves most of the memory for a few % of compute.",
            "That is full recomputation: only each layer's input is kept, and a whole extra "
            "forward pass (about a third more compute) is paid.",
            "The MLP tensors are linear in the sequence length and costly to recompute (big "
            "matmuls): selective recomputation keeps them.",
        ),
    ),
    Numeric(
        "Naive attention, batch 4, 16 heads, 2,048 tokens, bf16: how many MiB do one layer's "
        "score matrices take?",
        answer=512,
        unit="MiB",
        rel_tol=0.01,
        explain="4 x 16 x 2048^2 x 2 bytes = 536,870,912 B = 512 MiB per layer "
        "(course.calculators.memory.attention_scores_bytes); 12 layers: 6 GiB before softmax copies.",
        hint="one score per (sequence, head, query, key): batch x heads x tokens^2 x 2 bytes; a MiB is 2**20 bytes.",
    ),
    MultipleChoice(
        "Why did servers before vLLM waste 60-80 % of their KV-cache memory (Kwon et al. 2023)?",
        (
            "they stored keys and values in fp32, not in fp16",
            "they kept a copy of the cache for every attention head",
            "they reserved each request's maximum length up front",
        ),
        answer=2,
        why=(
            "They used fp16 caches; precision halves or doubles the cache, it does not leave "
            "reserved memory unused.",
            "Each head's keys and values are needed once; the waste was reserved-but-unused "
            "space, not duplicated heads.",
            "Right: an answer's length is unknown in advance, so each request got a contiguous "
            "slab for the longest it might become; most of it stayed empty.",
        ),
    ),
    MultipleChoice(
        "torch.compile made a tiny step faster per call. When does it still not pay?",
        (
            "when the model is trained with an AdamW optimizer",
            "when the job makes fewer calls than compiling costs",
            "when the inputs are stored in fp32 rather than bf16",
        ),
        answer=1,
        why=(
            "Compiling a training step with AdamW works; the optimizer is not what decides "
            "whether compile pays.",
            "Right: compile time is paid once; saved time per call x calls must exceed it "
            "(the lesson prints that number of calls when compiling was faster).",
            "fp32 inputs compile fine; fusion helps whatever the dtype when overhead dominates.",
        ),
    ),
)
