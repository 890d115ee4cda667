"""Lesson 01 (CPU vs GPU): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    MultipleChoice(
        "GPU Infrastructure & Computational Requirements times a 32x32 Python loop and a "
        "1024x1024 np.dot and divides the seconds. What does that ratio mix together?",
        (
            "The speed-up and a 32,768x difference in work",
            "The speed of a CPU and the speed of a GPU",
            "The cost of fp32 and the cost of fp64 arithmetic",
        ),
        answer=0,
        why=(
            "(1024/32)**3 = 32,768 times more FLOPs in the second run: divide FLOPs by seconds and "
            "compare the rates instead.",
            "Both runs are on the CPU: no GPU is involved in either timing.",
            "Both use float64 (Python floats and numpy's default); the dtype does not change between "
            "the two runs.",
        ),
    ),
    Numeric(
        "Training FLOPs per token of a 7e9-parameter model (6N)?",
        answer=4.2e10,
        rel_tol=0.02,
        unit="FLOP",
        explain="6 x 7e9 = 4.2e10: 2N forward + 4N backward.",
        hint="a forward pass is 2 FLOPs per parameter and the backward twice the forward.",
    ),
    MultipleChoice(
        "How many FP32 CUDA cores does one A100 SM have?",
        ("32", "64", "128"),
        answer=1,
        why=(
            "32 is the width of a warp (threads scheduled together), not the FP32 units of an SM.",
            "GA100 (compute capability 8.0): 64 FP32 cores per SM, 108 SMs = 6,912.",
            "128 per SM is Hopper (H100) and consumer Ampere (8.6), not the A100.",
        ),
    ),
    Numeric(
        "H100 SXM: dense BF16 Tensor Core peak / FP32 peak (989.4 and 67 TFLOP/s)?",
        answer=14.8,
        rel_tol=0.03,
        unit="times (a ratio)",
        explain="989.4 / 67 = 14.8; the 8-10x of AI Infrastructure is the V100's ratio.",
        hint="divide the Tensor Core peak by the FP32 peak, both dense and in TFLOP/s.",
    ),
    MultipleChoice(
        "Which job is most likely faster on a CPU than on a datacenter GPU?",
        (
            "A 4096x4096 matrix multiplication in fp16",
            "A batch of 256 images through a ResNet-50",
            "Tokenising text, branching on every character",
        ),
        answer=2,
        why=(
            "A large, regular matmul is exactly what Tensor Cores are for: the GPU wins by far.",
            "Convolutions over a batch are large, uniform tensor work: GPU territory.",
            "Branch-heavy, irregular work diverges within a warp and has little parallelism per "
            "string: a CPU core with branch prediction does it well.",
        ),
    ),
)
