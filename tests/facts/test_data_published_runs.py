"""course.facts.data.published_runs: every run names its source and has no missing figure; the
calculators check the figures themselves against these rows (tests/calculators/test_cost.py)."""

from __future__ import annotations

import math

import pytest

from course.facts.data import published_runs


def test_published_runs_have_sources_and_lookup_errors_name_the_choices():
    for run in published_runs.RUNS.values():
        assert "http" in run.source and run.model
        assert not any(isinstance(v, float) and math.isnan(v) for v in vars(run).values())
    with pytest.raises(ValueError, match="llama-2-7b"):
        published_runs.run("gpt-5")
