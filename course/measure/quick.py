"""``python -m course measure``: a one-minute portrait of this machine, from the lessons' sweeps.

Prints where it ran, checks each device with a verified matmul, then the best matmul rate per
device and dtype, and the read bandwidth of each cache level and of main memory (CUDA: device
memory and host <-> device copies too). Every figure is measured now, on this machine, as a
median over repeats; the budget bounds the whole run. Layer 3, called by ``course.__main__``.
"""

from __future__ import annotations

from course import validate
from course.measure import bandwidth, matmul
from course.measure.devices import available_devices, cpu_caches, describe_machine, verify_devices
from course.units import fmt_bandwidth, fmt_bytes, fmt_flop_rate

#: dtypes worth a line per device (CPUs without bf16 units are slow at it: that is worth seeing).
DTYPES = {"cpu": ("fp32", "bf16"), "cuda": ("fp32", "tf32", "bf16"), "mps": ("fp32", "fp16")}


def measure_machine(budget_s: float = 30.0) -> list[str]:
    """Measure this machine within about ``budget_s`` seconds; the report as lines of text."""
    budget_s = validate.number("budget_s", budget_s, minimum=3, maximum=3600)
    devices = available_devices()
    lines = [describe_machine(), *(str(t) for t in verify_devices())]
    share = budget_s / (2 * len(devices) + 1)
    for device in devices:
        sweep = matmul.matmul_sweep([256, 1024, 2048], dtypes=DTYPES[device], devices=(device,),
                                    budget_s=share, show_progress=False)  # fmt: skip
        for dtype in DTYPES[device]:
            if sweep.where(dtype=dtype):
                best = sweep.best(dtype=dtype)
                lines.append(f"matmul {device} {dtype}: {fmt_flop_rate(best.flop_per_s)} "
                             f"(n = {best.size}, median of {best.repeats})")  # fmt: skip
    reads = bandwidth.working_set_sweep(threads=None, budget_s=share, show_progress=False)
    for plateau in bandwidth.cache_plateaus(reads, cpu_caches()):
        size = (
            f" ({fmt_bytes(plateau.capacity_bytes, binary=True)})" if plateau.capacity_bytes else ""
        )
        lines.append(f"read bandwidth {plateau.level}{size}: {fmt_bandwidth(plateau.bytes_per_s)}")
    if "cuda" in devices:
        device_reads = bandwidth.working_set_sweep([2**30], device="cuda", budget_s=share / 2)
        lines.append(
            f"read bandwidth cuda memory: {fmt_bandwidth(device_reads.best('bytes_per_s').bytes_per_s)}"
        )
        copies = bandwidth.host_device_sweep([256 * 2**20], pinned=(True,), budget_s=share / 2)
        for r in copies.records:
            lines.append(f"copy {r.kernel} pinned: {fmt_bandwidth(r.bytes_per_s)}")
    return lines


def run_measure(budget_s: float = 30.0) -> int:
    """Print ``measure_machine``'s report; 1 if a device failed its verified matmul."""
    lines = measure_machine(budget_s)
    print("\n".join(lines))
    return 1 if any(line.startswith("[FAIL]") for line in lines) else 0
