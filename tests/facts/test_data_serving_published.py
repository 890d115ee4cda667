"""The published serving figures of lesson 13, held against their primary sources (issue 19).

Checked on 2026-11-24:

- MLPerf Inference: mlcommons/inference ``loadgen/mlperf.conf`` at commit b66003e1 (line 83,
  ``*.Server.target_latency_percentile = 99``; lines 117-118, Llama 2 70B server TTFT 2000 ms and
  TPOT 200 ms; lines 121-122, Llama 2 70B interactive 450 / 40 ms; lines 130-131, Llama 3.1 405B
  server 6000 / 175 ms). LoadGen's TPOT (``loadgen/logging.cc`` line 475) is per sample
  ``(latency - first token latency) / (n_tokens - 1)``.
- vLLM: ``vllm/benchmarks/serve.py`` at commit def9ce85 (``calculate_metrics``: TPOT per request
  ``(latency - ttft) / (output_len - 1)``, ITL pooled ``itls += outputs[i].itl``, default
  ``--metric-percentiles 99``) and ``vllm/benchmarks/lib/endpoint_request_func.py`` at commit
  02cfb534 (TTFT at the first chunk with a choice, "text could be empty here").
- GenAI-Perf: triton-inference-server/perf_analyzer ``llm_profile_data_parser.py`` at commit
  f7f17bf3 (empty responses removed before TTFT; ``inter_token_latency = (req_latency_ns - ttft) /
  (total_output_token - 1)``).
"""

from __future__ import annotations

from course.facts.data import serving_published as sp


def test_mlperf_slos_are_the_loadgen_config_values():
    got = {
        (s.model, s.scenario): (s.percentile, s.ttft_seconds, s.tpot_seconds)
        for s in sp.MLPERF_SLOS
    }
    assert got == {
        ("Llama 2 70B", "Server"): (99, 2.0, 0.200),
        ("Llama 2 70B interactive", "Server"): (99, 0.450, 0.040),
        ("Llama 3.1 405B", "Server"): (99, 6.0, 0.175),
    }
    # "interactive" is a benchmark (llama2-70b-interactive) in the Server scenario, no scenario
    assert {s.scenario for s in sp.MLPERF_SLOS} <= set(sp.MLPERF_SCENARIOS)
    for s in sp.MLPERF_SLOS:
        assert "loadgen/mlperf.conf" in s.source and "b66003e10e2db4b8" in s.source


def test_vllm_ttft_counts_an_empty_first_chunk_and_genai_perf_skips_it():
    """The one place the two tools' TTFTs differ: vLLM stamps the first chunk with a choice even
    when its text is empty; GenAI-Perf removes responses without content first."""
    vllm, genai = (
        sp.METRIC_DEFINITIONS["vLLM benchmark_serving"],
        sp.METRIC_DEFINITIONS["NVIDIA GenAI-Perf"],
    )
    assert "non-empty" not in vllm["TTFT"] and "empty" in vllm["TTFT"]
    assert "empty responses skipped" in genai["TTFT"]
    assert "def9ce85" in vllm["source"] and "02cfb534" in vllm["source"]
    assert "f7f17bf3" in genai["source"]


def test_one_per_request_formula_under_three_names():
    """vLLM's TPOT, GenAI-Perf's ITL and MLPerf's TPOT are the same per-request number; vLLM's ITL
    is the pooled gaps."""
    vllm, genai = (
        sp.METRIC_DEFINITIONS["vLLM benchmark_serving"],
        sp.METRIC_DEFINITIONS["NVIDIA GenAI-Perf"],
    )
    formula = "(output tokens - 1)"
    assert (
        formula in vllm["TPOT"]
        and formula in genai["ITL"]
        and formula in sp.MLPERF_METRIC_DEFINITIONS["TPOT"]
    )
    assert "pooled" in vllm["ITL"] and "pooled" not in genai["ITL"]
    assert (
        "p99" in sp.MLPERF_METRIC_DEFINITIONS["TPOT"]
        and "logging.cc" in sp.MLPERF_METRIC_DEFINITIONS["source"]
    )


def test_published_gains_are_the_abstracts_figures():
    """Abstracts, checked 2026-11-24: Orca (OSDI 2022, usenix.org/conference/osdi22/presentation/yu)
    '36.9x throughput improvement at the same level of latency' on GPT-3 175B; DistServe
    (its abstract on the first author's page, checked 2026-11-29) 'can serve 4.48x more requests
    or 10.2x tighter SLO' (no 'up to 7.4x'); Leviathan et al.
    (arXiv:2211.17192) '2X-3X acceleration' of T5-XXL in the abstract, 3.4X in Table 2 (EnDe,
    T5-small draft). Orca's factor is the whole system's, not continuous batching's alone."""
    gains = {k.split(" (")[0].split(",")[0]: v[0] for k, v in sp.PUBLISHED_GAINS.items()}
    assert gains == {
        "iteration-level scheduling": 36.9,
        "disaggregated prefill/decode": 4.48,
        "speculative decoding": 3.4,
    }
