"""Lesson 13 (serving at scale): the self-check quiz."""

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "A server completes 6 requests per second and each request spends 1.5 s inside it on "
        "average. How many requests are inside at once, on average?",
        answer=9,
        unit="requests",
        rel_tol=0.01,
        explain="Little's law: L = λW = 6/s x 1.5 s = 9 (course.calculators.queueing.littles_law).",
        hint="Little's law: requests inside = arrival (completion) rate x time each spends inside.",
    ),
    MultipleChoice(
        "One M/M/1 server goes from 80 % to 95 % utilisation. What happens to the mean wait?",
        (
            "it grows by about 19 %, like the load",
            "it grows about 4.75-fold, like ρ/(1 − ρ)",
            "it stays the same until the load passes 100 %",
        ),
        answer=1,
        why=(
            "The load grew by 19 %, but the wait is not proportional to the load: it depends on "
            "how little spare capacity is left to drain the queue.",
            "Right: Wq = ρS/(1 − ρ): 0.8/0.2 = 4 service times, 0.95/0.05 = 19, so 4.75x. The "
            "last few percent of utilisation cost the most latency: the knee.",
            "Queues form well before saturation because arrivals are random: bursts arrive faster "
            "than the average and wait for the server to catch up.",
        ),
    ),
    MultipleChoice(
        "vLLM's benchmark and GenAI-Perf report a different p99 'ITL' for the same run. Why?",
        (
            "one pools all the gaps, the other averages per request",
            "one measures on the server side, the other on the client side",
            "one counts the prompt tokens as output, the other does not",
        ),
        answer=0,
        why=(
            "Right: vLLM's ITL is every gap of every request pooled; GenAI-Perf's ITL is "
            "(e2e − TTFT)/(tokens − 1) per request, what vLLM calls TPOT. A single slow step "
            "counts fully in the first and is averaged away in the second.",
            "Both are client-side tools: they time the stream as it arrives at the client.",
            "Neither counts prompt tokens as output tokens; the difference is how the gaps are "
            "aggregated before taking the percentile.",
        ),
    ),
    MultipleChoice(
        "Why does continuous batching beat static batching on requests of mixed answer lengths?",
        (
            "it runs each decode step at a larger numerical precision",
            "it frees a finished sequence's slot at once for a waiting request",
            "it skips the prefill of prompts that arrive in the same step",
        ),
        answer=1,
        why=(
            "Precision is the same in both schedules; only who is in the batch at each step "
            "changes.",
            "Right: static batching keeps every slot until the longest answer of the batch "
            "ends, so short answers leave idle slots while new requests queue.",
            "Every prompt still needs its prefill; continuous batching schedules it into the "
            "next step instead of waiting for the batch to drain.",
        ),
    ),
    Numeric(
        "Speculative decoding with acceptance rate 0.8 and 4 drafted tokens: how many tokens "
        "does one pass of the large model yield on average?",
        answer=(1 - 0.8**5) / 0.2,
        unit="tokens",
        rel_tol=0.01,
        explain="(1 − α^(γ+1)) / (1 − α) = (1 − 0.8^5)/0.2 = 3.36 (Leviathan et al. 2023, eq. 1; "
        "course.calculators.fleet.speculative_decoding).",
        hint="expected tokens per pass = (1 - a^(g + 1)) / (1 - a) for acceptance a and g drafted tokens.",
    ),
)
