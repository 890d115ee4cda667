"""Real ``torch.distributed`` runs on this machine: a launcher and the demos of lesson 06.

- :mod:`course.distributed.launch`: run a worker function on N local processes from a notebook or a
  test (what ``torchrun`` does, from Python), with a time limit, returning each rank's result and
  leaving no process or port behind.
- Demos, each an importable worker function *and* a ``torchrun`` script
  (``torchrun --nproc-per-node N -m course.distributed.<demo>``; nccl on CUDA, gloo elsewhere):
  :mod:`~course.distributed.collectives`, :mod:`~course.distributed.ddp`,
  :mod:`~course.distributed.fsdp`, :mod:`~course.distributed.tensor_parallel`,
  :mod:`~course.distributed.pipeline`, and :mod:`~course.distributed.training` (one training run
  that 1 process, DDP, FSDP2, TP and PP reproduce step for step). Each runs at 1, 2, 3, 4 or 8
  processes: batches and pipeline stages scale with the world size.
  Lesson 12 adds :mod:`~course.distributed.checkpoint` (``torch.save`` against DCP, async saves,
  resharding), :mod:`~course.distributed.elastic` (a script killed and restarted by torchrun's
  elastic agent: ``torchrun --max-restarts 1``), :mod:`~course.distributed.expert_parallel` (expert
  parallelism with ``all_to_all_single``) and :mod:`~course.distributed.ring_attention` (context
  parallelism with ``isend``/``irecv``).
- Lesson 14 runs them under a scheduler: :mod:`~course.distributed.slurm` (a real single-node Slurm
  started in a folder of its own, stopped by process id), :mod:`~course.distributed.job_mix`
  (the job mix run on it, or its recording), :mod:`~course.distributed.manifests` (Kubernetes
  manifests, Kueue's queues and the device plugin's configuration, checked offline) and
  :mod:`~course.distributed.serve` (lesson 13's server, the server image's entrypoint); ``jobs/``
  holds the batch scripts and manifests, ``container/Containerfile`` in the repository the images.

The calculators the demos are held against are in :mod:`course.calculators.parallel`.
"""
