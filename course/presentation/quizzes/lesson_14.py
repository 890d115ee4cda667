"""Lesson 14 (running a shared GPU cluster): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    MultipleChoice(
        "A job asks for `--gres=gpu:3` on a node with 4 GPUs, one of them busy. `squeue` shows it "
        "PENDING with reason `Resources`. What does that reason mean?",
        (
            "a job with a higher priority is ahead of it in the queue",
            "not enough free GPUs on any node it may use right now",
            "its account has used up its share of GPU-hours",
        ),
        answer=1,
        why=(
            "That is reason `Priority`: the job could wait behind a higher-priority job even when "
            "its GPUs are free.",
            "Right: `Resources` means the job is next in line but what it asks for (3 GPUs on one "
            "node) is not free; it starts when running jobs release enough.",
            "A used-up share lowers a job's priority (fair share), or the job hits a limit: of "
            "its association (reasons `AssocGrp*`, such as `AssocGrpGRESMinutes`) or of its QOS "
            "(`QOSGrp*`), not `Resources` (Slurm, Job Reason Codes).",
        ),
    ),
    MultipleChoice(
        "The backfill scheduler starts a small job ahead of a waiting big one. What must be true?",
        (
            "the small job's time limit ends before the big job's reserved start",
            "the small job belongs to the account with the most fair share left",
            "the small job asks for fewer CPUs than the big one does",
        ),
        answer=0,
        why=(
            "Right (or it runs on nodes the big job's reservation does not hold): Slurm's backfill "
            "never delays the expected start of any higher-priority job it planned, it reserves "
            "whole nodes, and it trusts the time limits users ask for (Slurm, Scheduling "
            "Configuration Guide).",
            "Fair share sets priorities; backfill looks at what fits in the gaps, whoever owns it.",
            "Fewer resources is not enough: a small job that runs past the big job's start would "
            "delay it, so backfill needs its time limit too.",
        ),
    ),
    Numeric(
        "Four nodes of 8 GPUs have 3, 5, 2 and 6 GPUs free. How many 4-GPU single-node jobs fit?",
        answer=2,
        unit="jobs",
        rel_tol=0.0,
        explain="5 // 4 + 6 // 4 = 2 jobs; 16 GPUs are free, 8 of them stranded for this size "
        "(course.calculators.scheduling.fragmentation).",
        hint="A single-node job must find all its GPUs on one node: count per node, not in total.",
    ),
    MultipleChoice(
        "Two inference services must share one H100 with a guaranteed memory and fault boundary "
        "between them. Which sharing mechanism gives that?",
        (
            "time-slicing through the device plugin's replicas setting",
            "MPS, the Multi-Process Service, with an active-thread limit",
            "MIG, which splits the GPU into instances with their own memory",
        ),
        answer=2,
        why=(
            "Time-slicing shares everything in turns: no memory limit, no fault isolation, and "
            "each switch costs a context switch.",
            "MPS runs the clients' kernels concurrently and can cap their SMs; since Volta each "
            "client has its own address space and an enforced memory limit, but bandwidth, L2 and "
            "faults are shared: a fatal fault in one client can take the others down (NVIDIA "
            "MPS documentation, 'Volta MPS').",
            "Right: MIG instances have their own SMs, L2 slices and memory; one instance's "
            "error or memory pressure does not reach the others.",
        ),
    ),
)
