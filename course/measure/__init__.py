"""Real, bounded measurements of the machine at hand (layer 3: imports torch and numpy).

- ``devices``: what the machine has (CPU, caches, memory, CUDA/MPS) and the CUDA version triangle.
- ``timing``: careful timing (warm-up, synchronisation, repeats, median and spread).
- ``matmul``, ``bandwidth``: sweeps with a time budget, returning tidy records for ``course.plots``.

Every figure measured here is a measurement of *this* machine: lessons print
``devices.describe_machine()`` beside it.
"""
