"""Headless Chromium for the browser tests (tests/project/test_browser.py,
tests/teaching/test_site.py, tests/teaching/test_offline.py): Debian's chromium driven by
Playwright, never a downloaded browser."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # Without these Chromium tries to reach Google's servers and, on a closed network, its
    # connections (the ones to the local server included) can be refused.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    """Skip, or fail when CI is set: there the browser test must run."""
    if os.environ.get("CI"):
        pytest.fail(f"CI is set, so the browser test may not be skipped: {reason}")
    pytest.skip(reason)


@pytest.fixture
def chromium() -> str:
    """Path of Debian's chromium; checked before a server is started for nothing."""
    path = shutil.which("chromium")
    if path is None:
        _unavailable(
            "Debian's chromium is not installed (apt-get install -y chromium); "
            "the browser test drives it through Playwright and never downloads a browser"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("the playwright package is not installed (make install-instructors)")
    return path
