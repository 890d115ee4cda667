"""Tests mirror the package: tests/<layer>/ holds the tests of course/<layer>/, tests/project/ those
of the repository as a whole. This file sits at the top so pytest puts tests/ on sys.path, where
the shared helpers live (grading_cases.py, leaks.py, browser_setup.py, whose chromium fixture is
shared here).

`make unit` runs the suite on both cores (pytest-xdist, ``--dist loadfile``): each test file goes
to one worker as a whole, so its module fixtures run once. The files marked ``sandbox`` go to one
worker together, one after the other and first (the biggest piece of work): sandboxes started by
two processes at once would share their users' process limits (``grading.sandbox.slots`` are per
process) and the answer-key cache under ``build/grading``. Tests marked ``serial`` (they time
themselves or need the whole machine) run alone, in a pass of their own before the rest.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from browser_setup import chromium  # noqa: F401 - the fixture every browser test asks for

SANDBOX = "pytest.mark.sandbox"  # how a file marks itself (its ``pytestmark``)


@functools.cache
def _marked_sandbox(path: Path) -> bool:
    return path.suffix == ".py" and SANDBOX in path.read_text(encoding="utf-8")


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with every file marked ``sandbox`` in one unit of work. (The scheduler
    sees test ids only, so it reads the mark from the file; ``xdist_group`` would do this, but
    pytest-xdist 3.8 cannot rename the ids of pytest 9's tests, so ``--dist loadgroup`` splits
    files.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    root = config.rootpath

    class SandboxTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            return "sandbox" if _marked_sandbox(root / file) else file

    return SandboxTogether(config, log)


def _order(item) -> tuple[bool, bool]:
    """The sandbox's files first, then the lesson notebooks (the longest files), then the rest."""
    lesson = item.path.suffix == ".ipynb" and item.path.parent.name == "notebooks"
    return (item.get_closest_marker("sandbox") is None, not lesson)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """On an xdist worker, the sandbox's files first and the lessons next (the scheduler hands out
    files in this order, so the longest start early); a run in one process keeps the usual order."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=_order)  # stable
