"""The shared package of the GPU-infrastructure course.

Layers (imports only point down; see CONTRIBUTING.md):
  5 entry points  ``__main__`` (``python -m course check|assign|grade``)
  4 presentation  ``widgets``, ``quiz``, ``plots``
  3 measurement   ``measure`` (needs torch)
  2 calculators   ``memory``, ``compute``, ``parallel``, ``datacenter``, ``cloud`` (pure, no torch)
  1 facts         ``units``, ``hardware``, ``models``, ``validate`` (standard library only)

Importing ``course`` imports nothing heavy; import the module you need.
"""

__version__ = "0.1.0"
