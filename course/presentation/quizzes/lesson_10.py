"""Lesson 10: the ten practice questions of *AI Infrastructure*, one self-check each.

Question ``i`` is the attempt box of the lesson's section ``i`` (``show_question("10", i)``); the
worked answer follows it in the notebook. Every number in a question or an answer is computed here
from ``course.facts.hardware`` and the calculators (never typed), so a registry correction moves both.
"""

from __future__ import annotations

import math

from course.calculators import communication, energy, facility, memory
from course.facts import hardware
from course.facts.units import GB
from course.presentation.quiz import MultipleChoice, Numeric, Question

_A100 = hardware.GPUS["a100-80gb-sxm"]
_TC_RATIO = _A100.peak_flop_per_s("fp16") / _A100.peak_flop_per_s("fp32")
_STATES_7B = memory.model_state_bytes(7e9, precision="mixed", optimizer="adam")
_GRADS_7B = memory.weights_bytes(7e9, "bf16")
_NVLINK4 = hardware.INTERCONNECTS["nvlink4"]
_ALLREDUCE_MS = (
    communication.ring_allreduce_seconds(_GRADS_7B, 8, _NVLINK4.bandwidth_bytes_per_s) * 1e3
)
_C2C, _PCIE5 = hardware.INTERCONNECTS["nvlink-c2c"], hardware.INTERCONNECTS["pcie5"]
_H100 = hardware.GPUS["h100-sxm"]
_STATES_175B = memory.model_state_bytes(175e9, precision="mixed", optimizer="adam")
_GPUS_175B = math.ceil(_STATES_175B.total_bytes / _H100.memory_bytes)
_DGX = hardware.SYSTEMS["dgx-h100"]
_DGX_POWER_USD = energy.annual_electricity_usd(_DGX.max_power_watts, 0.10)
_POD_4 = facility.pod_annual_energy("dgx-h100", usd_per_kwh=0.10, gpus=32)

_WRITTEN = (  # each multiple choice written with its right option first; placed below
    MultipleChoice(
        question=(
            "A training step is mostly large matrix multiplications. Why does a GPU run it many "
            "times faster than a server CPU?"
        ),
        options=(
            "Thousands of simple cores and Tensor Cores, fed by TB/s of HBM",
            "A higher clock than a CPU, so each instruction finishes sooner",
            "Larger caches per core, so it goes to memory less often",
            "Better branch prediction that keeps every pipeline busy",
        ),
        answer=0,
        why=(
            "Right: a GPU spends its transistors on many parallel arithmetic units (CUDA cores, "
            "Tensor Cores) and on memory bandwidth, which is what a big matmul needs.",
            "GPU clocks (about 1.4-2 GHz) are lower than a server CPU's (3+ GHz); the GPU wins "
            "by doing far more operations per clock, not by clocking faster.",
            "It is the other way round: a CPU core has far more cache per core; a GPU hides "
            "memory latency by switching between thousands of threads instead.",
            "GPUs have little branch prediction: threads of a warp run in lock-step (SIMT), and "
            "branchy code is exactly where a CPU wins.",
        ),
    ),
    Numeric(
        question=(
            f"An {_A100.name} peaks at {_A100.peak_flop_per_s('fp16') / 1e12:g} TFLOP/s in dense "
            f"FP16 on its Tensor Cores and at {_A100.peak_flop_per_s('fp32') / 1e12:g} TFLOP/s in "
            "FP32 on its CUDA cores. How many times higher is the Tensor Core peak?"
        ),
        answer=_TC_RATIO,
        unit="x",
        explain=(
            f"{_A100.peak_flop_per_s('fp16') / 1e12:g} / {_A100.peak_flop_per_s('fp32') / 1e12:g} = "
            f"{_TC_RATIO:.1f}x: a Tensor Core does a whole small matrix multiply-accumulate per "
            "instruction where a CUDA core does one fused multiply-add."
        ),
        hint="divide the two peaks (both dense, both in TFLOP/s).",
    ),
    Numeric(
        question=(
            "Train a 7B-parameter model with Adam in 'FP16', read as mixed precision (16-bit "
            "weights and gradients, fp32 master weights and Adam moments: ZeRO's accounting). How "
            "many GB (1e9 bytes) do the model states take, before activations?"
        ),
        answer=_STATES_7B.total_bytes / GB,
        unit="GB",
        explain=(
            f"{_STATES_7B.bytes_per_param:g} bytes per parameter (2 weights + 2 gradients + 4 "
            f"master + 4 + 4 Adam moments) x 7e9 = {_STATES_7B.total_bytes / GB:,.0f} GB, "
            "before activations."
        ),
        hint=(
            "count bytes per parameter: 16-bit weights and gradients, plus three fp32 copies "
            "(master weights, Adam's m and v); then multiply by 7e9."
        ),
    ),
    MultipleChoice(
        question="When is an A100 80GB still the sensible choice over an H100 SXM?",
        options=(
            "When the job is small or memory-bound and A100 hours cost far less",
            "When the job trains in FP8, which the A100 runs at twice the rate",
            "When the model needs more than 80 GB of memory on a single GPU",
            "When the job needs the fastest NVLink between the GPUs of a server",
        ),
        answer=0,
        why=(
            "Right: the H100 wins per hour on large compute-bound training; where the work is "
            "small, memory-bound or idle part of the time, the cheaper A100 hour can win per job.",
            "The A100 has no FP8 Tensor Cores at all: FP8 is new with Hopper (H100).",
            "Both are 80 GiB parts; neither holds more than 80 GiB (the H200 and GH200 do).",
            f"The A100's NVLink 3 carries {_A100.nvlink_bandwidth_bytes_per_s / 1e9:,.0f} GB/s, the H100's "
            f"NVLink 4 {_H100.nvlink_bandwidth_bytes_per_s / 1e9:,.0f} GB/s: the H100's is faster.",
        ),
    ),
    MultipleChoice(
        question="What is Multi-Instance GPU (MIG) for?",
        options=(
            "Splitting one GPU into isolated instances for several small jobs",
            "Joining several GPUs into one large GPU with pooled memory",
            "Moving a running job from one GPU to another without stopping it",
            "Taking turns: each job gets all of the SMs for a slice of time",
        ),
        answer=0,
        why=(
            "Right: each MIG instance has its own SMs, memory slices and L2 share, so jobs cannot "
            "slow each other down or read each other's memory: inference, notebooks, CI, tenants.",
            "That is NVLink and NVSwitch (and software such as tensor parallelism); MIG goes the "
            "other way, cutting one GPU into parts.",
            "MIG does not migrate jobs; an instance's layout is fixed until an administrator "
            "changes it, with no job running on the GPU.",
            "That is time-slicing, the default sharing: jobs get turns but no isolation of memory "
            "or bandwidth; MIG instances run at the same time, each on its own SMs.",
        ),
    ),
    Numeric(
        question=(
            "Data-parallel training of a 7B model in bf16 on 8 GPUs all-reduces its "
            f"{_GRADS_7B / GB:g} GB of gradients every step. With a ring all-reduce over "
            f"{_NVLINK4.name} at {_NVLINK4.bandwidth_bytes_per_s / 1e9:g} GB/s per direction, how many "
            "milliseconds does it take at least (no latency, no overlap with compute)?"
        ),
        answer=_ALLREDUCE_MS,
        unit="ms",
        explain=(
            f"2 x (8 - 1) / 8 x {_GRADS_7B / GB:g} GB / {_NVLINK4.bandwidth_bytes_per_s / 1e9:g} GB/s = "
            f"{_ALLREDUCE_MS:.1f} ms; over PCIe 5.0 x16 ({_PCIE5.bandwidth_bytes_per_s / 1e9:g} GB/s) it "
            f"would be {_ALLREDUCE_MS * _NVLINK4.bandwidth_bytes_per_s / _PCIE5.bandwidth_bytes_per_s:.0f} ms."
        ),
        hint="a ring all-reduce sends and receives 2 (n - 1) / n times the message per GPU.",
    ),
    MultipleChoice(
        question=(
            "What does a Grace Hopper superchip give its GPU that an H100 plugged into PCIe "
            "does not have?"
        ),
        options=(
            "Fast access to the CPU's memory over NVLink-C2C, far above PCIe",
            "Twice the Tensor Core peak, because the CPU's cores share matmuls",
            "HBM for the CPU as well, so the GPU's memory is left for itself",
            "An x86 CPU, so existing x86 binaries run without recompiling",
        ),
        answer=0,
        why=(
            f"Right: NVLink-C2C carries {_C2C.bidirectional_bandwidth_bytes_per_s / 1e9:,.0f} GB/s, about "
            f"{_C2C.bandwidth_bytes_per_s / _PCIE5.bandwidth_bytes_per_s:.0f}x PCIe 5.0 x16, and the GPU can address the "
            "CPU's LPDDR5X directly: models larger than HBM spill there far less painfully.",
            "The GPU is an H100 (GH100) with its own Tensor Cores; Grace's Arm cores add no "
            "matrix throughput to speak of.",
            "Grace uses LPDDR5X, not HBM; the GPU keeps its HBM (96 or 144 GB).",
            "Grace is an Arm CPU (Neoverse V2 cores): x86 binaries must be rebuilt for Arm.",
        ),
    ),
    Numeric(
        question=(
            "Designing for a 175B-parameter model: its model states under mixed-precision "
            f"Adam ({_STATES_175B.bytes_per_param:g} bytes per parameter) must be spread over "
            f"{_H100.name} GPUs. How many GPUs hold them at the least (all of each GPU's "
            "memory, no activations)?"
        ),
        answer=_GPUS_175B,
        unit="GPUs",
        rel_tol=1e-9,
        explain=(
            f"175e9 x {_STATES_175B.bytes_per_param:g} B = "
            f"{_STATES_175B.total_bytes / 1e12:.1f} TB over {_H100.memory_bytes / 1e9:.1f} GB "
            f"(80 GiB) per GPU = {_STATES_175B.total_bytes / _H100.memory_bytes:.1f}, rounded up "
            f"to {_GPUS_175B}; activations, buffers and the time target then ask for many more."
        ),
        hint="80 GB on a GPU datasheet means 80 GiB = 80 x 2**30 bytes; round up.",
    ),
    MultipleChoice(
        question=(
            "A startup trains models around the clock. Which number decides most whether "
            "owning DGX systems beats renting cloud GPUs?"
        ),
        options=(
            "How many hours a year the GPUs are busy: their utilisation",
            "The GPU's peak TFLOP/s: a faster GPU always pays off sooner",
            "The electricity price, which is most of what owning costs",
            "The depreciation method the accountants choose for them",
        ),
        answer=0,
        why=(
            "Right: owning costs about the same whether the GPUs work or idle; renting costs per "
            "hour used. Busy around the clock, owning wins within a year or two; idle half the "
            "time, the break-even moves out past the hardware's life.",
            "Speed shortens both sides alike (the same hardware can be rented); it does not "
            "decide between owning and renting.",
            f"A DGX H100 at its {_DGX.max_power_watts / 1e3:g} kW maximum uses "
            f"${_DGX_POWER_USD:,.0f} a year at $0.10/kWh, small beside its purchase price.",
            "Depreciation spreads the same cash over years in the books; it does not change "
            "what the GPUs cost or earn.",
        ),
    ),
    Numeric(
        question=(
            "Read '32-GPU DGX POD' as 32 GPUs: 4 DGX H100 systems at their "
            f"{_DGX.max_power_watts / 1e3:g} kW maximum, all year, at $0.10/kWh, without PUE. "
            "What is the electricity bill in US dollars per year?"
        ),
        answer=_POD_4.cost_per_year_usd,
        unit="USD",
        explain=(
            f"4 x {_DGX.max_power_watts / 1e3:g} kW x 8,760 h x $0.10/kWh = "
            f"${_POD_4.cost_per_year_usd:,.0f} a year (read as 32 systems it is 8x that)."
        ),
        hint="kW x hours in a year (8,760) x $ per kWh, for 32 / 8 = 4 systems.",
    ),
)


def _placed(q: Question, position: int | None) -> Question:
    """``q`` with its right option (written first) moved to ``position``."""
    if position is None or not isinstance(q, MultipleChoice):
        return q
    pairs = list(zip(q.options, q.why, strict=True))
    pairs.insert(position, pairs.pop(q.answer))
    return MultipleChoice(question=q.question, options=tuple(o for o, _ in pairs),
                          answer=position, explain=q.explain, why=tuple(w for _, w in pairs))  # fmt: skip


_POSITIONS = (2, None, None, 1, 3, None, 2, None, 1, None)
QUESTIONS = tuple(_placed(q, at) for q, at in zip(_WRITTEN, _POSITIONS, strict=True))
