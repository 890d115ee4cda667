"""The occupancy calculator of lesson 11: compute capability, threads per block, registers per
thread and shared memory per block -> resident blocks and warps per SM, and what limits them.

It calls ``course.calculators.occupancy.occupancy`` and computes nothing itself.
"""

from __future__ import annotations

import html
from typing import Any

from course.calculators import occupancy as occ
from course.facts import cuda_limits, units
from course.presentation.widgets.base import Calculator, dropdown, parse_whole, text_box

LABELS = {
    "threads per block": "threads per block",
    "registers per thread": "registers per thread",
    "shared memory per block (bytes)": "shared memory per block (bytes)",
}


def occupancy_of(v: dict[str, Any]) -> occ.Occupancy:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    threads = parse_whole("threads per block", v["threads"])
    regs = parse_whole("registers per thread", v["registers"])
    smem = parse_whole("shared memory per block (bytes)", v["shared_memory"])
    return occ.occupancy(threads, regs, smem, compute_capability=v["cc"])


def _occupancy_html(r: occ.Occupancy, v: dict[str, Any]) -> str:
    lim = cuda_limits.limits(v["cc"])
    limits = {
        "blocks per SM": r.blocks_limit_by_blocks,
        "threads (warps) per SM": r.blocks_limit_by_warps,
        "registers": r.blocks_limit_by_registers,
        "shared memory": r.blocks_limit_by_smem,
    }
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td style='text-align:right'>{n:,}</td>"
        f"<td>{'&larr; binds' if name == r.limited_by else ''}</td></tr>"
        for name, n in limits.items()
    )
    return (
        f"<p>On compute capability {lim.label} ({html.escape(lim.example_gpus)}): "
        f"<b>{r.resident_blocks}</b> blocks of {r.warps_per_block} warps fit one SM, "
        f"<b>{r.resident_warps}</b> of {r.max_warps} warps = <b>{100 * r.occupancy_fraction:.0f} %"
        f"</b> occupancy, limited by <b>{html.escape(r.limited_by)}</b>. The SM has "
        f"{lim.registers_per_sm:,} registers and "
        f"{units.fmt_bytes(lim.shared_memory_per_sm_bytes, binary=True)} of shared memory.</p>"
        f"<table><tr><th>resource</th><th>blocks it allows</th><th></th></tr>{rows}</table>"
    )


def occupancy_calculator(
    cc: str = "9.0", threads: str = "256", registers: str = "64", shared_memory: str = "0"
) -> Calculator:
    """Compute capability and a kernel's resources -> occupancy and the limiting resource."""
    options = [
        (f"{row.label} ({row.example_gpus})", row.label) for row in cuda_limits.LIMITS.values()
    ]
    controls = {
        "cc": dropdown("compute capability", options, cuda_limits.limits(cc).label),
        "threads": text_box("threads per block", threads),
        "registers": text_box("registers per thread", registers),
        "shared_memory": text_box("shared memory per block (bytes)", shared_memory),
    }
    return Calculator(
        "Occupancy of one SM", controls, occupancy_of, labels=LABELS, render=_occupancy_html
    )
