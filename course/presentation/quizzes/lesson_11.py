"""Lesson 11 (inside the GPU): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "A warp reads 32 float32 values with a stride of 4 elements from an aligned start. "
        "How many 32-byte sectors move?",
        answer=16,
        rel_tol=0.0,
        unit="sectors",
        explain="Thread i reads bytes 16i to 16i+3: two threads per 32-byte sector, 32 threads "
        "-> 16 sectors (512 bytes moved for 128 used, 25 %).",
        hint="thread i reads bytes 16i to 16i + 3: count how many threads share one 32-byte sector.",
    ),
    Numeric(
        "Occupancy on an H100 (compute capability 9.0) of 256-thread blocks using 128 registers "
        "per thread and no shared memory?",
        answer=25,
        rel_tol=0.0,
        unit="%",
        explain="128 x 32 = 4,096 registers per warp; 65,536 / 4,096 = 16 warps = 2 blocks of 8 "
        "warps; 16 of 64 warps = 25 %, limited by registers.",
        hint="registers per warp = registers per thread x 32; an SM has 65,536 registers and holds at most 64 warps.",
    ),
    MultipleChoice(
        "In `if (threadIdx.x % 2 == 0) a(); else b();` with a and b equally long, a warp takes...",
        (
            "about the time of a alone",
            "about the time of a plus b",
            "about 32 times the time of a",
        ),
        answer=1,
        why=(
            "That holds when all 32 lanes agree; here even and odd lanes differ, so both paths run.",
            "Half the lanes take each side: the warp runs a with the odd lanes masked, then b "
            "with the even ones masked, so it pays for both.",
            "Lanes are masked, not run one by one: each path runs once for all its lanes together.",
        ),
    ),
    MultipleChoice(
        "A kernel reaches 100 % occupancy after you cut its registers per thread from 128 to 32, "
        "yet runs slower. The likeliest reason?",
        (
            "values now spill to local memory",
            "occupancy is measured per GPU",
            "more warps always mean slower",
        ),
        answer=0,
        why=(
            "With fewer registers the compiler keeps less in registers (tiles, accumulators) and "
            "spills to local memory, so each warp does more loads for the same work.",
            "Occupancy is per SM (resident warps / maximum), and it did rise here.",
            "More warps usually help by hiding latency; they stop helping once latency is hidden, "
            "not by becoming harmful.",
        ),
    ),
    MultipleChoice(
        "A training step's profile shows 16,384 calls of aten::select and aten::item inside a "
        "'logging' block. What do you do first?",
        (
            "buy a GPU with more FLOP/s",
            "replace the loop by one tensor op",
            "raise the batch size to hide it",
        ),
        answer=1,
        why=(
            "The time goes to Python and per-call overhead, not arithmetic: more FLOP/s changes "
            "nothing.",
            "One call per element is the pattern: a single reduction (grad.abs().max()) does the "
            "same work in one call.",
            "The loop's cost scales with the number of elements it walks, not with the batch; it "
            "stays in every step.",
        ),
    ),
)
