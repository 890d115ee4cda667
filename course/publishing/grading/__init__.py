"""Exercise sets: authoring, public checks, sandboxed extraction, trusted checking, gradebook,
release.

One job per module:

- :mod:`~course.publishing.grading.spec`: the authoring format of ``solutions/NN_slug.ipynb``;
- :mod:`~course.publishing.grading.values`: canonical forms, salted hashes, the comparison both
  sides share;
- :mod:`~course.publishing.grading.authoring`: ``python -m course assign``: answer key,
  ``exercises/`` and its checks;
- :mod:`~course.publishing.grading.learner`: ``grader.check("q1")`` in the learner's notebook;
- :mod:`~course.publishing.grading.coarse`: a graded release's checks (form, units, coarse range);
- :mod:`~course.publishing.grading.runner`: runs a notebook's code and extracts plain answers (in
  the sandbox);
- :mod:`~course.publishing.grading.sandbox` (+ ``sandbox_init``, ``zygote``): namespaces, hidden
  files, limits, user nobody, per-cell watchdog, and the warm factory that forks one sandbox per
  submission;
- :mod:`~course.publishing.grading.extract`: one sandboxed run, its results read as untrusted JSON;
- :mod:`~course.publishing.grading.check`: the trusted checker;
- :mod:`~course.publishing.grading.gradebook`: ``python -m course grade``: a folder of submissions
  into CSVs;
- :mod:`~course.publishing.grading.leaks`: finds hidden values in text a learner reads;
- :mod:`~course.publishing.grading.release`: ``python -m course release``: what students receive.

Importing this package imports nothing: each module is imported where it is used, so that the
learner's ``from course.publishing.grading.learner import Grader`` loads the standard library only
(``pyproject.toml`` has an import-linter contract for it).
"""
