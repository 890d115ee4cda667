"""Sharded data parallelism: ZeRO stages 0, 1 and 3 measured per rank.

- stage 0: ``DistributedDataParallel`` + Adam (every rank holds everything);
- stage 1: DDP + ``torch.distributed.optim.ZeroRedundancyOptimizer`` (each rank keeps the Adam
  states of its share of the parameters);
- stage 3: FSDP2 ``fully_shard`` on an explicit device mesh (CPU under gloo: without it FSDP2 would
  move to CUDA on a GPU machine) -- parameters, gradients and optimizer states sharded; each block's
  weights are all-gathered before use and its gradients reduce-scattered after the backward.

:func:`sharded_states` trains one step and counts the bytes of the tensors this rank holds
(its local shards: parameters, gradients, Adam moments) and, for stage 3, the step's peak from
torch's ``FSDPMemTracker`` (which also sees the all-gather and reduce-scatter buffers). The
calculator :func:`course.calculators.parallel.zero_model_state_bytes_per_gpu` (fp32 Adam: 16 B/param
over the ranks) is held against it in tests/distributed/test_distributed_demos.py. ZeRO stage 2 has
no counterpart in PyTorch core (FSDP2 with ``reshard_after_forward=False`` keeps the weights
unsharded between forward and backward, but holds sharded states at rest like stage 3), so it is not
measured here.

Run: ``torchrun --nproc-per-node 2 -m course.distributed.fsdp``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

from course.distributed.common import (
    TINY_CONFIG,
    lm_loss,
    scaled_batch,
    seeded_model,
    shard_of,
    tensor_bytes,
    token_batch,
)
from course.distributed.launch import device
from course.facts.models import TransformerConfig
from course.facts.report import Table
from course.measure.torchmodels import count_parameters

MEASURED_STAGES = (0, 1, 3)


def mesh():
    """A 1-D device mesh over all ranks, on this rank's device type (CPU under gloo)."""
    return init_device_mesh(device().type, (dist.get_world_size(),))


def shard_model(model: torch.nn.Module, *, bf16: bool = False) -> torch.nn.Module:
    """FSDP2: ``fully_shard`` each block, then the whole model, on :func:`mesh`.

    ``bf16=True`` adds a ``MixedPrecisionPolicy`` (bf16 compute and gradient reduction, fp32
    sharded master weights).
    """
    m = mesh()
    policy = (
        MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16)
        if bf16
        else MixedPrecisionPolicy()
    )
    for block in model.blocks:
        fully_shard(block, mesh=m, mp_policy=policy)
    fully_shard(model, mesh=m, mp_policy=policy)
    return model


def _optimizer_bytes(opt) -> int:
    states = opt.optim.state if isinstance(opt, ZeroRedundancyOptimizer) else opt.state
    total = 0
    for state in states.values():
        for key, value in state.items():
            if key != "step" and isinstance(value, torch.Tensor):  # step: one scalar per tensor
                total += tensor_bytes(value)
    return total


def sharded_states(
    stage: int = 3,
    config: TransformerConfig = TINY_CONFIG,
    batch: int | None = None,
    seq_len: int = 16,
) -> dict:
    """Train one step (fp32, Adam) under ZeRO ``stage`` (0, 1 or 3); bytes this rank holds.

    Returns ``{"stage", "rank", "params", "parameters_bytes", "gradients_bytes",
    "optimizer_states_bytes", "total_bytes", "peak_bytes", "peak"}`` where ``params`` is the whole
    model's parameter count, the byte counts are this rank's local tensors after the step (before
    ``zero_grad``), ``peak_bytes`` the stage-3 step's peak from FSDPMemTracker and ``peak`` the
    most each of its categories held at any moment of the step (None for stages 0 and 1): the
    categories at the instant of the global peak vary from run to run (a reduce-scatter buffer
    may or may not still be alive then), their own maxima do not. ``batch`` defaults to 2
    sequences per rank.
    """
    if stage not in MEASURED_STAGES:
        raise ValueError(f"stage must be one of {MEASURED_STAGES}, got {stage!r}")
    r, n = dist.get_rank(), dist.get_world_size()
    batch = batch or scaled_batch(n)
    dev = device()
    model = seeded_model(config, device=dev)
    params = count_parameters(model)
    if stage == 3:
        model = shard_model(model)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
        trained = model
    else:
        trained = DDP(model, device_ids=[dev.index] if dev.type == "cuda" else None)
        opt = (
            ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=1e-3)
            if stage == 1
            else torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
        )
    inputs, targets = token_batch(config, batch, seq_len)
    x, y = shard_of(inputs, r, n).to(dev), shard_of(targets, r, n).to(dev)

    def step(zero: bool = True) -> None:
        lm_loss(trained(x), y).backward()
        opt.step()
        if zero:
            opt.zero_grad(set_to_none=True)

    step()  # Adam creates its moments on the first step
    peak = None
    if stage == 3:
        from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker

        tracker = FSDPMemTracker(model, opt)
        tracker.track_inputs((x, y))
        most: dict[str, int] = {}
        update = tracker._update_peak_stats  # called after every operation the tracker sees

        def record_maxima(state, _update=update) -> None:
            for key, value in tracker.get_tracker_snapshot("current").get(dev, {}).items():
                name = getattr(key, "value", str(key))
                most[name] = max(most.get(name, 0), int(value))
            _update(state)

        tracker._update_peak_stats = record_maxima
        with tracker:
            step()
        snap = tracker.get_tracker_snapshot("peak").get(dev, {})
        peak = {name: value for name, value in most.items() if name != "Total"}
        peak["Total"] = int(
            next((v for k, v in snap.items() if getattr(k, "value", str(k)) == "Total"), 0)
        )
    step(zero=False)
    p_bytes = sum(tensor_bytes(p) for p in model.parameters())
    g_bytes = sum(tensor_bytes(p.grad) for p in model.parameters() if p.grad is not None)
    o_bytes = _optimizer_bytes(opt)
    return {
        "stage": stage,
        "rank": r,
        "params": params,
        "parameters_bytes": p_bytes,
        "gradients_bytes": g_bytes,
        "optimizer_states_bytes": o_bytes,
        "total_bytes": p_bytes + g_bytes + o_bytes,
        "peak_bytes": None if peak is None else peak.get("Total"),
        "peak": peak,
    }


def all_stages() -> list[dict]:
    """:func:`sharded_states` for each of :data:`MEASURED_STAGES` on this rank."""
    return [sharded_states(stage) for stage in MEASURED_STAGES]


def fsdp_output(
    config: TransformerConfig = TINY_CONFIG, batch: int = 4, seq_len: int = 16
) -> torch.Tensor:
    """Logits of the full batch from the FSDP2-sharded model (equal to the unsharded model's).

    Every rank feeds the same whole batch (FSDP2 shards the weights, not this input)."""
    model = shard_model(seeded_model(config, device=device()))
    inputs, _ = token_batch(config, batch, seq_len)
    with torch.no_grad():
        return model(inputs.to(device())).detach().cpu()


def compare_with_zero(measured: list[dict], n: int) -> Table:
    """Each measured stage beside
    :func:`course.calculators.parallel.zero_model_state_bytes_per_gpu` (fp32 Adam over ``n``
    ranks), plus stage 2 from the calculator alone (``measured_bytes`` None): a :class:`Table`."""
    from course.calculators.parallel import zero_model_state_bytes_per_gpu

    by_stage = {m["stage"]: m for m in measured}
    params = measured[0]["params"]
    rows = []
    for stage in (0, 1, 2, 3):
        est = zero_model_state_bytes_per_gpu(params, n, stage, precision="fp32", optimizer="adam")
        got = by_stage.get(stage)
        rows.append(
            {
                "stage": stage,
                "estimate_bytes": est.total_bytes,
                "measured_bytes": None if got is None else got["total_bytes"],
                "ratio": None if got is None else got["total_bytes"] / est.total_bytes,
            }
        )
    return Table(
        rows,
        title=f"ZeRO stages on {n} ranks: calculator vs measured (fp32 Adam)",
        missing={"measured_bytes": "no PyTorch core equivalent"},
    )


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        return [{k: v for k, v in s.items() if k != "peak"} for s in all_stages()]

    run_script(worker, "Model-state bytes per rank under ZeRO stages 0, 1, 3")


if __name__ == "__main__":
    main()

__all__ = [
    "MEASURED_STAGES",
    "all_stages",
    "compare_with_zero",
    "fsdp_output",
    "main",
    "mesh",
    "shard_model",
    "sharded_states",
]
