"""Published serving figures: SLOs of a benchmark, metric definitions of two tools, and the gains
papers report for disaggregated prefill/decode and speculative decoding. Each with its source.

Data, not results: lesson 13 prints them beside what the course's calculators and its own server
give. Dates are those of the source. Layer 1: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class LatencySLO:
    """A benchmark's latency constraint for one model: percentile, TTFT and TPOT limits."""

    benchmark: str
    model: str
    scenario: str
    percentile: float  # the constraint applies to this percentile of requests
    ttft_seconds: float
    tpot_seconds: float
    source: str


MLPERF_V40 = (
    "MLCommons, 'Llama 2 70B: An MLPerf Inference Benchmark for Large Language Models' (March "
    "2024, MLPerf Inference v4.0): server scenario, 99th percentile TTFT <= 2 s and TPOT <= 200 "
    "ms, https://mlcommons.org/2024/03/mlperf-llama2-70b/"
)
MLPERF_V50 = (
    "MLCommons, 'MLPerf Inference v5.0: new LLM benchmarks' (April 2025): Llama 2 70B "
    "interactive, TTFT <= 450 ms and TPOT <= 40 ms; Llama 3.1 405B server, TTFT <= 6 s and TPOT "
    "<= 175 ms (99th percentile), https://mlcommons.org/2025/04/llm-inference-v5/"
)

MLPERF_SLOS: tuple[LatencySLO, ...] = (
    LatencySLO("MLPerf Inference v4.0", "Llama 2 70B", "server", 99, 2.0, 0.200, MLPERF_V40),
    LatencySLO("MLPerf Inference v5.0", "Llama 2 70B", "interactive", 99, 0.450, 0.040, MLPERF_V50),
    LatencySLO("MLPerf Inference v5.0", "Llama 3.1 405B", "server", 99, 6.0, 0.175, MLPERF_V50),
)

VLLM_BENCH = (
    "vLLM, benchmarks/benchmark_serving.py (now `vllm bench serve`), calculate_metrics: TTFT = "
    "first streamed chunk - request sent; TPOT per request = (latency - TTFT) / (output tokens - "
    "1), then mean/median/p99 over requests; ITL = every gap between successive chunks of every "
    "request, pooled, then percentiles; output tokens counted by re-tokenising the text, "
    "https://github.com/vllm-project/vllm/blob/main/benchmarks/benchmark_serving.py"
)
GENAI_PERF = (
    "NVIDIA, 'GenAI-Perf' metrics (Triton Inference Server docs; since renamed AIPerf): TTFT "
    "ignores initial responses with no content; inter-token latency per request = (request "
    "latency - TTFT) / (output tokens - 1), i.e. vLLM's TPOT, "
    "https://docs.nvidia.com/nim/benchmarking/llm/latest/metrics.html"
)

#: How two common tools define the same words (why their tables disagree on one run).
METRIC_DEFINITIONS = MappingProxyType({
    "vLLM benchmark_serving": MappingProxyType({
        "TTFT": "first non-empty chunk received - request sent",
        "TPOT": "per request: (e2e - TTFT) / (output tokens - 1); then stats over requests",
        "ITL": "every gap between chunks, all requests pooled; then stats over gaps",
        "source": VLLM_BENCH,
    }),
    "NVIDIA GenAI-Perf": MappingProxyType({
        "TTFT": "first response with content - request sent (empty responses skipped)",
        "TPOT": "(not reported under this name)",
        "ITL": "per request: (e2e - TTFT) / (output tokens - 1); then stats over requests",
        "source": GENAI_PERF,
    }),
})  # fmt: skip

DISTSERVE = (
    "Zhong et al. 2024, 'DistServe: Disaggregating Prefill and Decoding for Goodput-optimized "
    "Large Language Model Serving', OSDI: up to 7.4x more requests or a 12.6x tighter SLO than "
    "state-of-the-art systems with > 90 % of requests within latency constraints, "
    "https://arxiv.org/abs/2401.09670"
)
SPECULATIVE = (
    "Leviathan, Kalman, Matias 2023, 'Fast Inference from Transformers via Speculative "
    "Decoding', ICML: 2x-3x faster T5-XXL generation with identical outputs, "
    "https://arxiv.org/abs/2211.17192"
)
ORCA = (
    "Yu et al. 2022, 'Orca: A Distributed Serving System for Transformer-Based Generative Models', "
    "OSDI: iteration-level scheduling, 36.9x the throughput of FasterTransformer at the same "
    "latency on GPT-3 175B, https://www.usenix.org/conference/osdi22/presentation/yu"
)

#: Gains the papers state (a factor over their baselines, on their hardware and traces).
PUBLISHED_GAINS = MappingProxyType({
    "disaggregated prefill/decode (DistServe), requests served at the SLO": (7.4, DISTSERVE),
    "speculative decoding (Leviathan et al.), T5-XXL speed-up, upper end": (3.0, SPECULATIVE),
    "continuous batching (Orca), throughput at equal latency": (36.9, ORCA),
})  # fmt: skip

__all__ = ["LatencySLO", "METRIC_DEFINITIONS", "MLPERF_SLOS", "PUBLISHED_GAINS"]
