"""The Tensor Cores against CUDA cores widget of lesson 10 (practice question 2).

``tensor_vs_cuda_cores()`` returns a :class:`course.presentation.widgets.base.Calculator`. Inputs: a
GPU, a precision (the menu offers only those the GPU has a path for) and the shape of a matmul.
Output: the dense and sparse Tensor Core peaks against the CUDA-core peak, and the roofline floor of
the matmul on each path, from :func:`course.calculators.compute.core_paths`; nothing is computed
here.
"""

from __future__ import annotations

import html
from typing import Any

from course.calculators import compute
from course.facts import units
from course.presentation.widgets.base import (
    Calculator,
    gpu_and_dependent,
    parse_whole,
    text_box,
)

#: Largest matrix side the boxes accept (the calculator's limit).
MAX_SIDE = 10**9


def core_paths(v: dict[str, Any]) -> compute.CorePaths:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    m, n, k = (
        parse_whole(label, v[key], minimum=1, maximum=MAX_SIDE)
        for key, label in (
            ("m", "rows of A (m)"),
            ("n", "columns of B (n)"),
            ("k", "inner size (k)"),
        )
    )
    return compute.core_paths(v["gpu"], v["precision"], m, n, k)


def _speed(value: float | None) -> str:
    return "none" if value is None else units.fmt_flop_rate(value)


def _cores_html(r: compute.CorePaths, _v: dict[str, Any]) -> str:
    if r.tensor_core_seconds is None:
        tensor = (
            f"{r.precision} has no Tensor Core path on the {html.escape(r.gpu)} (an FP32 "
            "matmul uses Tensor Cores only as TF32, when the framework allows it)"
        )
    else:
        tensor = (
            f"Tensor Cores: <b>{_speed(r.tensor_core_dense_flop_per_s)}</b> dense, "
            f"{_speed(r.tensor_core_sparse_flop_per_s)} with 2:4 sparsity: "
            f"<b>{r.tensor_over_cuda:,.1f}x</b> the CUDA cores; the matmul takes at least "
            f"<b>{units.fmt_seconds(r.tensor_core_seconds)}</b> ({r.tensor_core_bound}-bound)"
        )
    return (
        f"<p>{tensor}.</p><p>CUDA cores: {_speed(r.cuda_core_flop_per_s)}; the same matmul "
        f"({units.fmt_flops(r.matmul_flops)}, {units.fmt_bytes(r.matmul_bytes)} moved) takes at "
        f"least <b>{units.fmt_seconds(r.cuda_core_seconds)}</b> ({r.cuda_core_bound}-bound).</p>"
        + r._repr_html_()
    )


def tensor_vs_cuda_cores(
    gpu: str = "h100-sxm",
    precision: str = "bf16",
    m: str = "4096",
    n: str = "4096",
    k: str = "4096",
) -> Calculator:
    """A GPU and a precision: Tensor Core peaks (dense, sparse) against CUDA cores, and a matmul's
    floor on each path. The precision menu follows the GPU (no fp8 on an A100, no fp64 on an L40S).
    """
    gpu_box, precision_box = gpu_and_dependent(gpu, "precision", precision, compute.precisions_on)
    controls = {
        "gpu": gpu_box,
        "precision": precision_box,
        "m": text_box("rows of A (m)", m),
        "n": text_box("columns of B (n)", n),
        "k": text_box("inner size (k)", k),
    }
    return Calculator(
        "Tensor Cores against CUDA cores",
        controls,
        core_paths,
        {"m": "rows of A (m)", "n": "columns of B (n)", "k": "inner size (k)"},
        render=_cores_html,
    )


__all__ = ["core_paths", "tensor_vs_cuda_cores"]
