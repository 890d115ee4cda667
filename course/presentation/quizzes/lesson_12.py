"""Lesson 12 (training at scale): the self-check quiz. Answers follow from
``course.calculators.reliability``, ``course.calculators.moe`` and ``course.calculators.context``."""

from __future__ import annotations

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "Each GPU of a job fails on average once every 50,000 hours, independently. The job stops "
        "when any GPU fails. How many hours between interruptions on 16,384 GPUs?",
        answer=50_000 / 16_384,
        unit="hours",
        rel_tol=0.02,
        explain="Failure rates add: 16,384 / 50,000 h, so one every 50,000 / 16,384 = 3.05 h. "
        "Llama 3 405B logged 419 unexpected interruptions in 54 days: one every 3.1 h.",
        hint="failure rates add: the job's MTBF is one GPU's MTBF divided by the number of GPUs.",
    ),
    MultipleChoice(
        "The checkpoint write time quadruples (a slower filesystem). What happens to Young's "
        "optimal interval between checkpoints?",
        (
            "It stays the same, since it depends only on the MTBF",
            "It doubles, since it grows as the square root",
            "It quadruples, in step with the write time",
            "It halves, since checkpoints now cost more",
        ),
        answer=1,
        explain="tau = sqrt(2 d M): four times d gives twice tau. Checkpointing less often "
        "balances the dearer writes against more work lost per failure.",
        why=(
            "The checkpoint cost d is inside the square root beside the MTBF.",
            "Right: the square root of 4 is 2, so twice as long.",
            "The interval grows more slowly than the cost: square root, not proportion.",
            "Dearer checkpoints mean checkpointing less often, not more.",
        ),
    ),
    MultipleChoice(
        "Which of these does a training checkpoint NOT need to hold for an exact restart?",
        (
            "The gradients of the last step",
            "The optimizer's moment estimates",
            "The data loader's position",
            "The random number generator states",
        ),
        answer=0,
        explain="A step starts from zero gradients; the weights, optimizer states, data position "
        "and RNG states decide everything after it.",
        why=(
            "Right: gradients are recomputed from the next batch.",
            "Without Adam's m and v the next updates differ from an uninterrupted run.",
            "Without it the resumed run sees different data than the uninterrupted one.",
            "Dropout and sampling draw from them; without them the run diverges.",
        ),
    ),
    MultipleChoice(
        "Mixtral 8x7B routes each token to 2 of 8 experts. Compared with a dense model of its "
        "46.7B parameters (its released configuration; the paper rounds to 47B), per token it "
        "needs:",
        (
            "The same memory and the same FLOPs",
            "Less memory and the same FLOPs",
            "The same memory and fewer FLOPs",
            "Less memory and fewer FLOPs",
        ),
        answer=2,
        explain="Every expert must be stored (46.7B), but each token passes through about 12.9B "
        "of them (13B in the paper): memory follows the total, FLOPs the active parameters.",
        why=(
            "Idle experts cost memory but no FLOPs for this token.",
            "All 8 experts are stored: memory is that of the full model.",
            "Right: memory follows the total, compute the active parameters.",
            "The experts a token does not use still sit in memory.",
        ),
    ),
    Numeric(
        "Ring attention splits a sequence over 8 ranks. By what factor does the largest block of "
        "attention scores a rank holds shrink, compared with one device holding all of them?",
        answer=64,
        unit="x",
        rel_tol=0.01,
        explain="Scores are (s/p) x (s/p) per block against s x s: p^2 = 64 times smaller.",
        hint="each rank holds a block of (s / p) x (s / p) scores instead of s x s.",
    ),
)
