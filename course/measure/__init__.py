"""Real, bounded measurements of the machine at hand (torch and numpy).

- ``devices``: what the machine has (CPU, caches, memory, CUDA/MPS) and the CUDA version triangle.
- ``timing``: careful timing (warm-up, synchronisation, repeats, median and spread).
- ``matmul``, ``bandwidth``, ``kernels``: sweeps with a time budget, returning tidy records for
  ``course.presentation.plots`` (lessons 01, 02).
- ``precision``: numerics and a small training loop in fp32 / bf16 / fp16 (lesson 03).
- ``memory``: a training step's peak memory, split by MemTracker (lesson 04).
- ``quick``: ``python -m course measure``, a one-minute portrait of the machine.

Every figure measured here is a measurement of *this* machine: lessons print
``devices.describe_machine()`` beside it.
"""
