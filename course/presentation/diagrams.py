"""Diagrams of the machine, drawn by code: a GPU's anatomy, the memory pyramid, the software stack.

Every number drawn comes from ``course/facts/hardware/`` (``GPUS``, ``ANATOMY``, ``INTERCONNECTS``,
``SYSTEMS``), each with its source there; ``anatomy_numbers`` and ``pyramid_levels`` return the
figures a diagram shows, so a test can compare the text on the figure with the registry.
Lesson 00 shows the software stack; lessons 01 and 02 the anatomy and the pyramid.
Matplotlib only, in the style of ``course/presentation/plots/``.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Polygon, Rectangle
from matplotlib.text import Text

from course.facts import hardware, units
from course.presentation.plots import PALETTE

_BLUE, _ORANGE, _GREEN, _RED, _PINK, _SKY = PALETTE[:6]


def _trim(text: str) -> str:
    """'80.00 GiB' -> '80 GiB', '3.35 TB/s' stays: no trailing zeros after the decimal point."""
    number, _, unit = text.partition(" ")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return f"{number} {unit}"


def _size(n_bytes: float) -> str:
    """Bytes in binary units, as the hardware has them (256 KiB, 50 MiB, 80 GiB)."""
    return _trim(units.fmt_bytes(n_bytes, binary=True, digits=2))


def _rate(bytes_per_s: float) -> str:
    """Bytes/s in decimal units, as datasheets quote them (3.35 TB/s, 63 GB/s)."""
    return _trim(units.fmt_bandwidth(bytes_per_s, digits=2))


def _box(ax, x, y, w, h, colour, *, alpha=0.25, text=None, size=9, weight="normal"):
    ax.add_patch(
        FancyBboxPatch(
            (x, y),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.01",
            fc=colour,
            ec=colour,
            alpha=alpha,
            lw=1.2,
        )
    )
    if text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, weight=weight)


def _blank(ax):
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")


def figure_texts(fig) -> list[str]:
    """The text drawn on ``fig`` (titles, labels, annotations; not the hidden axes' ticks)."""
    texts: list[Text] = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.title, *ax.texts]
    return [t.get_text() for t in texts if t.get_visible() and t.get_text().strip()]


# ---------------------------------------------------------------------------------------------
# A GPU's anatomy
# ---------------------------------------------------------------------------------------------


def anatomy_numbers(gpu_key: str) -> dict[str, int | float]:
    """The figures ``gpu_anatomy`` draws, from the registry (counts, and sizes in bytes)."""
    g, a = hardware.gpu(gpu_key), hardware.anatomy(gpu_key)
    return {
        "gpcs": a.gpcs,
        "sms": g.sms,
        "chip_sms": a.chip_gpcs * a.chip_sms_per_gpc,
        "chip_sms_per_gpc": a.chip_sms_per_gpc,
        "warp_schedulers_per_sm": a.warp_schedulers_per_sm,
        "fp32_cores_per_sm": g.fp32_cores_per_sm,
        "fp32_cores_per_partition": g.fp32_cores_per_sm // a.warp_schedulers_per_sm,
        "tensor_cores_per_sm": a.tensor_cores_per_sm,
        "cuda_cores": g.cuda_cores,
        "tensor_cores": g.tensor_cores,
        "register_file_per_sm_bytes": a.register_file_per_sm_bytes,
        "register_file_per_partition_bytes": a.register_file_per_sm_bytes
        // a.warp_schedulers_per_sm,
        "l1_per_sm_bytes": g.l1_per_sm_bytes,
        "max_shared_memory_per_sm_bytes": a.max_shared_memory_per_sm_bytes,
        "l2_bytes": g.l2_bytes,
        "memory_bytes": g.memory_bytes,
        "memory_bandwidth_bytes_per_s": g.memory_bandwidth_bytes_per_s,
        "hbm_stacks": a.hbm_stacks,
    }


def gpu_anatomy(gpu_key: str = "h100-sxm"):
    """Draw GPU ``gpu_key``: its GPCs, L2 and HBM (left) and one SM opened up (right).

    Returns the Figure. Counts and sizes come from ``hardware.GPUS`` and ``hardware.ANATOMY``.
    """
    g, a = hardware.gpu(gpu_key), hardware.anatomy(gpu_key)
    n = anatomy_numbers(gpu_key)
    fig, (chip, sm) = plt.subplots(1, 2, figsize=(12, 5.2), gridspec_kw={"width_ratios": [1.25, 1]})
    for ax in (chip, sm):
        _blank(ax)
        ax.set_aspect("auto")
    chip.set_title(f"{g.name}: the chip ({a.chip})")
    sm.set_title("One SM (streaming multiprocessor), opened up")

    # The chip: HBM stacks at the sides, GPCs in two rows around the L2.
    left_stacks = (a.hbm_stacks + 1) // 2
    for side, count in ((0.0, left_stacks), (0.9, a.hbm_stacks - left_stacks)):
        for i in range(count):
            _box(
                chip,
                side + 0.01,
                0.08 + i * 0.84 / max(count, 1),
                0.08,
                0.84 / max(count, 1) - 0.03,
                _RED,
                text="HBM",
                size=8,
            )
    columns = (a.gpcs + 1) // 2
    width = 0.78 / columns
    for i in range(a.gpcs):
        row, col = divmod(i, columns)
        y = 0.62 if row == 0 else 0.08
        _box(chip, 0.11 + col * width, y, width - 0.015, 0.3, _BLUE, text="GPC", size=9)
    _box(
        chip,
        0.11,
        0.41,
        0.78,
        0.18,
        _GREEN,
        alpha=0.35,
        text=f"L2 cache {_size(g.l2_bytes)}, shared by all SMs",
        weight="bold",
    )
    chip.text(
        0.5,
        -0.04,
        f"{n['sms']} SMs enabled in {n['gpcs']} GPCs (the full {a.chip} has {n['chip_sms']}: "
        f"up to {n['chip_sms_per_gpc']} per GPC)\n"
        f"{a.hbm_stacks} stacks of {g.memory_type}: {_size(g.memory_bytes)}, "
        f"{_rate(g.memory_bandwidth_bytes_per_s)}",
        ha="center",
        va="top",
        fontsize=9,
    )

    # One SM: four partitions, each a warp scheduler, FP32 lanes, a Tensor Core and registers.
    parts = a.warp_schedulers_per_sm
    tc_per_part = a.tensor_cores_per_sm // parts
    pw = 0.94 / parts
    for p in range(parts):
        x = 0.03 + p * pw
        _box(sm, x, 0.30, pw - 0.02, 0.66, _BLUE, alpha=0.08)
        _box(sm, x + 0.01, 0.86, pw - 0.04, 0.08, _PINK, text="warp\nscheduler", size=7)
        _box(
            sm,
            x + 0.01,
            0.72,
            pw - 0.04,
            0.12,
            _ORANGE,
            text=f"{n['fp32_cores_per_partition']}\nFP32 cores",
            size=7,
        )
        tc_label = "Tensor\nCore" if tc_per_part == 1 else f"{tc_per_part} Tensor\nCores"
        _box(sm, x + 0.01, 0.52, pw - 0.04, 0.18, _GREEN, alpha=0.4, text=tc_label, size=7)
        _box(
            sm,
            x + 0.01,
            0.32,
            pw - 0.04,
            0.18,
            _SKY,
            text=f"registers\n{_size(n['register_file_per_partition_bytes'])}",
            size=7,
        )
    _box(
        sm,
        0.03,
        0.12,
        0.92,
        0.14,
        _SKY,
        alpha=0.45,
        text=f"L1 cache + shared memory: {_size(g.l1_per_sm_bytes)} "
        f"(up to {_size(a.max_shared_memory_per_sm_bytes)} shared)",
        size=8,
    )
    sm.text(
        0.5,
        0.02,
        f"{parts} partitions per SM; x {n['sms']} SMs = {n['cuda_cores']:,} FP32 CUDA cores, "
        f"{n['tensor_cores']:,} Tensor Cores",
        ha="center",
        va="top",
        fontsize=9,
    )
    fig.text(
        0.01,
        0.005,
        f"Numbers: course/facts/hardware/, GPUS and ANATOMY[{g.key!r}] "
        f"({a.source.split(':')[0]}; {g.source.split(';')[0]})",
        fontsize=7,
        color="0.4",
    )
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# The memory pyramid: capacity against bandwidth
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """One level of the pyramid: total capacity (bytes) and bandwidth (bytes/s, None if
    unpublished)."""

    name: str
    capacity_bytes: float
    bandwidth_bytes_per_s: float | None
    detail: str
    via: str = ""


def pyramid_levels(gpu_key: str = "h100-sxm") -> list[Level]:
    """The levels ``memory_pyramid`` draws, fastest first, each computed from the registry.

    Registers and L1/shared are totals over all SMs; the L1/shared bandwidth is derived from the 32
    banks x 4 bytes per clock of the CUDA Programming Guide at the boost clock, L2's from the
    whitepaper's bytes per clock where published. Host DRAM is the DGX system's, if one has this
    GPU.
    """
    g, a = hardware.gpu(gpu_key), hardware.anatomy(gpu_key)
    clock = g.boost_clock_hz
    l2_bw = None if a.l2_read_bytes_per_clock is None else a.l2_read_bytes_per_clock * clock
    host = hardware.INTERCONNECTS[g.host_link]
    levels = [
        Level(
            "Registers",
            a.register_file_per_sm_bytes * g.sms,
            None,
            f"{_size(a.register_file_per_sm_bytes)} per SM",
        ),
        Level(
            "L1 / shared memory",
            g.l1_per_sm_bytes * g.sms,
            a.shared_memory_bytes_per_clock_per_sm * g.sms * clock,
            f"{_size(g.l1_per_sm_bytes)} per SM",
        ),
        Level("L2 cache", g.l2_bytes, l2_bw, "one, shared by all SMs"),
        Level(
            f"HBM ({g.memory_type})",
            g.memory_bytes,
            g.memory_bandwidth_bytes_per_s,
            "the GPU's memory",
        ),
    ]
    systems = [s for s in hardware.SYSTEMS.values() if s.gpu == gpu_key]
    if systems:
        s = systems[0]
        c2c = hardware.NVLINK_C2C
        levels.append(
            Level(
                "Host DRAM",
                s.system_memory_bytes,
                host.bandwidth_bytes_per_s,
                f"{s.name}, shared by {s.gpus} GPUs",
                via=f" per direction over {host.name} to each GPU\n"
                f"(a Grace Hopper's {c2c.name.split(' (')[0]}: {_rate(c2c.bandwidth_bytes_per_s)})",
            )
        )
    return levels


def memory_pyramid(gpu_key: str = "h100-sxm"):
    """Draw the memory hierarchy of ``gpu_key`` as a pyramid: small and fast at the top.

    Each band shows the level's total capacity and its bandwidth (per direction for the host link);
    "not published" where NVIDIA gives no figure. Returns the Figure.
    """
    g = hardware.gpu(gpu_key)
    levels = pyramid_levels(gpu_key)
    fig, ax = plt.subplots(figsize=(12, 5.2))
    _blank(ax)
    ax.set_title(f"Memory hierarchy of the {g.name}: capacity against bandwidth")
    colours = [_PINK, _SKY, _GREEN, _RED, _ORANGE]
    band = 0.86 / len(levels)
    for i, level in enumerate(levels):
        top, bottom = 0.94 - i * band, 0.94 - (i + 1) * band + 0.01
        half_top, half_bottom = 0.03 + i * 0.045, 0.03 + (i + 1) * 0.045
        ax.add_patch(
            Polygon(
                [
                    (0.29 - half_bottom, bottom),
                    (0.29 + half_bottom, bottom),
                    (0.29 + half_top, top),
                    (0.29 - half_top, top),
                ],
                closed=True,
                fc=colours[i % len(colours)],
                alpha=0.45,
                ec="0.3",
            )
        )
        ax.text(
            0.29,
            (top + bottom) / 2,
            level.name,
            ha="center",
            va="center",
            fontsize=9,
            weight="bold",
        )
        bandwidth_bytes_per_s = (
            "not published"
            if level.bandwidth_bytes_per_s is None
            else _rate(level.bandwidth_bytes_per_s)
        )
        ax.text(
            0.57,
            (top + bottom) / 2,
            f"{_size(level.capacity_bytes)} in all: {level.detail}\n"
            f"bandwidth: {bandwidth_bytes_per_s}{level.via}",
            ha="left",
            va="center",
            fontsize=8.5,
        )
    ax.annotate(
        "", xy=(0.005, 0.05), xytext=(0.005, 0.93), arrowprops={"arrowstyle": "->", "color": "0.3"}
    )
    ax.text(
        0.015,
        0.5,
        "larger, slower, farther from the cores",
        rotation=90,
        va="center",
        fontsize=8,
        color="0.3",
    )
    fig.text(
        0.01,
        0.01,
        "Source: course/facts/hardware/ (whitepapers, datasheets, CUDA C++ Programming Guide); "
        "L1/shared bandwidth derived as 128 bytes/clock/SM at the boost clock",
        fontsize=7,
        color="0.4",
    )
    return fig


# ---------------------------------------------------------------------------------------------
# The software stack
# ---------------------------------------------------------------------------------------------

_WHEEL = "bundled in the torch wheel"
_MACHINE = "installed on the machine"

#: The layers from your code down to the GPU: (name, what it is, where it comes from).
STACK = (
    ("Python", "your code, the notebook", "written by you"),
    ("PyTorch", "tensors, autograd, torch.nn", _WHEEL),
    ("cuBLAS / cuDNN / NCCL", "matmul, deep-learning and communication kernels", _WHEEL),
    ("CUDA runtime", "libcudart: memory, streams, kernel launches", _WHEEL),
    ("NVIDIA driver", "libcuda and the kernel module", f"{_MACHINE}: the one piece you install"),
    ("GPU", "SMs, Tensor Cores, HBM", "the hardware"),
)


def software_stack(versions: dict[str, str] | None = None):
    """Draw the stack from Python down to the GPU, marking what the torch wheel bundles.

    ``versions`` (optional) maps a layer name to a version to print beside it, e.g. the running
    ``{"PyTorch": torch.__version__}``. Returns the Figure.
    """
    versions = versions or {}
    fig, ax = plt.subplots(figsize=(9, 5.2))
    _blank(ax)
    ax.set_title("From your code to the GPU: the software stack")
    height = 0.86 / len(STACK)
    for i, (name, what, origin) in enumerate(STACK):
        y = 0.92 - (i + 1) * height
        bundled = origin == _WHEEL
        colour = _BLUE if bundled else (_ORANGE if origin.startswith(_MACHINE) else _GREEN)
        label = name if name not in versions else f"{name}\n{versions[name]}"
        _box(ax, 0.05, y + 0.01, 0.36, height - 0.02, colour, alpha=0.35, text=label, weight="bold")
        ax.text(0.44, y + height / 2, f"{what}\n({origin})", va="center", fontsize=8.5)
        if i:
            ax.annotate(
                "",
                xy=(0.23, y + height - 0.01),
                xytext=(0.23, y + height + 0.01),
                arrowprops={"arrowstyle": "->"},
            )
    wheel = [i for i, layer in enumerate(STACK) if layer[2] == _WHEEL]
    top = 0.92 - wheel[0] * height
    bottom = 0.92 - (wheel[-1] + 1) * height
    ax.add_patch(
        Rectangle(
            (0.02, bottom + 0.005), 0.96, top - bottom - 0.01, fill=False, ec=_BLUE, lw=1.5, ls="--"
        )
    )
    ax.text(
        0.97,
        top - 0.03,
        "in the pip and conda builds of torch",
        ha="right",
        fontsize=8,
        color=_BLUE,
    )
    ax.text(
        0.5,
        0.01,
        "On a CPU-only machine PyTorch calls oneDNN and a BLAS instead, and the "
        "lower layers are absent.",
        ha="center",
        fontsize=8,
        color="0.3",
    )
    return fig


__all__ = [
    "Level",
    "STACK",
    "anatomy_numbers",
    "figure_texts",
    "gpu_anatomy",
    "memory_pyramid",
    "pyramid_levels",
    "software_stack",
]
