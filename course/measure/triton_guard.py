"""What a Triton kernel launch touches: a launch log, and a bounds guard for the interpreter
(lesson 11, exercise set 11).

On a GPU a store past the end of a tensor silently overwrites whatever memory follows it;
``compute-sanitizer`` finds it afterwards. Triton's interpreter (``TRITON_INTERPRET=1``) does
the same on the CPU: its loads and stores go to raw addresses, so a kernel without its mask reads
and writes past the end of a torch tensor. The sum may come out right, but the write corrupts the
allocator's bookkeeping and the process dies later, at some free (a notebook's "kernel appears to
have died", losing every later cell).

:func:`install` (called by ``triton_kernels.setup``) wraps two places of Triton:

- the interpreter's loads, stores and atomics (``InterpreterBuilder.create_masked_load``/
  ``_store``, which every ``tl.load``/``tl.store`` reaches, and ``create_atomic_rmw``/``_cas``):
  before any memory is touched, each address a live lane uses must lie inside the storage of one
  of the launch's tensor arguments, else :class:`OutOfBounds` is raised naming the argument and
  the program, and nothing is written;
- ``kernel[grid]`` (``KernelInterface.__getitem__``, interpreter and GPU alike): inside
  :func:`record`, each launch is logged with its kernel, grid and tensor arguments (and a way to
  run it again), so a check can tell a Triton kernel launched over a grid from plain torch
  (:func:`kernel_result`).

A launch that *received* the output proves nothing: a kernel whose body is ``pass``, or one that
stores back what torch already put there, is launched on the output too. :func:`stored_lanes`
records what each launch stored: it runs the launches again on the output filled with one poison,
then with another, and an element a launch stored holds the same value in both runs (an element
it left alone, or copied from the output itself, still differs). Interpreter and GPU alike.

Nothing is wrapped twice; where this Triton lacks those places, :func:`install` says so and the
guard is off. Triton is never imported here: the modules come from ``triton_kernels``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_STATE: dict[str, Any] = {"ranges": [], "log": None}


class OutOfBounds(IndexError):
    """A load or store of a live lane outside every tensor the kernel was launched with."""


@dataclass(frozen=True)
class Launch:
    """One ``kernel[grid](...)``: the kernel's name, its grid, and the tensors it was given
    (``(name, data_ptr of the storage, storage bytes)``)."""

    kernel: str
    grid: tuple[int, ...]
    tensors: tuple[tuple[str, int, int], ...] = field(default=())
    rerun: Callable[[], object] | None = field(default=None, repr=False, compare=False)

    @property
    def programs(self) -> int:
        """Programs the grid launches (the product of its dimensions)."""
        total = 1
        for g in self.grid:
            total *= g
        return total


def _tensor_ranges(names: list[str], values: list) -> list[tuple[str, int, int]]:
    """``(name, start address, end address)`` of each tensor argument's storage (tuples too)."""
    ranges = []
    for name, value in zip(names, values, strict=False):
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            base = getattr(item, "base", item)  # a TensorWrapper (a reinterpreted dtype)
            storage = getattr(base, "untyped_storage", None)
            if storage is None:
                continue
            s = storage()
            ranges.append((name, s.data_ptr(), s.data_ptr() + s.nbytes()))
    return ranges


class _AllLanes:
    """The mask of an access every lane makes (an atomic compare-and-swap has none)."""

    data = True


def _check(builder, ptrs, mask, verb: str) -> None:
    """Raise :class:`OutOfBounds` if a live lane's address falls outside every tensor."""
    import numpy as np

    ranges = _STATE["ranges"]
    if not ranges:
        return
    addresses = np.asarray(ptrs.data, dtype=np.uint64)
    live = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
    used = addresses[live]
    if used.size == 0:
        return
    size = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    inside = np.zeros(used.shape, dtype=bool)
    for _, start, end in ranges:
        inside |= (used >= start) & (used + size <= end)
    if inside.all():
        return
    bad = int((~inside).sum())
    first = int(used[~inside][0])
    name, start, end = min(ranges, key=lambda r: min(abs(first - r[1]), abs(first - r[2])))
    index = (first - start) // size if first >= start else -((start - first) // size)
    program = tuple(int(i) for i in getattr(builder, "grid_idx", ()) or ())
    done = {"load": "read", "store": "written"}.get(verb, "changed")
    raise OutOfBounds(
        f"{verb} outside the kernel's tensors: {bad} live lanes of program {program} "
        f"(the first at element {index} of {name}, which holds {(end - start) // size}). "
        f"Nothing was {done}: a mask (offsets < n) "
        "switches off the lanes past the end; on a GPU this access would go unnoticed."
    )


def install(triton) -> str:
    """Wrap the interpreter's loads, stores, atomics and ``kernel[grid]`` (once); a status line."""
    if _STATE.get("installed"):
        return _STATE["installed"]
    jit = getattr(getattr(triton, "runtime", None), "jit", None)
    interface = getattr(jit, "KernelInterface", None)
    if interface is None:
        _STATE["installed"] = "launch log off (no triton.runtime.jit.KernelInterface)"
        return _STATE["installed"]
    launch = interface.__getitem__

    def getitem(self, grid):
        run = launch(self, grid)

        def logged(*args, **kwargs):
            if _STATE["log"] is not None:
                launch = _describe(self, grid, args, kwargs)
                rerun = functools.partial(run, *args, **kwargs)
                _STATE["log"].append(dataclasses.replace(launch, rerun=rerun))
            return run(*args, **kwargs)

        return logged

    interface.__getitem__ = getitem
    status = "launch log on"
    interp = _interpreter_module()
    builder = getattr(interp, "InterpreterBuilder", None)
    executor = getattr(interp, "GridExecutor", None)
    names = ("create_masked_load", "create_masked_store")
    if builder is None or executor is None or not all(hasattr(builder, n) for n in names):
        _STATE["installed"] = status + "; bounds guard off (this Triton's interpreter differs)"
        return _STATE["installed"]
    load, store, init = builder.create_masked_load, builder.create_masked_store, None
    init = executor._init_args_hst

    def masked_load(self, ptrs, mask, *rest):
        _check(self, ptrs, mask, "load")
        return load(self, ptrs, mask, *rest)

    def masked_store(self, ptrs, value, mask, *rest):
        _check(self, ptrs, mask, "store")
        return store(self, ptrs, value, mask, *rest)

    def init_args(self, args, kwargs):
        args_hst, kwargs_hst = init(self, args, kwargs)
        _STATE["ranges"] = _tensor_ranges(self.arg_names, args_hst) + _tensor_ranges(
            list(kwargs_hst), list(kwargs_hst.values())
        )
        return args_hst, kwargs_hst

    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store
    rmw, cas = (
        getattr(builder, "create_atomic_rmw", None),
        getattr(builder, "create_atomic_cas", None),
    )
    if rmw is not None:

        def atomic_rmw(self, op, ptr, val, mask, *rest):
            _check(self, ptr, mask, "atomic")
            return rmw(self, op, ptr, val, mask, *rest)

        builder.create_atomic_rmw = atomic_rmw
    if cas is not None:

        def atomic_cas(self, ptr, *rest):
            _check(self, ptr, _AllLanes(), "atomic")
            return cas(self, ptr, *rest)

        builder.create_atomic_cas = atomic_cas
    executor._init_args_hst = init_args
    _STATE["installed"] = status + "; bounds guard on (interpreter loads and stores)"
    return _STATE["installed"]


def _interpreter_module():
    import sys

    return sys.modules.get("triton.runtime.interpreter")


def _describe(kernel, grid, args, kwargs) -> Launch:
    fn = getattr(kernel, "fn", kernel)
    name = getattr(fn, "__name__", type(kernel).__name__)
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = dict(enumerate(args)) | kwargs
    resolved = grid(dict(bound)) if callable(grid) else grid
    shape = tuple(int(g) for g in resolved)
    ranges = _tensor_ranges([str(k) for k in bound], list(bound.values()))
    return Launch(name, shape, tuple(ranges))


@contextlib.contextmanager
def record() -> Iterator[list[Launch]]:
    """Log every ``kernel[grid](...)`` launched inside the ``with`` block (after
    :func:`install`)."""
    previous, log = _STATE["log"], []
    _STATE["log"] = log
    try:
        yield log
    finally:
        _STATE["log"] = previous


def _same(a, b):
    """Elementwise: ``a`` and ``b`` hold the same value (NaN equals NaN)."""
    if a.is_floating_point() or a.is_complex():
        return (a == b) | (a.isnan() & b.isnan())
    return a == b


def _replay(out, launches: list[Launch]):
    """Run ``launches`` again on ``out`` filled with 0, then with 1: the elements settled after
    each launch (the same in both runs), and the values after the last. ``out`` is restored."""
    original = out.clone()
    runs = []
    try:
        for poison in (0, 1):
            out.fill_(poison)
            after = []
            for launch in launches:
                if launch.rerun is None:
                    raise ValueError(
                        f"the launch of {launch.kernel} was logged without its arguments"
                    )
                launch.rerun()
                after.append(out.clone())
            runs.append(after)
    finally:
        out.copy_(original)
    return [_same(a, b) for a, b in zip(*runs, strict=True)], runs[0][-1]


def stored_lanes(out, launches: list[Launch]) -> list[int]:
    """How many elements of ``out`` each launch stored (in order), observed by running the
    launches again on ``out`` filled with 0 and then with 1: an element a launch stored holds the
    same value after it in both runs. A kernel whose body is ``pass`` stores none, and so does
    one that loads the output and stores it back. ``out`` is left as it was."""
    if not launches:
        return []
    settled, _ = _replay(out, launches)
    lanes, before = [], settled[0].new_zeros(settled[0].shape)
    for now in settled:
        lanes.append(int((now & ~before).sum()))
        before = before | now
    return lanes


def kernel_result(fn: Callable, *args) -> list:
    """``[fn(*args) as a list, programs, stored]``: the result; the Triton programs launched
    with the result's memory among their tensors; and whether those launches, run again on a
    poisoned result (:func:`stored_lanes`), store every element of it with the value returned.
    Plain torch gives 0 and False; torch's result under a kernel that stores nothing of its own
    gives its programs and False. What exercise set 11 checks a kernel answer by, called by
    absolute import (a rebound or patched name in the notebook is never the check): a Triton
    kernel, launched over a grid, that writes every element of the result."""
    with record() as log:
        out = fn(*args)
    values = out.tolist() if hasattr(out, "tolist") else out
    storage = getattr(out, "untyped_storage", None)
    start = storage().data_ptr() if storage else None
    launches = [launch for launch in log if any(t[1] == start for t in launch.tensors)]
    if not launches:
        return [values, 0, False]
    settled, last = _replay(out, launches)
    stored = int((settled[-1] & _same(last, out)).sum()) == out.numel()
    return [values, sum(launch.programs for launch in launches), stored]


__all__ = ["Launch", "OutOfBounds", "install", "kernel_result", "record", "stored_lanes"]
