"""Lesson 08 quiz: GPUs, DGX systems and the datacenter. Numbers from course.facts.hardware and the
calculators of course.calculators.gpu_systems and facility (each explanation shows the arithmetic)."""

from __future__ import annotations

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    MultipleChoice(
        question=(
            "A datasheet says a DGX H100 delivers '32 petaFLOPS of FP8'. What will a dense "
            "FP8 training job see as its ceiling?"
        ),  # fmt: skip
        options=(
            "About 32 PFLOP/s: FP8 is the dense headline of the whole system",
            "About 64 PFLOP/s: the 32 counts one direction of each Tensor Core",
            "About 16 PFLOP/s: 32 is the 2:4-sparse figure, twice the dense peak",
            "About 4 PFLOP/s: 32 is FP8 and a training job runs in TF32",
        ),
        answer=2,
        explain="8 x 1,978.9 TFLOP/s dense = 15.8 PFLOP/s; 31.7 (the '32') is with 2:4 sparsity.",
        why=(
            "NVIDIA's headline FP8 figures are the sparse ones (twice dense): the H100 datasheet "
            "lists 3,958 TFLOP/s 'with sparsity' and 1,979 without.",
            "Tensor Core peaks have no direction; and no figure is larger than the sparse one.",
            "Right: 8 x 1,978.9 = 15.8 PFLOP/s dense; the datasheet's 32 assumes 2:4 sparse "
            "weights, which training does not use.",
            "FP8 training runs in FP8 (Transformer Engine); TF32 dense would be 4.0 PFLOP/s, but "
            "that is not what the FP8 figure means.",
        ),
    ),
    MultipleChoice(
        question=(
            "You put seven 1g.10gb MIG instances on one H100 SXM (132 SMs, 16 SMs per 1g "
            "instance). What happens to the rest of the GPU?"
        ),  # fmt: skip
        options=(
            "Nothing is lost: the driver spreads all 132 SMs over the seven",
            "20 SMs stay idle: the seven slices use 112, and no 8th slice fits",
            "The eighth memory slice takes the 20 SMs as a small 8th instance",
            "The 20 SMs run the CUDA context for the seven instances",
        ),
        answer=1,
        explain="7 x 16 = 112 of 132 SMs (reference run's nvidia-smi mig -lgip); 20 idle (15 %).",
        why=(
            "Instances have fixed sizes; the SMs outside the 7 compute slices are not handed out.",
            "Right: MIG splits an H100 into 7 compute slices of 16 SMs (112); the other 20 serve "
            "no instance. Even the 7g.80gb profile uses all 132 only as one instance.",
            "A GPU has 8 memory slices but only 7 compute slices: no profile can use the 8th "
            "memory slice with SMs of its own.",
            "The CUDA context lives in each instance's own memory; idle SMs do no work for it.",
        ),
    ),
    MultipleChoice(
        question=(
            "Decoding Llama-2-7B at batch 1 on an A100 80GB (2,039 GB/s, 312 TFLOP/s bf16) "
            "or an H100 SXM (3,350 GB/s, 989 TFLOP/s). How much faster is the H100?"
        ),  # fmt: skip
        options=(
            "About 3.2x: the bf16 Tensor Core peak sets the token rate",
            "About 6.3x: the H100 switches to FP8 and doubles again",
            "About 2.2x: the average of the compute and bandwidth ratios",
            "About 1.6x: decoding at batch 1 is bound by memory bandwidth",
        ),
        answer=3,
        explain="Each token reads all 13.5 GB of weights: 3,350 / 2,039 = 1.64x.",
        why=(
            "3.17x is the training ratio (compute-bound); decoding at batch 1 leaves the Tensor "
            "Cores mostly idle.",
            "6.3x compares H100 FP8 with A100 bf16 compute: irrelevant when memory binds.",
            "The roofline takes the binding resource, not an average: here that is bandwidth.",
            "Right: at batch 1 every step reads every weight once and does 2 FLOPs per weight, "
            "far below the ridge point: 3,350 / 2,039 = 1.64x.",
        ),
    ),
    Numeric(
        question=(
            "One DGX SuperPOD scalable unit is 32 DGX H100 at 10.2 kW each. In a facility "
            "with the industry-average PUE of 1.58, how many kilowatts does it draw from "
            "the grid at full load (systems only)?"
        ),  # fmt: skip
        answer=32 * 10.2 * 1.58,
        unit="kW",
        explain="32 x 10.2 kW = 326.4 kW of IT load; x 1.58 = 515.7 kW at the meter.",
        rel_tol=0.02,
        hint="IT load = systems x kW each; the grid supplies IT load x PUE.",
    ),
    MultipleChoice(
        question=(
            "A 70B model in bf16 (140 GB) does not fit in one GPU's HBM, so half of it "
            "lives in CPU memory and streams in each step. Why does a GH200 do this much "
            "better than an H100 SXM in a PCIe server?"
        ),  # fmt: skip
        options=(
            "NVLink-C2C moves 450 GB/s each way, about 7x PCIe 5.0 x16",
            "Grace's LPDDR5X is faster than the H100's own HBM3",
            "The GH200's GPU has twice the SMs of an H100 SXM",
            "NVLink-C2C compresses the weights on the way to the GPU",
        ),
        answer=0,
        explain="900 GB/s both ways over NVLink-C2C vs 126 GB/s for PCIe 5.0 x16: 7.1x per byte.",
        why=(
            "Right: the offloaded bytes cross the CPU-GPU link every step; 450 vs 63 GB/s per "
            "direction makes that part 7x faster (and GH200's 96 GB HBM offloads less).",
            "LPDDR5X gives up to 512 GB/s per Grace; HBM3 gives 4,000 GB/s. The link, not the "
            "CPU memory, is what PCIe throttles.",
            "The GH200's GPU is an H100 (132 SMs): same compute, more memory.",
            "C2C is a coherent link; it moves bytes, it does not compress them.",
        ),
    ),
)
