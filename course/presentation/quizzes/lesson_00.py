"""Lesson 00 (set-up and the CUDA stack): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    MultipleChoice(
        "nvidia-smi prints 'CUDA Version: 12.2'. What is 12.2?",
        (
            "The CUDA toolkit version installed on this machine",
            "The CUDA runtime version that PyTorch was built with",
            "The newest CUDA runtime version the driver supports",
        ),
        answer=2,
        why=(
            "nvidia-smi comes with the driver and does not look for a toolkit: a machine with no "
            "toolkit at all prints the same line.",
            "nvidia-smi knows nothing about PyTorch; torch.version.cuda gives torch's runtime, "
            "which may be older than the driver's maximum.",
            "It is a property of the driver: the newest CUDA runtime it can serve. "
            "torch.version.cuda tells which runtime torch itself uses.",
        ),
    ),
    MultipleChoice(
        "An A100 has 108 SMs. How many FP32 CUDA cores does it have?",
        ("6,912", "13,824", "16,896"),
        answer=0,
        why=(
            "Compute capability 8.0 (A100) has 64 FP32 cores per SM: 108 x 64 = 6,912.",
            "That is 108 x 128, the per-SM count of Hopper and of consumer Ampere (8.6) applied to "
            "the A100; Computational Resources for Machine Learning makes this slip.",
            "That is the H100 SXM: 132 SMs x 128 FP32 cores per SM.",
        ),
    ),
    Numeric(
        "How many GiB do Llama-2-7B's 6,738,415,616 fp16 weights take?",
        answer=12.55,
        unit="GiB",
        rel_tol=0.01,
        explain="2 bytes x 6.74e9 = 13.48e9 bytes = 13.5 GB = 12.55 GiB (1 GiB = 2**30 bytes).",
        hint="bytes = parameters x bytes per fp16 value; a GiB is 2**30 bytes, not 1e9.",
    ),
    MultipleChoice(
        "torch.cuda.is_available() is False on a machine with an NVIDIA GPU. Most likely cause?",
        (
            "The driver is too old for torch's CUDA runtime",
            "The CUDA toolkit (nvcc) is not installed here",
            "The cuDNN library is missing from the system",
        ),
        answer=0,
        why=(
            "The driver is the one piece torch cannot bring with it: if it is older than the CUDA "
            "runtime in the wheel requires, CUDA is unavailable.",
            "PyTorch's wheels carry the CUDA runtime libraries they need; nvcc is only needed to "
            "compile your own CUDA code.",
            "The pip and conda builds of torch bundle cuDNN; a missing system cuDNN does not matter.",
        ),
    ),
    MultipleChoice(
        "A wheel built with CUDA 12.6 runs on a driver that supports up to 12.2. What holds?",
        (
            "Nothing runs: every minor version needs its own driver",
            "Everything runs, with no caveat, on any driver at all",
            "It runs, except PTX the older driver cannot JIT-compile",
        ),
        answer=2,
        why=(
            "Since CUDA 11, minor-version compatibility lets a 12.x runtime run on any driver of the "
            "12 family at or above the minimum (525.60.13 on Linux).",
            "There is a minimum driver (525.60.13 on Linux for CUDA 12) and PTX newer than the driver "
            "cannot be JIT-compiled; a driver of another major version does not work.",
            "Minor-version compatibility: prebuilt kernels (SASS) run, but PTX from the newer toolkit "
            "cannot be JIT-compiled by the older driver, and APIs new in 12.6 may be unavailable.",
        ),
    ),
)
