"""Exercise sets: authoring, public checks, sandboxed extraction, trusted checking, gradebook,
release.

One job per module:

- :mod:`~teaching.grading.spec`: the authoring format of ``solutions/NN_slug.ipynb``;
- :mod:`~teaching.grading.authoring`: ``python -m teaching assign``: answer key,
  ``exercises/`` and its checks;
- :mod:`~teaching.grading.runner`: runs a notebook's code and extracts plain answers (in
  the sandbox);
- :mod:`~teaching.grading.sandbox` (+ ``sandbox_init``, ``zygote``): namespaces, hidden
  files, limits, user nobody, per-cell watchdog, and the warm factory that forks one sandbox per
  submission;
- :mod:`~teaching.grading.extract`: one sandboxed run, its results read as untrusted JSON;
- :mod:`~teaching.grading.check`: the trusted checker;
- :mod:`~teaching.grading.gradebook`: ``python -m teaching grade``: a folder of submissions
  into CSVs;
- :mod:`~teaching.grading.roster`: ``--roster``/``--pattern``: which file is whose;
- :mod:`~teaching.grading.exports`: ``--export``: files for Canvas, Moodle, nbgrader,
  PrairieLearn and Gradescope, and Gradescope's autograder archive;
- :mod:`~teaching.grading.history`: each run kept, and a regrade's diff;
- :mod:`~teaching.grading.leaks`: finds hidden values in text a learner reads;
- :mod:`~teaching.grading.release`: ``python -m teaching release``: what students receive.

The learner's side, ``grader.check("q1")`` with the canonical forms, salted hashes and coarse ranges
both sides share, is in the learners' package (:mod:`course.selfcheck`), which ships in the student
release. Importing this package imports nothing: each module is imported where it is used.
"""
