"""Which graded exercise question assesses each section of each lesson.

``COVERAGE[lesson][heading]`` lists the ``(exercise set, question)`` pairs that grade what the
section ``## heading`` of ``notebooks/<lesson>.ipynb`` teaches.
``tests/teaching/test_coverage.py`` reads the notebooks' ``##`` headings and the solution
notebooks' questions and fails when a section has no question, when a mapped question does not
exist, or when the table names a section that is gone.

``SUBSECTIONS[lesson][heading]`` does the same for the subsections (``### heading``) that teach a
mechanism of their own inside a broader section (FlashAttention's online softmax inside "Fusion and
tiling", the whole training state inside "What a checkpoint holds"). Not every subsection is
listed: a "The sources say" correction, a reference run shown beside a measurement or a longer
recording of the same experiment teaches nothing its section's question does not grade. A listed
subsection must exist and map to questions that exist (the same test).

Kept as data here rather than as a table in CONTRIBUTING.md: a test reads it without parsing
Markdown, the instructors' guide and the site can import it, and a renamed heading fails one test
that names it. The skeleton's own sections (summary, quiz, exercises, sources) teach nothing new and
are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

#: Sections of the lesson skeleton that hold no new material (CONTRIBUTING.md, "A new lesson").
SKELETON = frozenset({"Summary", "Check your understanding", "Exercises", "Sources"})

_00 = "00_units_and_memory"
_01 = "01_hardware"
_02 = "02_memory_hierarchy"
_03 = "03_data_types"
_04 = "04_model_memory"
_05 = "05_flops_time_cost"
_06 = "06_parallelism"
_07 = "07_optimisation"
_08 = "08_gpus_dgx_datacenter"
_09 = "09_cloud_and_cost"
_11 = "11_inside_the_gpu"
_12 = "12_training_at_scale"
_13 = "13_serving_at_scale"
_14 = "14_running_a_gpu_cluster"

COVERAGE: MappingProxyType = MappingProxyType(
    {
        "00_setup": {
            "1. Does this machine run the course?": ((_00, "q7"),),
            "2. What PyTorch sees on this machine": ((_00, "q4"),),
            "3. One line picks the device": ((_00, "q4"),),
            "4. From your code to the GPU: the software stack": ((_00, "q6"),),
            "5. The version triangle: driver, CUDA runtime, cuDNN": ((_00, "q6"),),
            "6. Reading `nvidia-smi`": ((_00, "q7"),),
            "7. GB or GiB?": ((_00, "q1"), (_00, "q2"), (_00, "q3"), (_00, "q5")),
            "8. A better verification script": ((_00, "q7"),),
        },
        "01_cpu_vs_gpu": {
            '1. The reading\'s "engineering analogy", done honestly': ((_01, "q1"), (_01, "q2")),
            "2. *GPU Infrastructure & Computational Requirements*'s \"10²¹ FLOPs per training "
            'token"': ((_01, "q3"),),
            "3. Threads: how a CPU uses its few cores": ((_01, "q8"),),
            "4. Thousands of simple cores: SIMT": ((_01, "q4"),),
            "5. When CPUs win": ((_01, "q9"),),
            "6. Tensor Cores vs CUDA cores (*AI Infrastructure*, practice question 2)": (
                (_01, "q4"),
            ),
        },
        "02_memory_hierarchy": {
            "1. The GPU's hierarchy, from the datasheets": ((_02, "q1"), (_02, "q2")),
            "2. This machine's hierarchy, measured": ((_02, "q7"), (_01, "q7")),
            "3. Arithmetic intensity and the roofline": ((_02, "q3"), (_02, "q4"), (_01, "q6")),
            '4. "Memory bandwidth trumps compute": the floor of LLM decoding': (
                (_02, "q5"),
                (_02, "q6"),
                (_02, "q8"),
                (_01, "q5"),
            ),
            "5. Explore": ((_02, "q4"), (_02, "q5")),
        },
        "03_data_types": {
            "1. Where the bits go": ((_03, "q1"),),
            "2. Ranges: derived from the bits, checked against torch": (
                (_03, "q1"),
                (_03, "q2"),
                (_03, "q9"),
            ),
            "3. Failure modes, reproduced": ((_03, "q3"), (_03, "q4")),
            "4. Mixed precision on this machine": ((_03, "q8"),),
            "5. Quantisation: int8 and int4 weights": ((_03, "q5"), (_03, "q6"), (_03, "q9")),
            "6. Matmul throughput per dtype on this machine": ((_03, "q7"),),
        },
        "04_model_memory": {
            "1. Parameters follow from the architecture": ((_04, "q1"),),
            "2. Inference: weights, KV cache, workspace": ((_04, "q3"), (_04, "q4")),
            "3. Training: model states and activations": ((_04, "q2"), (_04, "q5")),
            "4. Estimate, then measure: one training step on this machine": ((_04, "q6"),),
            "5. The sources' rules of thumb, side by side": ((_04, "q7"), (_04, "q8")),
            "6. The KV cache, and what grouped-query attention buys": ((_04, "q3"),),
            "7. Will it fit?": ((_04, "q4"),),
        },
        "05_flops_time_cost": {
            "1. Counting FLOPs: 2N to infer, 6N to train": ((_05, "q1"), (_05, "q2")),
            "2. Utilisation: MFU and HFU": ((_05, "q3"), (_05, "q7")),
            "3. Time: from FLOPs to days": ((_05, "q4"), (_05, "q5")),
            "4. The source document's runtime estimate, corrected": ((_05, "q8"),),
            "5. Cost and energy": ((_05, "q6"),),
            "6. How long and how much?": ((_05, "q4"), (_05, "q6")),
        },
        "06_parallelism": {
            "1. Many processes, one job": ((_06, "q6"),),
            "2. Collectives: what they do and what they cost": ((_06, "q2"),),
            "3. Data parallelism: same model, different data": ((_06, "q6"),),
            "4. Sharding: ZeRO and FSDP": ((_06, "q1"),),
            "5. Tensor parallelism: split every matrix": ((_06, "q4"),),
            "6. Pipeline parallelism: split the layers": ((_06, "q3"), (_06, "q7")),
            "7. Links: what NVLink buys (practice question 6)": ((_06, "q2"),),
            "8. Choosing a layout": ((_06, "q5"), (_06, "q8")),
            "9. CPU parallelism: threads, processes and the GIL": ((_01, "q8"),),
        },
        "07_optimisation": {
            "1. Gradient accumulation: a large batch in the memory of a small one": (
                (_07, "q1"),
                (_07, "q8"),
            ),
            "2. Activation recomputation: full and selective": ((_07, "q2"),),
            "3. Attention memory: naive vs fused": ((_07, "q3"),),
            "4. Mixed precision and quantisation for serving": ((_07, "q9"),),
            "5. Launch overhead, CUDA graphs and `torch.compile`": ((_07, "q6"),),
            "6. Batching for inference: latency against throughput": ((_02, "q8"), (_13, "q6")),
            "7. KV-cache management: paging, precision, GQA, windows": ((_07, "q4"),),
            "8. Offloading to CPU memory": ((_07, "q10"),),
            "9. Parameter-efficient fine-tuning: LoRA": ((_07, "q5"),),
            "10. Memory troubleshooting: allocated, reserved, peak": ((_07, "q11"),),
            "11. Which technique? A decision table": ((_07, "q7"),),
        },
        "08_gpus_dgx_datacenter": {
            "1. The lineup, from the registry": ((_08, "q1"), (_08, "q4")),
            "2. What the power figure means: the H100 reference run": ((_08, "q3"),),
            "3. A100 or H100? (practice question 4)": ((_08, "q4"),),
            "4. Multi-Instance GPU (practice question 5)": ((_08, "q5"),),
            "5. Grace and Grace Hopper (practice question 7)": ((_08, "q6"),),
            "6. A DGX from its parts": ((_08, "q1"),),
            "7. The fabric: rails, leaves, spines and the SuperPOD": ((_08, "q2"),),
            "8. Power, cooling and racks (practice question 10)": ((_08, "q3"), (_08, "q8")),
            "9. Design a DGX cluster for a 175B model (practice question 8)": ((_08, "q7"),),
        },
        "09_cloud_and_cost": {
            "1. A price is an instance, a kind, a region and a date": ((_09, "q2"),),
            "2. A reading's break-even, reproduced and corrected": ((_09, "q1"), (_09, "q6")),
            "3. Practice question 9: a startup training continuously": ((_09, "q5"),),
            "4. Cost per unit of work: a training run and a million tokens": (
                (_09, "q2"),
                (_09, "q4"),
            ),
            "5. Spot capacity: cheaper hours that can vanish": ((_09, "q3"), (_09, "q7")),
        },
        "10_practice_questions": {
            "1. CPUs and GPUs for AI": ((_01, "q2"), (_01, "q9")),
            "2. Tensor Cores and CUDA cores": ((_01, "q4"),),
            "3. Memory to train a 7B model with Adam in FP16": ((_04, "q2"),),
            "4. A100 or H100?": ((_08, "q4"),),
            "5. Multi-Instance GPU (MIG)": ((_08, "q5"),),
            "6. NVLink": ((_06, "q2"),),
            "7. Grace Hopper": ((_08, "q6"),),
            "8. A DGX design for a 175B model": ((_08, "q7"),),
            "9. On-premises DGX or cloud for a startup": ((_09, "q5"),),
            "10. The annual power cost of a 32-GPU DGX POD": ((_08, "q8"),),
        },
        "11_inside_the_gpu": {
            "1. Write a kernel: grid, programs, masks": ((_11, "q3"),),
            "2. Warps and divergence": ((_11, "q6"),),
            "3. Coalescing: sectors per warp request": ((_11, "q1"),),
            "4. Occupancy: how many warps fit on an SM": ((_11, "q2"),),
            "5. Fusion and tiling: bytes a kernel moves": ((_11, "q4"), (_11, "q8")),
            "6. Profile before optimising": ((_11, "q5"),),
            "7. NUMA and topology": ((_11, "q7"),),
        },
        "12_training_at_scale": {
            "1. What a checkpoint holds and what it costs": ((_12, "q1"), (_12, "q8"), (_12, "q9")),
            "2. Failures at scale": ((_12, "q2"),),
            "3. Surviving a failure, for real": ((_12, "q3"), (_12, "q4"), (_12, "q8")),
            "4. Expert parallelism: a mixture of experts across ranks": ((_12, "q5"), (_12, "q6")),
            "5. Context parallelism: ring attention": ((_12, "q7"),),
        },
        "13_serving_at_scale": {
            "1. The metrics, defined precisely": ((_13, "q1"), (_13, "q11")),
            "2. Queueing: why latency explodes near saturation": ((_13, "q2"), (_13, "q3")),
            "3. A real server, measured": (
                (_13, "q6"),
                (_13, "q8"),
                (_13, "q12"),
                (_13, "q13"),
            ),
            "4. Load balancing across replicas": ((_13, "q9"),),
            "5. From this machine to a fleet": ((_13, "q4"), (_13, "q5"), (_13, "q7")),
            "6. Two techniques that change the curve": ((_13, "q10"),),
        },
        "14_running_a_gpu_cluster": {
            "1. Who gets a GPU: Slurm's model": ((_14, "q2"), (_14, "q5")),
            "2. A real Slurm, started here": ((_14, "q1"), (_14, "q2"), (_14, "q8"), (_14, "q10")),
            "3. My job outgrew one machine: batch scripts that run unchanged on a cluster": (
                (_14, "q1"),
            ),
            "4. Scheduling as a calculation": ((_14, "q3"), (_14, "q4"), (_14, "q5")),
            "5. Containers and Kubernetes with GPUs": ((_14, "q7"),),
            "6. Monitoring and health": ((_14, "q6"), (_14, "q9")),
        },
    }
)


#: Subsections that teach a mechanism of their own, graded where taught (see the docstring).
SUBSECTIONS: MappingProxyType = MappingProxyType(
    {
        "03_data_types": {
            "TF32: a compute mode, not a storage format": ((_03, "q9"),),
            "Integers: int8 and int4": ((_03, "q6"),),
            "3.2 Underflow: small gradients become zero": ((_03, "q4"),),
            "3.3 Rounding: summing many small numbers": ((_03, "q3"),),
            "4.2 Loss scaling on real gradients": ((_03, "q4"),),
            "Blackwell's block formats: FP8 with scales, MXFP8, MXFP4, NVFP4": ((_03, "q9"),),
        },
        "11_inside_the_gpu": {
            "FlashAttention's forward pass: attention without the N × N matrix": ((_11, "q8"),),
        },
        "12_training_at_scale": {
            "Saving for real: `torch.save` against `torch.distributed.checkpoint`": (
                (_12, "q8"),
                (_12, "q9"),
            ),
            "Resharding: saved on 2 ranks, loaded on 1, and back": ((_12, "q8"),),
            "The whole training state: a restart that is bitwise the uninterrupted run": (
                (_12, "q9"),
            ),
        },
        "13_serving_at_scale": {
            "Static vs continuous batching, same requests, same load": ((_13, "q6"),),
            "Where paging matters: a small pool and answers of unknown length": ((_13, "q13"),),
            "[Chunked prefill](glossary.md#chunked-prefill): a long prompt no longer stalls "
            "everyone decoding": ((_13, "q12"),),
            "Cost per million tokens at a utilisation": ((_13, "q5"),),
            "A day of traffic: a fixed fleet or autoscaling": ((_13, "q7"),),
        },
    }
)


def questions_for(lesson: str, heading: str) -> tuple[tuple[str, str], ...]:
    """The ``(set, question)`` pairs that grade section ``heading`` of ``lesson`` (empty if
    none)."""
    return tuple(COVERAGE.get(lesson, {}).get(heading, ()))


def headings(notebook: dict, level: int = 2) -> list[str]:
    """The headings of ``level`` (2: ``## ``, 3: ``### ``) of a notebook's Markdown cells (its
    JSON as a dict), outside code fences."""
    mark, found = "#" * level + " ", []
    for cell in notebook.get("cells", ()):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        fenced = False
        for line in ("".join(source) if isinstance(source, list) else source).splitlines():
            fenced ^= line.lstrip().startswith("```")
            if not fenced and line.startswith(mark):
                found.append(line[len(mark) :].strip())
    return found


def problems(
    lesson: str,
    sections: list[str],
    questions: dict[str, set[str]],
    table: Mapping[str, Mapping[str, tuple[tuple[str, str], ...]]] = COVERAGE,
) -> list[str]:
    """What is wrong with the coverage of ``lesson`` (its ``##`` headings ``sections``), given each
    exercise set's question names: a section with no question, a mapped question that does not
    exist, a table entry for a section the lesson no longer has. Empty when all is well."""
    taught = [h for h in sections if h not in SKELETON]
    rows = table.get(lesson)
    if rows is None:
        return [f"{lesson}: not in the coverage table"]
    found = [f"{lesson}: {h!r} has no graded question" for h in taught if not rows.get(h)]
    found += [
        f"{lesson}: {h!r} maps to {s} {q}, which does not exist"
        for h in taught
        for s, q in rows.get(h, ())
        if q not in questions.get(s, set())
    ]
    found += [
        f"{lesson}: the table names {h!r}, not a section of the lesson"
        for h in rows
        if h not in taught
    ]
    return found


def subsection_problems(
    lesson: str,
    subsections: list[str],
    questions: dict[str, set[str]],
    table: Mapping[str, Mapping[str, tuple[tuple[str, str], ...]]] = SUBSECTIONS,
) -> list[str]:
    """What is wrong with the listed subsections of ``lesson`` (its ``###`` headings
    ``subsections``): a listed one the lesson no longer has, one with no question, a mapped question
    that does not exist. Subsections the table does not list are not asked for."""
    rows = table.get(lesson, {})
    found = [
        f"{lesson}: the table names subsection {h!r}, not one of the lesson's"
        for h in rows
        if h not in subsections
    ]
    found += [
        f"{lesson}: subsection {h!r} has no graded question" for h, q in rows.items() if not q
    ]
    found += [
        f"{lesson}: subsection {h!r} maps to {s} {q}, which does not exist"
        for h, pairs in rows.items()
        for s, q in pairs
        if q not in questions.get(s, set())
    ]
    return found


__all__ = [
    "COVERAGE",
    "SKELETON",
    "SUBSECTIONS",
    "headings",
    "problems",
    "questions_for",
    "subsection_problems",
]
