"""Lesson 05's self-check: FLOPs, utilisation, time, energy of a workload.

Numeric answers are computed with the course's calculators (``course.calculators.compute``, ``course.calculators.energy``)
from the inputs the question states, so a changed formula changes the answer.
"""

from __future__ import annotations

from course.calculators import compute, energy
from course.facts import hardware
from course.facts.units import DAY, KWH
from course.presentation.quiz import MultipleChoice, Numeric

_A100_BF16 = hardware.gpu("a100-80gb-sxm").peak_flop_per_s("bf16")

QUESTIONS = (
    MultipleChoice(
        "Training a transformer costs about 6 FLOPs per parameter per token. Where does the 6 "
        "come from?",
        (
            "2 in the forward pass, 4 in the backward pass (activation and weight gradients)",
            "2 each for the forward pass, the backward pass and the optimizer's update",
            "2 forward, 2 backward, and 2 for recomputing the activations",
            "6 bytes per parameter of mixed-precision weights and gradients",
        ),
        0,
        "Each weight does one multiply-add (2 FLOPs) per token forward; backward needs two: one "
        "for the input's gradient, one for the weight's. The optimizer runs once per step, not "
        "per token.",
        why=(
            "Right: backward is two matmuls per forward matmul (dX and dW), 4N per token.",
            "This is the source document's wording; the optimizer touches each weight once per "
            "step, a few FLOPs per parameter, not per token: negligible.",
            "Recomputation adds a second forward (2N) on top of the 6N: 8N per token in all.",
            "Bytes are memory, not work: FLOPs count arithmetic operations.",
        ),
    ),
    Numeric(
        "How many days does it take to train a 7e9-parameter model on 2e12 tokens on 1,024 A100 "
        "GPUs (312 TFLOP/s bf16 dense) at 40 % MFU?",
        compute.training_seconds(7e9, 2e12, 1024, _A100_BF16, mfu=0.4) / DAY,
        "6 x 7e9 x 2e12 = 8.4e22 FLOPs; 1,024 x 312e12 x 0.4 = 1.28e17 FLOP/s; 6.6e5 s = 7.6 "
        "days (Llama 2 7B used 184,320 A100 GPU-hours: 7.5 days on 1,024).",
        unit="days",
        hint="days = 6 x N x D / (GPUs x peak x MFU) / 86,400 s.",
    ),
    MultipleChoice(
        "Generating text one token at a time at batch 1 with a 7B model on an H100: what "
        "limits the speed?",
        (
            "Compute: each token needs 2 x 7e9 FLOPs of Tensor Core work",
            "The PCIe link, which carries the weights to the GPU each token",
            "Memory bandwidth: every weight is read once per token for 2 FLOPs",
            "The KV cache, which must be recomputed for every new token",
        ),
        2,
        "13.5 GB of bf16 weights / 3.35 TB/s = 4 ms per token, against 14 GFLOP / 989 TFLOP/s "
        "= 14 us: memory-bound by ~300x. The reference H100 measured 6.4 ms.",
        why=(
            "14 GFLOP take 14 us at the bf16 peak; reading the weights takes 4 ms.",
            "The weights stay in the GPU's HBM; PCIe is used to load them once.",
            "Right: intensity ~1 FLOP per byte, far below the H100's ridge of ~295.",
            "The KV cache is kept, not recomputed: that is what it is for.",
        ),
    ),
    Numeric(
        "A compute budget of 1e24 FLOPs: how many parameters (in billions) are Chinchilla-optimal "
        "at 20 tokens per parameter?",
        compute.chinchilla_optimal(1e24)[0] / 1e9,
        "C = 6 N D with D = 20 N, so N = sqrt(1e24 / 120) = 9.1e10: about 91B parameters on "
        "1.8T tokens.",
        unit="billion parameters",
        hint="with D = 20 N, C = 6 N D = 120 N^2: take the square root of C / 120, then give billions.",
    ),
    MultipleChoice(
        "PaLM reports 46.2 % MFU and 57.8 % HFU for the same run. What makes HFU the larger?",
        (
            "HFU also counts the optimizer's FLOPs, which MFU leaves out as overhead",
            "HFU also counts the forward FLOPs recomputed to save activation memory",
            "HFU divides by the dense peak while MFU divides by the sparse peak",
            "HFU counts attention FLOPs, which MFU leaves out as negligible",
        ),
        1,
        "Model FLOPs are the work the model needs (6N + attention per token); hardware FLOPs "
        "add what the chips also executed, the rematerialised forward pass.",
        why=(
            "Neither counts the optimizer: its FLOPs are per step and tiny.",
            "Right: recomputation is executed work but not progress; MFU leaves it out.",
            "Both use the same peak; a sparse peak would make the figure smaller, not larger.",
            "PaLM's MFU includes the attention FLOPs (appendix B).",
        ),
    ),
    Numeric(
        "1,000 GPU-hours of H100s at their 700 W cap, in a datacenter with a PUE of 1.2: how "
        "many kWh?",
        energy.gpu_hours_energy_joules(1000, 700, pue=1.2) / KWH,
        "1,000 h x 0.7 kW x 1.2 = 840 kWh.",
        unit="kWh",
        hint="kWh = GPU-hours x kW per GPU x PUE (700 W = 0.7 kW).",
    ),
)
