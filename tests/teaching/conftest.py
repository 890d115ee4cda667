"""Fixtures shared by the teaching tests."""

from __future__ import annotations

import pytest
from export_cases import graded_class


@pytest.fixture
def klass(tmp_path):
    """A graded class on a roster: :func:`export_cases.graded_class`."""
    return graded_class(tmp_path)
