"""The shared package of the GPU-infrastructure course.

Layers are folders, imports only point down (``pyproject.toml``'s import-linter contracts check it;
CONTRIBUTING.md has the table):
  ``__main__``       the learner's commands (``python -m course check``, ``measure``)
  ``selfcheck/``     the environment check and the exercise sets' self-checks (standard library)
  ``presentation/``  widgets, quizzes, plots, diagrams, findings
  ``distributed/``   the local launcher and the multi-process demos (torch)
  ``measure/``       bounded measurements of this machine, torch models from configs (torch)
  ``claims/``        the readings' rules as written, beside the course's calculation
  ``calculators/``   pure functions: memory, FLOPs and time, parallelism, energy, cost, ...
  ``facts/``         units, validation, hardware registry, model configs, sourced data

The instructors' tools (grading, site, slides, answer keys) are a package of their own,
``teaching``, in ``instructors/``. Importing ``course`` imports nothing heavy; import the module
you need.
"""

__version__ = "0.1.0"
