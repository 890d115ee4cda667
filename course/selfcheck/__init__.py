"""What a learner checks on their own: this machine (``python -m course check``,
:mod:`~course.selfcheck.environment`) and their answers (``grader.check("q1")``,
:mod:`~course.selfcheck.answers`, with :mod:`~course.selfcheck.values` and
:mod:`~course.selfcheck.coarse`, standard library only). Import-linter contracts keep the answer
checks to the standard library and the instructors' package out of the learners'."""
