"""Calculators: pure functions, one module per question answered (memory, FLOPs and time,
parallel layouts, energy, cloud cost, systems, offload, inference and serving, fine-tuning). SI
units
with the unit in every name; no torch, no widgets, no I/O. Imports only :mod:`course.facts`."""
