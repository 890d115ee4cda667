"""The shared package of the GPU-infrastructure course.

Layers (imports only point down; CONTRIBUTING.md has the full table):
  5 entry points  ``__main__`` (``python -m course check|measure|assign|grade|release|...``),
                  ``check``, ``grading/``
  4 presentation  ``widgets/``, ``quiz``, ``quizzes/``, ``plots``, ``diagrams``, ``findings/``
  3 measurement   ``measure/``, ``distributed/``, ``torchmodels``, ``quantize`` (need torch)
  2 calculators   ``memory``, ``compute``, ``inference``, ``energy``, ``parallel``, ``datacenter``,
                  ``cloud``, ``serving``, ``offload``, ``finetune``, ``techniques``, ``seed000``
                  (pure, no torch)
  1 facts         ``units``, ``validate``, ``report``, ``hardware``, ``models``, ``dtypes``, ``data/``
                  (standard library only)

Importing ``course`` imports nothing heavy; import the module you need.
"""

__version__ = "0.1.0"
