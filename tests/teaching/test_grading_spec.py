"""Reading a set's questions from its solution notebook: the learner's blanks."""

from __future__ import annotations


def test_a_blank_answer_runs_for_tuple_targets_and_statements_over_several_lines():
    """The learner's blank must run: ``a, b = ...`` cannot unpack, and a marked continuation line
    left behind is an IndentationError (exercise sets 12 and 13 had both)."""
    from teaching.grading.spec import _strip_solution

    learner = _strip_solution(
        "plan = failure_plan(3, checkpoint_seconds=10,  # SOLUTION\n"
        "                    restart_seconds=60)  # SOLUTION\n"
        "replicas, gpus = plan.replicas, plan.gpus  # SOLUTION\n"
        "replicas, gpus"
    )
    assert learner == "plan = ...\nreplicas, gpus = ..., ...\nreplicas, gpus"
    namespace: dict = {}
    exec(learner, namespace)  # noqa: S102 - the blank the learner receives runs
    assert namespace["replicas"] is Ellipsis
