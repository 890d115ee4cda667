"""Lesson 06 (parallelism on a real distributed engine): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    MultipleChoice(
        "Two ranks each compute the mean-loss gradient of half the batch; DDP averages them. The "
        "result, compared with one process on the whole batch, is:",
        (
            "the same gradient, up to float rounding",
            "half of that gradient on each rank",
            "twice that gradient on each rank",
        ),
        answer=0,
        why=(
            "The mean over the batch is the mean of the two halves' means (equal halves): DDP's "
            "all-reduce averages them, and the lesson measured agreement to 1e-6.",
            "Each rank's local gradient is already a full-size mean over its half; the all-reduce "
            "sums and DDP divides by the world size, so nothing is halved.",
            "A plain sum of the two ranks' gradients would be twice the mean, which is why DDP "
            "divides the all-reduced sum by the world size.",
        ),
    ),
    Numeric(
        "A ring all-reduce of S bytes over n = 8 GPUs: what fraction of S does each GPU send?",
        answer=1.75,
        unit="x S",
        rel_tol=0.01,
        explain="2 (n - 1) / n = 14 / 8 = 1.75: a reduce-scatter ((n-1)/n) then an all-gather.",
        hint="a reduce-scatter sends (n - 1)/n of S, and the all-gather after it the same again.",
    ),
    MultipleChoice(
        "Under ZeRO stage 3 (FSDP full sharding), a rank about to run a layer's forward first:",
        (
            "reduce-scatters the layer's gradients",
            "all-gathers the layer's weight shards",
            "all-reduces the layer's activations",
        ),
        answer=1,
        why=(
            "Reduce-scatter comes after the backward pass, to leave each rank the summed gradient "
            "of its own shard; it is not needed before a forward.",
            "Each rank holds 1/n of every weight, so the full layer is gathered just before use "
            "and freed after (and gathered again for the backward).",
            "All-reducing activations is what tensor parallelism's row-split layers do; data-"
            "parallel ranks never exchange activations.",
        ),
    ),
    Numeric(
        "A pipeline of p = 4 stages runs m = 12 micro-batches (GPipe or 1F1B). Bubble fraction, in %?",
        answer=20,
        unit="%",
        rel_tol=0.02,
        explain="(p - 1) / (m + p - 1) = 3 / 15 = 20 %; m = 27 gives exactly 10 % (3 / 30), m = 28 brings it under.",
        hint="bubble = (p - 1) / (m + p - 1), as a percentage.",
    ),
    MultipleChoice(
        "Why do layouts keep tensor parallelism inside one node?",
        (
            "It must replicate the optimizer states across the node's GPUs",
            "NCCL cannot run a collective that spans more than one node",
            "It all-reduces activations on every layer, which needs NVLink",
        ),
        answer=2,
        why=(
            "Tensor parallelism splits the weights and their optimizer states; it replicates "
            "nothing that would tie it to a node.",
            "NCCL runs collectives across nodes every day: data parallelism's gradient all-reduce "
            "spans whole clusters over InfiniBand.",
            "Four activation all-reduces per layer and micro-batch: on NVLink about a sixth of the "
            "layer's compute time, over one 400 Gb/s InfiniBand port nine times that, longer than "
            "the compute itself.",
        ),
    ),
    MultipleChoice(
        "Pure-Python work on 2 threads of CPython (with its GIL) on an idle 2-core machine runs:",
        (
            "at about the speed of one thread",
            "at about twice the speed of one thread",
            "slower than one process would on one core",
        ),
        answer=0,
        why=(
            "Only the thread holding the GIL runs bytecode, so the two take turns; processes (or "
            "code that releases the GIL, like torch kernels) use both cores.",
            "Twice as fast would need both threads running bytecode at once, which the GIL "
            "forbids; two processes can do it.",
            "Switching the GIL costs a little, but threads are not generally slower than one "
            "process; they are about as fast as one thread.",
        ),
    ),
)
