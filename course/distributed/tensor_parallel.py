"""Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) with DTensor: one block split over ranks.

In each transformer block the Q/K/V projections and the MLP's up/gate projections are split by
output columns (``ColwiseParallel``: each rank computes its own heads / its slice of the hidden
MLP), and the attention output and MLP down projections by input rows (``RowwiseParallel``: each
rank produces a partial sum, and one all-reduce adds them). The input of ``attn`` and of ``mlp`` is
made a replicated DTensor once (``PrepareModuleInput(..., use_local_output=False)``), so in the
backward pass the partial input-gradients of Q, K and V (of up and gate) are summed locally and
all-reduced once: Megatron's ``f`` and ``g`` operators. So a block costs two all-reduces of the
activations (batch x seq x hidden) in the forward pass and two in the backward pass -- on every
layer, every micro-batch, which is why tensor parallelism stays inside a node on NVLink.

:func:`tp_block` returns the split block's output on the same input as the unsplit block (equal to
float rounding: tests/distributed/test_distributed_demos.py) and the collectives ``CommDebugMode``
counted in the forward and backward. The mesh is explicit: CPU under gloo.

Run: ``torchrun --nproc-per-node 2 -m course.distributed.tensor_parallel``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    RowwiseParallel,
    parallelize_module,
)

from course.distributed.common import SCALE_CONFIG, require_divisible, seeded_model
from course.distributed.launch import device
from course.facts.models import TransformerConfig
from course.measure.torchmodels import Block


def _replicated_input() -> PrepareModuleInput:
    return PrepareModuleInput(
        input_layouts=(Replicate(),), desired_input_layouts=(Replicate(),), use_local_output=False
    )


#: Megatron's split of a block: column-parallel in, row-parallel out, for attention and MLP; the
#: input of each made a replicated DTensor once, so its gradient is all-reduced once.
PLAN = {
    "attn": _replicated_input(),
    "mlp": _replicated_input(),
    "attn.q_proj": ColwiseParallel(),
    "attn.k_proj": ColwiseParallel(),
    "attn.v_proj": ColwiseParallel(),
    "attn.o_proj": RowwiseParallel(),
    "mlp.up": ColwiseParallel(),
    "mlp.gate": ColwiseParallel(),
    "mlp.down": RowwiseParallel(),
}


def block_input(
    config: TransformerConfig = SCALE_CONFIG, batch: int = 2, seq_len: int = 16, seed: int = 2
) -> torch.Tensor:
    """The seeded activations ``(batch, seq_len, hidden)`` fed to the block (same on all ranks)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, seq_len, config.hidden, generator=generator)


def split_block(block: Block, mesh) -> Block:
    """Apply :data:`PLAN` to ``block`` on ``mesh``; each rank then holds heads / t of the heads."""
    t = mesh.size()
    attn = block.attn
    fix = "Tensor parallelism gives each rank whole attention heads."
    require_divisible("the attention heads", attn.heads, t, fix)
    require_divisible("the K/V heads", attn.kv_heads, t, fix)
    require_divisible("the MLP's hidden size", block.mlp.up.out_features, t)
    plan = {k: v for k, v in PLAN.items() if k != "mlp.gate" or block.mlp.gated}
    parallelize_module(block, mesh, plan)
    attn.heads, attn.kv_heads = attn.heads // t, attn.kv_heads // t  # the local view of each rank
    return block


def tp_block(config: TransformerConfig = SCALE_CONFIG, batch: int = 2, seq_len: int = 16) -> dict:
    """Forward and backward of block 0 of the seeded model, split over all ranks.

    Returns ``{"rank", "output", "input_grad", "grads", "forward_collectives",
    "backward_collectives", "local_params", "params"}``: the output tensor, the gradient of
    ``output.sum()`` with respect to the input and to each parameter (gathered whole),
    ``CommDebugMode``'s counts by collective name for the forward and for the backward, and this
    rank's / the whole block's parameter count. :data:`course.distributed.common.SCALE_CONFIG`'s
    24 heads split over 1, 2, 3, 4, 6 or 8 ranks; other counts are refused with the reason.
    """
    dev = device()
    block = seeded_model(config).blocks[0].to(dev)
    params = sum(p.numel() for p in block.parameters())
    mesh = init_device_mesh(dev.type, (dist.get_world_size(),))
    split_block(block, mesh)
    x = block_input(config, batch, seq_len).to(dev).requires_grad_(True)
    with CommDebugMode() as fwd:
        out = block(x)
    with CommDebugMode() as bwd:
        out.sum().backward()
    local = sum((p.to_local() if hasattr(p, "to_local") else p).numel() for p in block.parameters())

    def counts(mode) -> dict[str, int]:
        return {
            getattr(k, "__name__", str(k)).split(".")[-1]: int(v)
            for k, v in mode.get_comm_counts().items()
        }

    grads = {
        name: (p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad).cpu()
        for name, p in block.named_parameters()
    }
    return {
        "rank": dist.get_rank(),
        "output": out.detach().cpu(),
        "input_grad": x.grad.cpu(),
        "grads": grads,
        "forward_collectives": counts(fwd),
        "backward_collectives": counts(bwd),
        "local_params": local,
        "params": params,
    }


def reference_block_output(
    config: TransformerConfig = SCALE_CONFIG, batch: int = 2, seq_len: int = 16
) -> torch.Tensor:
    """The unsplit block 0 of the same seeded model on the same input, in one process."""
    with torch.no_grad():
        return seeded_model(config).blocks[0](block_input(config, batch, seq_len))


def reference_block_gradients(
    config: TransformerConfig = SCALE_CONFIG, batch: int = 2, seq_len: int = 16
) -> dict:
    """``{"input_grad", "grads"}`` of ``output.sum()`` through the unsplit block 0, one process."""
    block = seeded_model(config).blocks[0]
    x = block_input(config, batch, seq_len).requires_grad_(True)
    block(x).sum().backward()
    return {"input_grad": x.grad, "grads": {n: p.grad for n, p in block.named_parameters()}}


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        r = tp_block()
        return {k: v for k, v in r.items() if k not in ("output", "input_grad", "grads")}

    run_script(worker, "Tensor-parallel transformer block (Megatron split, DTensor)")


if __name__ == "__main__":
    main()

__all__ = [
    "PLAN",
    "block_input",
    "main",
    "reference_block_gradients",
    "reference_block_output",
    "split_block",
    "tp_block",
]
