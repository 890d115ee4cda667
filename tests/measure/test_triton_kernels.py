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


def _sdpa_check(attention, scale: float, causal: bool) -> tuple[float, float, float]:
    """Largest output error against SDPA, largest relative log-sum-exp error and the largest
    score, for queries multiplied by ``scale``."""
    g = torch.Generator().manual_seed(11)
    q, k, v = (torch.randn(1, 1, 40, 16, generator=g) for _ in range(3))
    q = q * scale
    out, lse = attention(q, k, v, causal=causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    scores = q @ k.transpose(-1, -2) / 4.0
    if causal:
        scores = scores.masked_fill(torch.ones(40, 40, dtype=torch.bool).triu(1), float("-inf"))
    want = scores.logsumexp(-1)
    out_err = (out - ref).abs().max().item()
    lse_err = ((lse - want).abs() / want.abs().clamp(min=1.0)).max().item()
    return out_err, lse_err, scores.max().item()


@pytest.mark.parametrize("scale", [40.0, 100.0])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_stays_exact_for_huge_logits(tk, scale, causal):
    """q x 40 and q x 100 give scores of several hundred: exp(score) alone is inf in float32, so a
    kernel that does not subtract the running max returns NaN here. Subtracting it keeps every
    exponent <= 0 and the result equal to SDPA's (which subtracts the max too)."""
    tol = 1e-4 if tk._STATE.get("interpreted") else 5e-2
    out_err, lse_err, scores_max = _sdpa_check(tk.attention, scale, causal)
    assert out_err < tol and lse_err < tol, (out_err, lse_err)
    assert scores_max > 88.8  # exp overflows float32 (max 3.4e38 = e^88.7): the test can fail


def _kernel_from_source(tk, source: str, tmp_path):
    """A @triton.jit kernel built from ``source`` (Triton reads a kernel's text from its file)."""
    import importlib.util

    path = tmp_path / "mutant_kernel.py"
    path.write_text("import triton\nimport triton.language as tl\n\n" + source)
    spec = importlib.util.spec_from_file_location("mutant_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.attention_kernel


def test_without_the_running_max_huge_logits_overflow(tk, tmp_path):
    """The mutation the large-logit test exists for: the running max replaced by 0 (exp(score)
    taken as is) still matches SDPA at ordinary scores and gives NaN at q x 40."""
    source = tk.kernel_source("attention")
    line = "m_new = tl.maximum(m, tl.max(s, 1))"
    assert line in source
    mutant = _kernel_from_source(
        tk, source.replace(line, "m_new = tl.zeros((BM,), tl.float32)"), tmp_path
    )
    run = lambda q, k, v, causal: tk.attention(q, k, v, causal=causal, kernel=mutant)  # noqa: E731
    assert max(_sdpa_check(run, 1.0, True)[:2]) < 1e-4  # ordinary scores: no difference
    with np_errstate():
        out_err, _, _ = _sdpa_check(run, 40.0, True)
    assert not out_err < 1e-4  # NaN (or inf) at q x 40


def np_errstate():
    import numpy as np

    return np.errstate(over="ignore", invalid="ignore")


def test_causal_skipping_reads_only_the_blocks_at_or_below_the_diagonal(tk):
    """64 tokens in blocks of 16, one head: 4 programs; without skipping each reads all 4 key
    blocks (16), with skipping program i reads i + 1 of them (1 + 2 + 3 + 4 = 10); both equal
    SDPA. The kernel counts its own loop turns, so removing the skip fails this test."""
    work = tk.causal_work(tokens=64, block=16, heads=1)
    full, skipped = work
    assert (full.skip, skipped.skip) == (False, True)
    assert full.programs == skipped.programs == 4
    assert full.key_blocks_visited == full.key_blocks_without_skipping == 16
    assert skipped.key_blocks_visited == 10 and skipped.fraction_visited == 10 / 16
    tol = 1e-4 if tk._STATE.get("interpreted") else 5e-2
    assert full.max_abs_error < tol and skipped.max_abs_error < tol
    assert full.seconds > 0 and skipped.seconds > 0


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
