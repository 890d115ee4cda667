"""The Triton launch log and the interpreter's bounds guard (``course.measure.triton_guard``):
an unmasked kernel raises instead of writing past a tensor (which crashed notebooks), a padded
buffer shows what it touches, and a kernel answer is told from plain torch."""

from __future__ import annotations

import pytest
import torch

from course.measure import triton_guard


@pytest.fixture(scope="module")
def tk():
    from course.measure import triton_kernels

    if not triton_kernels.available():
        pytest.skip(triton_kernels.setup())
    return triton_kernels


@pytest.fixture(scope="module")
def unmasked(tk):
    """out = 2 * x with neither load nor store masked: the mistake a learner makes."""
    triton, tl = tk.modules()

    @triton.jit
    def double_unmasked(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offsets, 2 * tl.load(x_ptr + offsets))

    return double_unmasked


def test_an_unmasked_kernel_raises_instead_of_writing_past_the_end(tk, unmasked):
    if not tk._STATE.get("interpreted"):
        pytest.skip("the guard checks the interpreter's loads and stores")
    x = torch.arange(1000.0)
    out = torch.zeros(1000)
    # 8 programs of 128 lanes: the last one has 24 lanes past element 999 of both tensors
    with pytest.raises(Exception, match="24 live lanes of program \\(7, 0, 0\\).*element 1000"):
        unmasked[(8,)](x, out, BLOCK=128)
    assert torch.equal(out[:896], 2 * x[:896])  # programs 0-6 ran; the guard stopped program 7


def test_a_padded_buffer_shows_the_writes_past_n(tk, unmasked):
    n, block = 1000, 128
    x_pad = torch.cat([torch.arange(float(n)), torch.full((block,), -1.0)])
    out_pad = torch.full((n + block,), float("nan"))
    unmasked[(-(-n // block),)](x_pad[:n], out_pad[:n], BLOCK=block)
    assert torch.equal(out_pad[:n], 2 * x_pad[:n])
    written = ~out_pad[n:].isnan()
    assert int(written.sum()) == 8 * block - n  # 24 lanes of the last program went past n
    assert torch.equal(out_pad[n:][written], torch.full((24,), -2.0))  # from the reads past n


def test_the_course_kernels_stay_inside_their_tensors(tk):
    assert all(c.matches for c in tk.check_all(seed=1))


def test_the_launch_log_records_kernel_grid_and_tensors(tk):
    x = torch.ones(300)
    with triton_guard.record() as log:
        out = tk.vector_add(x, x, block=128)
    [launch] = log
    assert (launch.kernel, launch.grid, launch.programs) == ("add_kernel", (3,), 3)
    assert out.untyped_storage().data_ptr() in {t[1] for t in launch.tensors}


def test_kernel_result_tells_a_triton_kernel_from_plain_torch(tk):
    x = torch.arange(300.0)
    add = tk.kernel("add")

    def beside(v):  # a Triton kernel runs, but torch computes what is returned
        add[(3,)](v, v, torch.empty_like(v), v.numel(), BLOCK=128)
        return 2 * v

    values, programs, stored = triton_guard.kernel_result(lambda v: tk.vector_add(v, v), x)
    assert values == (2 * x).tolist() and (programs, stored) == (3, True)
    assert triton_guard.kernel_result(lambda v: 2 * v, x) == [(2 * x).tolist(), 0, False]
    assert triton_guard.kernel_result(beside, x)[1:] == [0, False]


def test_stored_lanes_counts_what_each_launch_wrote_into_the_output(tk):
    triton, tl = tk.modules()
    add = tk.kernel("add")

    @triton.jit
    def nothing(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pass

    x = torch.arange(300.0)
    out = 2 * x  # torch's result, then a launch on it that stores nothing
    with triton_guard.record() as log:
        nothing[(3,)](x, out, 300, BLOCK=128)
        add[(2,)](x, x, out, 300, BLOCK=128)  # two programs of 128: 256 of the 300 elements
        add[(3,)](x, x, out, 300, BLOCK=128)  # all 300, 44 of them not stored before
    assert triton_guard.stored_lanes(out, log) == [0, 256, 44]
    assert torch.equal(out, 2 * x)  # left as it was
    assert triton_guard.kernel_result(lambda v: _launched(nothing, v), x)[1:] == [3, False]


def _launched(kernel, v):
    out = 2 * v
    kernel[(3,)](v, out, v.numel(), BLOCK=128)
    return out


def test_install_is_idempotent(tk):
    triton, _ = tk.modules()
    first = triton_guard.install(triton)
    assert triton_guard.install(triton) == first and "launch log on" in first


def test_an_atomic_past_the_end_raises_too(tk):
    if not tk._STATE.get("interpreted"):
        pytest.skip("the guard checks the interpreter's atomics")
    triton, tl = tk.modules()

    @triton.jit
    def count_unmasked(out_ptr, BLOCK: tl.constexpr):
        tl.atomic_add(out_ptr + tl.arange(0, BLOCK), 1.0)

    out = torch.zeros(100)
    with pytest.raises(Exception, match="atomic outside the kernel's tensors: 28 live lanes"):
        count_unmasked[(1,)](out, BLOCK=128)
    assert not out.any()  # nothing was changed
