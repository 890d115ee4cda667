"""Model FLOPs utilisation of a real training step on this machine, against its own matmul peak.

:func:`measure_training_mfu` builds a small transformer from a config
(``course.measure.torchmodels``), counts one training step's FLOPs with ``FlopCounterMode``
(forward + backward; the AdamW update is elementwise and not counted, as MFU leaves it out), times
the whole step (forward, loss, backward, optimizer) with :func:`course.measure.timing.time_call`,
and measures this machine's peak as the fp32 rate of one square matmul
(:func:`course.measure.matmul.time_matmul`).

MFU = counted FLOPs / step time / measured peak (PaLM, Chowdhery et al. 2022, appendix B, counts
model FLOPs against the *datasheet* peak; a CPU has no datasheet FLOP/s a learner can look up, so
the peak here is the machine's own fp32 matmul rate: this MFU is the share of the achievable matmul
rate that a real training step keeps). The record also gives the 6N estimate of the same step.

 Used by lesson 05; findings in :mod:`course.presentation.findings.utilisation`.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from course.calculators import compute
from course.facts import validate
from course.facts.models import TransformerConfig
from course.measure.flops import count_flops
from course.measure.matmul import time_matmul
from course.measure.timing import load_average, progress, synchronize, time_call, usable_cores
from course.measure.torchmodels import build_model


@dataclass(frozen=True)
class MFURecord:
    """One measured training step and this machine's matmul peak."""

    model: str
    device: str
    threads: int
    params: int
    batch: int
    seq_len: int
    step_flops: float  # counted by FlopCounterMode (forward + backward)
    step_flops_6n: float  # 6 x params x tokens, the usual estimate
    step_seconds: float  # median over repeats
    step_spread_seconds: float  # interquartile range
    repeats: int
    achieved_flop_per_s: float  # step_flops / step_seconds
    peak_flop_per_s: float  # fp32 square matmul measured here (best of before and after)
    peak_size: int  # the n of that n x n matmul
    mfu: float  # achieved / peak
    load_average: float | None  # 1-minute load average when the measurement started
    cores: int

    @property
    def tokens_per_s(self) -> float:
        return self.batch * self.seq_len / self.step_seconds

    @property
    def relative_spread(self) -> float:
        return self.step_spread_seconds / self.step_seconds

    def __str__(self) -> str:
        return (
            f"{self.model}: {self.params:,} parameters, batch {self.batch} x {self.seq_len} tokens "
            f"on {self.device} ({self.threads} threads): step {self.step_seconds * 1e3:.1f} ms "
            f"(IQR {self.step_spread_seconds * 1e3:.1f} ms), {self.step_flops / 1e9:.2f} GFLOP "
            f"counted = {self.achieved_flop_per_s / 1e9:.1f} GFLOP/s; matmul peak "
            f"{self.peak_flop_per_s / 1e9:.1f} GFLOP/s (n = {self.peak_size}); MFU "
            f"{100 * self.mfu:.1f} %"
        )


def _training_step(config: TransformerConfig, batch: int, seq_len: int, device: str, seed: int):
    torch.manual_seed(seed)
    model = build_model(config, device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab, (batch, seq_len), device=device)

    def forward_backward() -> None:
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, config.vocab).float(), ids.reshape(-1))
        loss.backward()

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        forward_backward()
        optimizer.step()

    params = sum(p.numel() for p in model.parameters())
    return step, forward_backward, params


def step_flops(config: TransformerConfig, batch: int, seq_len: int) -> int:
    """FLOPs of one training step's forward + backward, counted on the meta device (no memory,
    no time: the same ops run on shapes only)."""
    _, forward_backward, _ = _training_step(config, batch, seq_len, "meta", 0)
    return count_flops(forward_backward)


def _time_step(step, device: str, budget_seconds: float) -> tuple[float, float, int, int]:
    """(median seconds, IQR seconds, repeats, threads) of ``step()``, inside about
    ``budget_seconds``.

    A first call warms up and says how slow a step is. Fast steps go to
    :func:`course.measure.timing.time_call` (``torch.utils.benchmark``); a step so slow that a
    few calls would not fit the budget (a busy machine) is timed call by call, at least once.
    """
    t0 = time.perf_counter()
    step()
    synchronize(device)
    first = time.perf_counter() - t0
    left = budget_seconds - first
    if 5 * first < left:
        t = time_call(step, device=device, min_run_time=left - 2 * first, warmup=1)
        return t.median_seconds, t.iqr_seconds, t.repeats, t.threads
    times: list[float] = []
    while not times or sum(times) + first < left:
        t0 = time.perf_counter()
        step()
        synchronize(device)
        times.append(time.perf_counter() - t0)
    times.sort()
    spread = times[3 * len(times) // 4] - times[len(times) // 4] if len(times) > 1 else 0.0
    return statistics.median(times), spread, len(times), torch.get_num_threads()


def measure_training_mfu(
    config: TransformerConfig,
    *,
    batch: int = 4,
    seq_len: int = 128,
    budget_seconds: float = 6.0,
    device: str = "cpu",
    peak_size: int = 512,
    seed: int = 0,
    show_progress: bool | None = None,
) -> MFURecord:
    """Time a real training step of ``config`` and this machine's matmul peak, then MFU.

    The FLOPs are counted once on the meta device (:func:`step_flops`). The peak is an fp32
    ``peak_size``-cubed matmul timed just before and just after the step (the larger of the two
    counts: on a shared machine the two can differ a lot, and the record keeps the load average).
    Two thirds of ``budget_seconds`` go to the step (at least one call, however slow), the rest to
    the two matmul timings. The config must have an LM head (the loss is next-token cross-entropy).
    """
    if not isinstance(config, TransformerConfig) or not config.lm_head:
        raise ValueError(f"config must be a TransformerConfig with an LM head, got {config!r}")
    b = validate.positive_int("batch", batch, maximum=4096)
    s = validate.positive_int("seq_len", seq_len, maximum=config.max_positions)
    budget = validate.number("budget_seconds", budget_seconds, minimum=0.5, maximum=600)
    n = validate.positive_int("peak_size", peak_size, minimum=16, maximum=8192)
    load = load_average()
    bar = progress(
        4, desc="MFU: count, peak, step, peak", budget_seconds=budget, show=show_progress
    )
    with bar:
        flops = step_flops(config, b, s)
        bar.update(1)
        peaks = [time_matmul(n, device=device, min_run_time=budget / 6)]
        bar.update(1)
        step, _, params = _training_step(config, b, s, device, seed)
        median, spread, repeats, threads = _time_step(step, device, budget * 2 / 3)
        bar.update(1)
        peaks.append(time_matmul(n, device=device, min_run_time=budget / 6))
        bar.update(1)
    peak = max(p.flop_per_s for p in peaks)
    achieved = flops / median
    return MFURecord(
        model=config.name,
        device=device,
        threads=threads,
        params=params,
        batch=b,
        seq_len=s,
        step_flops=float(flops),
        step_flops_6n=compute.training_flops(params, b * s),
        step_seconds=median,
        step_spread_seconds=spread,
        repeats=repeats,
        achieved_flop_per_s=achieved,
        peak_flop_per_s=peak,
        peak_size=n,
        mfu=achieved / peak,
        load_average=load,
        cores=usable_cores(),
    )


__all__ = ["MFURecord", "measure_training_mfu", "step_flops"]
