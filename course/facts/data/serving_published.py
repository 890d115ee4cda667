"""Published serving figures: SLOs of a benchmark, metric definitions of two tools, and the gains
papers report for disaggregated prefill/decode and speculative decoding. Each with its source.

Data, not results: lesson 13 prints them beside what the course's calculators and its own server
give. Dates are those of the source.
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


#: MLPerf Inference's reference LoadGen configuration, where the limits are set (a submission's
#: server-scenario run is valid only if both 99th percentiles meet them).
MLPERF_CONF = (
    "mlcommons/inference loadgen/mlperf.conf at commit b66003e10e2db4b8c36a448b0545ec90fcc6e9e9: "
    "'*.Server.target_latency_percentile = 99' (line 83); 'llama2-70b.Server.ttft_latency = "
    "2000', 'tpot_latency = 200' (lines 117-118, added 2024-01-19 for v4.0, #1570); "
    "'llama2-70b-interactive' 450 / 40 (lines 121-122, 2025-01-21 for v5.0, #2017); "
    "'llama3_1-405b' 6000 / 175 (lines 130-131); milliseconds, "
    "https://github.com/mlcommons/inference/blob/b66003e10e2db4b8c36a448b0545ec90fcc6e9e9/loadgen/"
    "mlperf.conf"
)
MLPERF_V40 = (
    "MLCommons, 'Llama 2 70B: An MLPerf Inference Benchmark for Large Language Models' (March "
    "2024, MLPerf Inference v4.0): server scenario, 99th percentile TTFT <= 2 s and TPOT <= 200 "
    "ms, https://mlcommons.org/2024/03/mlperf-llama2-70b/; " + MLPERF_CONF
)
MLPERF_V50 = (
    "MLCommons, 'MLPerf Inference v5.0: new LLM benchmarks' (April 2025): Llama 2 70B "
    "interactive, TTFT <= 450 ms and TPOT <= 40 ms; Llama 3.1 405B server, TTFT <= 6 s and TPOT "
    "<= 175 ms (99th percentile), https://mlcommons.org/2025/04/llm-inference-v5/; " + MLPERF_CONF
)

#: MLPerf Inference's scenarios (https://docs.mlcommons.org/inference/: SingleStream, MultiStream,
#: Server, Offline; the datacenter LLMs run Offline and Server). "Interactive" is no scenario: it is
#: a benchmark, ``llama2-70b-interactive`` (mlperf.conf lines 121-122), the Server scenario of
#: Llama 2 70B under tighter latency limits, hence its ``model`` name here.
MLPERF_SCENARIOS = ("SingleStream", "MultiStream", "Server", "Offline")

MLPERF_SLOS: tuple[LatencySLO, ...] = (
    LatencySLO("MLPerf Inference v4.0", "Llama 2 70B", "Server", 99, 2.0, 0.200, MLPERF_V40),
    LatencySLO(
        "MLPerf Inference v5.0", "Llama 2 70B interactive", "Server", 99, 0.450, 0.040, MLPERF_V50
    ),
    LatencySLO("MLPerf Inference v5.0", "Llama 3.1 405B", "Server", 99, 6.0, 0.175, MLPERF_V50),
)

MLPERF_LOADGEN = (
    "mlcommons/inference LoadGen at commit b66003e10e2db4b8c36a448b0545ec90fcc6e9e9: "
    "loadgen/logging.cc line 475, time_per_output_token = (latency - first token latency) / "
    "(n_tokens - 1) per sample (a sample with 1 token is an error); loadgen/results.cc lines "
    "86-136 and 354-363, TTFT and TPOT each sorted over samples and the 99th percentile compared "
    "with ttft_latency and tpot_latency, https://github.com/mlcommons/inference/tree/"
    "b66003e10e2db4b8c36a448b0545ec90fcc6e9e9/loadgen"
)
VLLM_BENCH = (
    "vLLM, vllm/benchmarks/serve.py (`vllm bench serve`, formerly benchmarks/benchmark_serving.py) "
    "at commit def9ce85ba1079af970a58ed3d42dd861ae35d58, calculate_metrics: TPOT per request = "
    "(latency - TTFT) / (output tokens - 1) for requests with more than one token, then mean, "
    "median, std and percentiles over requests; ITL = every gap between successive chunks of "
    "every request, pooled; output tokens = the server's usage.completion_tokens, or the text "
    "re-tokenised when the server reports none; percentiles of ttft, tpot, itl, default p99 "
    "(--metric-percentiles). vllm/benchmarks/lib/endpoint_request_func.py at commit "
    "02cfb534df5674737558730b10f23d1b7aef9b7c: TTFT = first streamed chunk carrying a choice, "
    "'text could be empty here e.g. for special tokens', "
    "https://github.com/vllm-project/vllm/blob/def9ce85ba1079af970a58ed3d42dd861ae35d58/vllm/"
    "benchmarks/serve.py"
)
GENAI_PERF = (
    "NVIDIA, 'GenAI-Perf' (since succeeded by AIPerf): metrics page, TTFT 'disregard[s] the "
    "initial responses that have no content', https://docs.nvidia.com/nim/benchmarking/llm/"
    "latest/metrics.html; code, triton-inference-server/perf_analyzer genai-perf/genai_perf/"
    "profile_data_parser/llm_profile_data_parser.py at commit "
    "f7f17bf3f654f736da92143d39714d10af81a7af, _parse_requests: responses without content "
    "removed, TTFT = first remaining response - request, inter_token_latency = (request latency - "
    "TTFT) / (output tokens - 1) per request with more than one token (vLLM's TPOT), output "
    "tokens counted by re-tokenising the whole text, https://github.com/triton-inference-server/"
    "perf_analyzer"
)

#: How two common tools define the same words (why their tables disagree on one run).
METRIC_DEFINITIONS = MappingProxyType({
    "vLLM benchmark_serving": MappingProxyType({
        "TTFT": "first streamed chunk - request sent (even if the chunk's text is empty)",
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

#: How MLPerf's LoadGen measures the two numbers its SLOs constrain: its TPOT is vLLM's.
MLPERF_METRIC_DEFINITIONS = MappingProxyType({
    "TTFT": "first token reported by the system under test - query issued; p99 over samples, an order statistic (not interpolated)",
    "TPOT": "per sample: (latency - TTFT) / (output tokens - 1); p99 over samples, an order statistic (not interpolated)",
    "source": MLPERF_LOADGEN,
})  # fmt: skip

DISTSERVE = (
    "Zhong et al. 2024, 'DistServe: Disaggregating Prefill and Decoding for Goodput-optimized "
    "Large Language Model Serving', OSDI: 'DistServe can serve 4.48x more requests or 10.2x "
    "tighter SLO, compared to state-of-the-art systems, while staying within latency constraints "
    "for > 90% of requests' (the abstract, as on the first author's publication page, "
    "https://yinminzhong.com/publication/distserve/; arXiv:2401.09670). Other summaries quote "
    "'up to 7.4x', which this abstract does not say"
)
SPECULATIVE = (
    "Leviathan, Kalman, Matias 2023, 'Fast Inference from Transformers via Speculative "
    "Decoding', ICML: 2x-3x faster T5-XXL generation with identical outputs (abstract); up to "
    "3.4x measured (Table 2: T5-XXL English-German with a T5-small draft), "
    "https://arxiv.org/abs/2211.17192"
)
ORCA = (
    "Yu et al. 2022, 'Orca: A Distributed Serving System for Transformer-Based Generative Models', "
    "OSDI: the whole system (iteration-level scheduling with selective batching, on its own "
    "engine), 36.9x the throughput of FasterTransformer at the same latency on GPT-3 175B; not "
    "a gain of continuous batching alone, https://www.usenix.org/conference/osdi22/presentation/yu"
)

#: Gains the papers state (a factor over their baselines, on their hardware and traces).
PUBLISHED_GAINS = MappingProxyType({
    "disaggregated prefill/decode (DistServe, abstract), requests served within the SLOs": (4.48, DISTSERVE),
    "speculative decoding (Leviathan et al.), T5-XXL speed-up, highest measured": (3.4, SPECULATIVE),
    "iteration-level scheduling (Orca, whole system), throughput at equal latency": (36.9, ORCA),
})  # fmt: skip

__all__ = [
    "LatencySLO",
    "MLPERF_SCENARIOS",
    "METRIC_DEFINITIONS",
    "MLPERF_METRIC_DEFINITIONS",
    "MLPERF_SLOS",
    "PUBLISHED_GAINS",
]
