"""The CPU-or-GPU widget of lesson 10 (practice question 1): one matmul on two devices.

``cpu_or_gpu()`` returns a :class:`course.presentation.widgets.base.Calculator`. Inputs: two devices
(the H100 reference run's measured Xeon host and H100, any GPU of the registry by its datasheet, and
this machine when the lesson passes its own measurement), the dtype, the matrix size and whether the
operands start in CPU memory. Output: the time on each, what bounds it (overhead, compute, memory or
the copy), and the size from which the second device wins, from
:func:`course.calculators.overhead.two_devices`; nothing is computed here but the devices'
descriptions, read from the reference run (:func:`reference_devices`) and the registry.
"""

from __future__ import annotations

import html
from functools import cache
from types import SimpleNamespace
from typing import Any

from course.calculators import overhead
from course.facts import hardware, units
from course.facts.data import reference
from course.facts.dtypes import BYTES_PER_VALUE
from course.presentation.widgets.base import Calculator, dropdown, parse_whole, text_box

DTYPES = ("fp32", "bf16")
SIZE_LABEL = "matrix size n (n x n)"
WHERE = {"no: they are in each device's memory": False, "yes: copied over the host link": True}


def _fit(rows: list[dict], label: str) -> overhead.FixedCostFit:
    return overhead.fit_fixed_cost([SimpleNamespace(**r) for r in rows], label=label)


@cache
def reference_devices(dtype: str) -> dict[str, tuple[overhead.Device, float | None]]:
    """The H100 run's two measured devices for ``dtype`` (a fixed cost and a rate fitted to its
    matmul sweeps), each with the link its operands would cross (the GPU's best pinned
    host-to-device copy; None for the CPU)."""
    run = reference.load(reference.H100, "matmul")
    links = reference.load(reference.H100, "bandwidth")
    pinned = max(r["bytes_per_s"] for r in links["host_device"] if r["pinned"])
    out = {}
    for key, part, name in (
        ("ref-cpu", "cpu_matmul_sweep", "Xeon host CPU"),
        ("ref-gpu", "matmul_sweep", "H100 GPU"),
    ):
        label = f"{name}, {reference.label(reference.H100)} (measured)"
        device = overhead.Device.from_fit(
            _fit([r for r in run[part] if r["dtype"] == dtype], label)
        )
        out[key] = (device, pinned if key == "ref-gpu" else None)
    return out


def launch_seconds() -> float:
    """A kernel launch as the H100 run measured it (a tiny add, median of 7 x 10,000 calls)."""
    return reference.load(reference.H100, "bandwidth")["launch_overhead_tiny_add"]["median_seconds"]


def _datasheet_device(key: str, dtype: str) -> tuple[overhead.Device, float]:
    card = hardware.gpu(key)
    peak = card.dense_flop_per_s.get(dtype) or card.dense_flop_per_s["fp16"]  # V100: no bf16
    device = overhead.Device(
        f"{card.name} (datasheet)", launch_seconds(), peak, card.memory_bandwidth_bytes_per_s
    )
    return device, hardware.INTERCONNECTS[card.host_link].bandwidth_bytes_per_s


def device(
    key: str, dtype: str, copied: bool, mine: dict[str, overhead.Device] | None = None
) -> overhead.Device:
    """The menu's device ``key`` for ``dtype``, with its host link when operands are ``copied``."""
    if key == "mine":
        return (mine or {})[dtype]
    found = reference_devices(dtype).get(key) or _datasheet_device(key, dtype)
    d, link = found
    if copied and link is not None:
        return overhead.Device(
            d.label, d.fixed_seconds, d.flop_per_s, d.bandwidth_bytes_per_s, link
        )
    return d


def _device_options(mine: bool) -> list[tuple[str, str]]:
    options = [("this machine (measured now)", "mine")] if mine else []
    options += [
        ("Xeon host CPU of the H100 reference run (measured)", "ref-cpu"),
        ("H100 GPU of the reference run (measured)", "ref-gpu"),
    ]
    return options + [(f"{g.name} (datasheet)", k) for k, g in hardware.GPUS.items()]


def _compute(mine: dict[str, overhead.Device] | None):
    def two(v: dict[str, Any]) -> overhead.TwoDevices:
        size = parse_whole(SIZE_LABEL, v["size"], minimum=1, maximum=overhead.MAX_SIZE)
        copied = WHERE[v["copied"]]
        a, b = (device(v[k], v["dtype"], copied, mine) for k in ("a", "b"))
        return overhead.two_devices(a, b, size, bytes_per_element=BYTES_PER_VALUE[v["dtype"]])

    return two


def _html(r: overhead.TwoDevices, _v: dict[str, Any]) -> str:
    a, b = html.escape(r.device_a), html.escape(r.device_b)
    if r.crossover_size is None:
        cross = f"the second device never wins up to n = {overhead.MAX_SIZE:,}"
    else:
        cross = f"the second device wins from about <b>n = {r.crossover_size:,}</b>"
    return (
        f"<p>One {r.size:,} x {r.size:,} matmul: <b>{units.fmt_seconds(r.seconds_a)}</b> on {a} "
        f"({r.bound_a}-bound), <b>{units.fmt_seconds(r.seconds_b)}</b> on {b} "
        f"({r.bound_b}-bound): faster on <b>{html.escape(r.faster)}</b>; {cross}.</p>"
        + r._repr_html_()
    )


def cpu_or_gpu(
    a: str = "ref-cpu",
    b: str = "ref-gpu",
    dtype: str = "bf16",
    size: str = "1024",
    copied: bool = False,
    mine: dict[str, overhead.Device] | None = None,
) -> Calculator:
    """One matmul on two devices: time, bound, and the size from which the second wins.

    ``mine`` (dtype -> :class:`course.calculators.overhead.Device`) adds this machine, measured by
    the lesson, to both menus (then its dtypes must be :data:`DTYPES`). Defaults: the H100 reference
    run's own host CPU against its GPU, bf16, n = 1,024, operands already on each device.
    """
    if mine is not None and set(mine) != set(DTYPES):
        raise ValueError(f"mine must give a Device for each of {DTYPES}, got {sorted(mine)}")
    options = _device_options(mine is not None)
    controls = {
        "a": dropdown("first device", options, a),
        "b": dropdown("second device", options, b),
        "dtype": dropdown("dtype", DTYPES, dtype),
        "size": text_box(SIZE_LABEL, size),
        "copied": dropdown(
            "operands start in CPU memory",
            list(WHERE),
            [k for k, v in WHERE.items() if v == copied][0],
        ),
    }
    return Calculator("CPU or GPU?", controls, _compute(mine), {"size": SIZE_LABEL}, render=_html)


__all__ = ["DTYPES", "cpu_or_gpu", "device", "launch_seconds", "reference_devices"]
