"""The collectives, shown on small tensors and timed against message size.

:func:`show_collectives` runs all-reduce, broadcast, all-gather, reduce-scatter and all-to-all on
tiny tensors whose values say which rank they came from. :func:`time_collectives` times all-reduce,
all-gather and reduce-scatter for a range of message sizes (median of repeats, after a warm-up, a
barrier before each) and returns records for
:func:`course.calculators.communication.fit_alpha_beta`. Message size follows nccl-tests: the
all-reduce's buffer, the all-gather's *output*, the reduce-scatter's *input*. Under gloo on one host
the "link" is the loopback (memory copies through the kernel), and gloo builds some collectives from
others: nothing here is NCCL on NVLink. With a GPU per rank the same code runs on NCCL, and each
record names the link (two T4s: PCIe).

Run: ``torchrun --nproc-per-node 2 -m course.distributed.collectives``.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.distributed as dist

from course.distributed.launch import device, transport

# torch 2.13 renamed the single-tensor forms (the old names still work, with a warning)
_all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor

#: Message sizes (bytes) of the default sweep: 4 KB to 4 MB, kept small for a shared 2-core machine.
DEFAULT_SIZES = (2**12, 2**14, 2**16, 2**18, 2**20, 2**22)
TIMED = ("all_reduce", "all_gather", "reduce_scatter")


def show_collectives() -> dict:
    """Each collective on a 4-element tensor per rank (rank r starts from r + 1); what it holds
    after."""
    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    mine = torch.full((4,), float(r + 1), device=dev)
    out: dict = {"rank": r, "before": mine.tolist()}
    t = mine.clone()
    dist.all_reduce(t)
    out["all_reduce (sum)"] = t.tolist()
    t = mine.clone()
    dist.broadcast(t, src=0)
    out["broadcast from 0"] = t.tolist()
    gathered = torch.empty(4 * n, device=dev)
    _all_gather(gathered, mine)
    out["all_gather"] = gathered.tolist()
    big = torch.arange(4 * n, dtype=torch.float32, device=dev) + 10 * r
    part = torch.empty(4, device=dev)
    _reduce_scatter(part, big)
    out["reduce_scatter input"] = big.tolist()
    out["reduce_scatter (sum of my quarter)"] = part.tolist()
    send = torch.tensor([10.0 * r + j for j in range(n)], device=dev)
    recv = torch.empty(n, device=dev)
    dist.all_to_all_single(recv, send)
    out["all_to_all input"], out["all_to_all"] = send.tolist(), recv.tolist()
    return out


def _op(name: str, size_bytes: int, n: int, dev):
    elems = max(n, size_bytes // 4 // n * n)  # float32, divisible by the ranks
    if name == "all_reduce":
        buf = torch.ones(elems, device=dev)
        return elems * 4, lambda: dist.all_reduce(buf)
    if name == "all_gather":
        out, inp = torch.empty(elems, device=dev), torch.ones(elems // n, device=dev)
        return elems * 4, lambda: _all_gather(out, inp)
    if name == "reduce_scatter":
        inp, out = torch.ones(elems, device=dev), torch.empty(elems // n, device=dev)
        return elems * 4, lambda: _reduce_scatter(out, inp)
    raise ValueError(f"collective must be one of {', '.join(TIMED)}, got {name!r}")


def time_collectives(
    sizes=DEFAULT_SIZES, collectives=TIMED, repeats: int = 5, budget_seconds: float = 6.0
) -> list[dict]:
    """Median seconds of each collective at each message size, on this rank.

    Records ``{"collective", "bytes", "seconds", "min_seconds", "ranks", "transport"}``
    (``launch.transport()``: "gloo, loopback", or NCCL and the link between the GPUs). Stops
    adding sizes once ``budget_seconds`` is spent (rank 0 decides, so all ranks stop together).
    """
    n, dev, via = dist.get_world_size(), device(), transport()
    records = []
    start = time.perf_counter()
    for name in collectives:
        for size in sizes:
            over = torch.tensor([float(time.perf_counter() - start > budget_seconds)])
            dist.broadcast(over, src=0)
            if over.item():
                return records
            nbytes, fn = _op(name, size, n, dev)
            fn()  # warm-up
            times = []
            for _ in range(repeats):
                dist.barrier()
                t0 = time.perf_counter()
                fn()
                if dev.type == "cuda":
                    torch.cuda.synchronize(dev)
                times.append(time.perf_counter() - t0)
            records.append(
                {
                    "collective": name,
                    "bytes": nbytes,
                    "seconds": statistics.median(times),
                    "min_seconds": min(times),
                    "ranks": n,
                    "transport": via,
                }
            )
    return records


def transport_of(records: list[dict]) -> str:
    """The transport the ``records`` of :func:`time_collectives` were timed over (older records,
    without the field, were gloo on the loopback)."""
    return next((r["transport"] for r in records if r.get("transport")), "gloo, loopback")


def fit_records(records: list[dict]) -> dict:
    """An alpha-beta fit (:func:`course.calculators.communication.fit_alpha_beta`) per collective
    in ``records``; None for a collective whose times did not grow with size (noise)."""
    from course.calculators.communication import fit_alpha_beta

    fits = {}
    for name in dict.fromkeys(r["collective"] for r in records):
        sel = [r for r in records if r["collective"] == name]
        try:
            fits[name] = fit_alpha_beta(
                [r["bytes"] for r in sel],
                [r["seconds"] for r in sel],
                collective=name,
                n=sel[0]["ranks"],
            )
        except ValueError:
            fits[name] = None
    return fits


def fit_curves(fits: dict) -> dict:
    """name -> seconds(bytes) of each fitted alpha-beta model (for
    ``course.presentation.plots.collective_times``)."""
    from course.calculators.communication import ring_collective_seconds

    return {
        name: (
            lambda size, f=f, name=name: ring_collective_seconds(
                name, size, f.ranks, f.bandwidth_bytes_per_s, latency_seconds=f.latency_seconds
            )
        )
        for name, f in fits.items()
        if f is not None
    }


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        shown = show_collectives()
        timed = time_collectives(sizes=DEFAULT_SIZES[::2], repeats=3)
        return {
            "collectives": shown,
            "timings": [
                (r["collective"], r["bytes"], f"{r['seconds'] * 1e3:.3f} ms") for r in timed
            ],
        }

    run_script(worker, "Collectives (rank 0's view) and their time against message size")


if __name__ == "__main__":
    main()

__all__ = [
    "DEFAULT_SIZES",
    "TIMED",
    "fit_curves",
    "fit_records",
    "main",
    "show_collectives",
    "time_collectives",
]
