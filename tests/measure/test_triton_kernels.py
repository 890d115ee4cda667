"""course.measure.triton_kernels (lesson 11): each kernel matches torch (interpreter on CPU)."""

from __future__ import annotations

import sys

import pytest
import torch


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
