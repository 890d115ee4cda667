"""Real ``torch.distributed`` runs on this machine: a launcher and the demos of lesson 06.

- :mod:`course.distributed.launch`: run a worker function on N local processes from a notebook or a
  test (what ``torchrun`` does, from Python), with a time limit, returning each rank's result and
  leaving no process or port behind.
- Demos, each an importable worker function *and* a ``torchrun`` script
  (``torchrun --nproc-per-node N -m course.distributed.<demo>``; nccl on CUDA, gloo elsewhere):
  :mod:`~course.distributed.collectives`, :mod:`~course.distributed.ddp`,
  :mod:`~course.distributed.fsdp`, :mod:`~course.distributed.tensor_parallel`,
  :mod:`~course.distributed.pipeline`; and lesson 12's :mod:`~course.distributed.checkpoint`
  (``torch.save`` against DCP, async saves, resharding), :mod:`~course.distributed.elastic` (a
  script killed and restarted by torchrun's elastic agent: ``torchrun --max-restarts 1``),
  :mod:`~course.distributed.moe` (expert parallelism with ``all_to_all_single``) and
  :mod:`~course.distributed.ring_attention` (context parallelism with ``isend``/``irecv``).

Layer 3 (measurement): imports torch. The calculators the demos are held against are in
:mod:`course.calculators.parallel` (layer 2).
"""
