"""Tests mirror the package: tests/<layer>/ holds the tests of course/<layer>/, tests/project/ those
of the repository as a whole. This file sits at the top so pytest puts tests/ on sys.path, where
the shared helpers live (grading_cases.py, leaks.py, browser_setup.py, whose chromium fixture is
shared here)."""

from browser_setup import chromium  # noqa: F401 - the fixture every browser test asks for
