"""Lesson 11's measurements (Triton kernels, profiler, stride sweep, topology) and its findings.

Measurements are checked for properties (results match torch, records well formed, files
written), never for speed; every branch of the findings is driven by synthetic records.
"""

from __future__ import annotations

import json
import math
import sys
from types import SimpleNamespace

import pytest
import torch

from course.facts.data import reference
from course.measure import profiling, strides, topology
from course.presentation.findings import gpu_inside

# --- Triton kernels (the interpreter on CPU) -----------------------------------------------


@pytest.fixture(scope="module")
def tk():
    from course.measure import triton_kernels

    if not triton_kernels.available():
        pytest.skip(triton_kernels.setup())
    return triton_kernels


def test_every_triton_kernel_matches_torch(tk):
    checks = tk.check_all(seed=1)
    assert [c.kernel for c in checks] == [
        "vector add",
        "rmsnorm (fused)",
        "row max",
        "matmul (tiled)",
        "attention (online softmax)",
    ]
    assert all(c.matches for c in checks), checks


def test_the_tiled_matmul_keeps_float32_precision_on_the_interpreter(tk):
    """The kernel accumulates float32 tiles in float32: on the interpreter its error against torch
    is about 1e-5; rounding the inputs to float16 (a 10-bit mantissa) makes it about 1e-2, which
    this bound and check_all's tolerance both refuse."""
    if not tk._STATE.get("interpreted"):
        pytest.skip("compiled on a GPU: tl.dot uses TF32 tensor cores there")
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(70, 50, generator=g), torch.randn(50, 40, generator=g)
    err = (tk.matmul(a, b) - a @ b).abs().max().item()
    assert err < 1e-4 == tk.matmul_tolerance()
    rounded = (a.half().float() @ b.half().float() - a @ b).abs().max().item()
    assert rounded > 10 * tk.matmul_tolerance()  # what the bound guards against


@pytest.mark.parametrize("causal", [False, True])
def test_online_softmax_attention_equals_sdpa_and_gives_the_log_sum_exp(tk, causal):
    """FlashAttention's forward pass on the interpreter: 37 queries (a partial last block of 16),
    the output of scaled_dot_product_attention and each query's log-sum-exp of scaled scores."""
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, 3, 37, 16, generator=g) for _ in range(3))
    out, lse = tk.attention(q, k, v, causal=causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    tol = 1e-4 if tk._STATE.get("interpreted") else 5e-2
    assert (out - ref).abs().max().item() < tol
    scores = q @ k.transpose(-1, -2) / 4.0  # 1 / sqrt(16)
    if causal:
        scores = scores.masked_fill(torch.ones(37, 37, dtype=torch.bool).triu(1), float("-inf"))
    assert (lse - scores.logsumexp(-1)).abs().max().item() < tol
    with pytest.raises(ValueError, match="head_dim must be a power of two"):
        tk.attention(q[..., :12], k[..., :12], v[..., :12])
    source = tk.kernel_source("attention")
    assert source.startswith("@triton.jit") and "rescale" in source


def test_vector_add_masks_a_partial_last_block(tk):
    x, y = torch.arange(130.0), torch.ones(130)
    assert torch.equal(tk.vector_add(x, y, block=64), x + y)  # 3 programs, the last with 2 lanes


def test_a_kernel_checker_can_fail(tk):
    bad = tk.check("x", torch.zeros(3), torch.ones(3), 0.5)
    assert not bad.matches and bad.max_abs_error == 1.0


def test_setup_reports_missing_triton(monkeypatch):
    from course.measure import triton_kernels

    monkeypatch.setattr(triton_kernels, "_STATE", {})
    monkeypatch.setitem(sys.modules, "triton", None)  # import fails as on macOS
    status = triton_kernels.setup("cpu")
    assert "not available" in status and not triton_kernels.available()
    with pytest.raises(RuntimeError, match="not available"):
        triton_kernels.vector_add(torch.zeros(2), torch.zeros(2))


# --- profiler ------------------------------------------------------------------------------


def test_profile_writes_a_trace_with_phases_timeline_and_memory(tmp_path):
    r = profiling.profile_training_step(steps=1, trace_dir=tmp_path)
    assert r.trace_path.parent == tmp_path and r.trace_path.stat().st_size > 0
    json.loads(r.trace_path.read_text())  # a valid Chrome trace
    assert set(profiling.PHASES) - {"logging"} <= set(r.phase_us)
    assert r.top_ops and all(o.self_us >= 0 and o.calls >= 1 for o in r.top_ops)
    assert {e["name"] for e in r.timeline if e["depth"] == 0} >= {"forward", "backward"}
    assert r.memory and max(p["allocated_bytes"] for p in r.memory) > 0


def test_slow_step_shows_thousands_of_tiny_calls_in_the_profile():
    r = profiling.profile_training_step(steps=1, logging="python", memory=False, export=False)
    calls = {o.name: o.calls for o in r.top_ops}
    assert calls.get("aten::select", 0) >= 64 * 256  # one per element of the embedding gradient
    assert r.trace_path is None and "logging" in r.phase_us


def test_slow_and_fixed_log_the_same_value():
    slow, fast = profiling.slow_and_fixed()
    paired = profiling.paired_times(slow, fast, repeats=3)
    assert len(paired.ratios) == 3 and all(x > 0 for x in paired.ratios)
    assert paired.low_ratio <= paired.median_ratio <= paired.high_ratio


def test_timeline_from_a_synthetic_trace_nests_by_time():
    events = [
        {"ph": "X", "name": "train_step", "ts": 0, "dur": 100},
        {"ph": "X", "name": "forward", "ts": 1, "dur": 50},
        {"ph": "X", "name": "aten::mm", "ts": 2, "dur": 10},
        {"ph": "X", "name": "aten::t", "ts": 3, "dur": 1},
        {"ph": "X", "name": "backward", "ts": 60, "dur": 30},
        {"ph": "i", "name": "[memory]", "ts": 5, "args": {"Total Allocated": 10}},
    ]
    tl = profiling.timeline_from_trace(events)
    assert [(e["name"], e["depth"]) for e in tl] == [
        ("forward", 0),
        ("aten::mm", 1),
        ("backward", 0),
    ]
    assert profiling.memory_from_trace(events) == [{"time_us": 0, "allocated_bytes": 10}]


# --- stride sweep and topology --------------------------------------------------------------


def test_stride_sweep_records_are_well_formed():
    sweep = strides.stride_sweep((1, 4, 32), buffer_bytes=2 * 2**20, budget_seconds=1.0)
    assert sweep.records
    for r in sweep.records:
        assert r.useful_bytes_per_s > 0 and math.isfinite(r.seconds)
        assert r.line_bytes_moved >= r.useful_bytes
        assert 0 < r.predicted_efficiency <= 1


def test_cpu_list_and_sys_parsing(tmp_path):
    assert topology.cpu_list("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    node = tmp_path / "node" / "node1"
    node.mkdir(parents=True)
    (node / "cpulist").write_text("4-7\n")
    (node / "meminfo").write_text("Node 1 MemTotal:       1024 kB\n")
    assert topology.numa_nodes(tmp_path) == [topology.NumaNode(1, [4, 5, 6, 7], 1024 * 1024)]
    assert topology.numa_nodes(tmp_path / "absent") == []


def test_reference_topology_and_smi_summary_parse():
    machine = reference.load(reference.H100, "machine")
    rows = topology.parse_topo(machine["nvidia_smi_topo"])
    assert [(r.device, r.cpu_affinity, r.numa_affinity) for r in rows] == [("GPU0", "0-15", "0")]
    smi = topology.parse_smi_summary(machine["nvidia_smi"])
    assert smi["power_cap"] == "700W" and smi["volatile_uncorrected_ecc"] == "0"
    assert smi["mig_mode"] == "Disabled" and smi["performance_state"] == "P0"


def test_eight_gpu_topology_matrix_parses():
    text = (
        "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
        "GPU0\t X \tNV18\tPXB\t0-55\t0\t\tN/A\n"
        "GPU1\tNV18\t X \tSYS\t56-111\t1\t\tN/A\n"
        "NIC0\tPXB\tSYS\t X \n\nLegend:\n"
    )
    rows = topology.parse_topo(text)
    assert rows[1].links == {"GPU0": "NV18", "GPU1": "X", "NIC0": "SYS"}
    assert rows[1].numa_affinity == "1" and rows[2].device == "NIC0"


# --- findings: every branch -----------------------------------------------------------------


def _stride(s, useful, pred, spread=0.0):
    return {
        "stride_elements": s,
        "useful_bytes_per_s": useful,
        "predicted_efficiency": pred,
        "seconds": 1.0,
        "spread_seconds": spread,
        "line_bytes": 64,
        "element_bytes": 4,
    }


@pytest.mark.parametrize(
    "last, expected",
    [
        (_stride(32, 0.08, 0.0625), "agree within 2×"),
        (_stride(32, 0.5, 0.0625), "better than"),
        (_stride(32, 0.01, 0.0625), "worse than"),
        (_stride(32, 0.08, 0.0625, 0.9), "rerun"),
    ],
)
def test_stride_finding_branches(last, expected):
    assert expected in gpu_inside.stride_vs_prediction([_stride(1, 1.0, 1.0), last])


def test_stride_finding_missing():
    assert gpu_inside.stride_vs_prediction([]) == gpu_inside.MISSING
    assert gpu_inside.stride_vs_prediction([_stride(4, 1, 1)]) == gpu_inside.MISSING


def _paired(ratios):
    import statistics

    q = statistics.quantiles(ratios, n=4)
    return SimpleNamespace(
        ratios=ratios, median_ratio=statistics.median(ratios), low_ratio=q[0], high_ratio=q[2]
    )


@pytest.mark.parametrize(
    "ratios, expected",
    [
        ([3.0, 3.1, 2.9, 3.2, 3.0], "faster"),
        ([0.5, 0.4, 0.5, 0.45, 0.5], "slower"),
        ([1.0, 1.01, 0.99, 1.02, 1.0], "No difference"),
        ([0.6, 1.8, 1.0, 0.7, 1.6], "Noise wins"),
    ],
)
def test_fix_speedup_branches(ratios, expected):
    assert expected in gpu_inside.fix_speedup(_paired(ratios))


def test_fix_speedup_missing():
    assert gpu_inside.fix_speedup(None) == gpu_inside.MISSING


def test_kernel_and_phase_findings():
    ok = SimpleNamespace(kernel="vector add", matches=True, max_abs_error=0.0, mode="interpreter")
    bad = SimpleNamespace(kernel="row max", matches=False, max_abs_error=1.0, mode="interpreter")
    assert "All 1 kernels matched" in gpu_inside.kernel_checks([ok])
    assert "row max" in gpu_inside.kernel_checks([ok, bad])
    assert "not run here: no triton" in gpu_inside.kernel_checks([], "no triton")
    text = gpu_inside.top_phase({"forward": 10.0, "logging": 300.0, "backward": 20.0})
    assert "**logging**" in text and "91%" in text
    assert gpu_inside.top_phase({}) == gpu_inside.MISSING
