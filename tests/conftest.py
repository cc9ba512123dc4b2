"""Fixtures shared by the test modules."""

from __future__ import annotations

import shutil

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="session")
def browser() -> str:
    """The path of a headless-capable browser; the test is skipped where none is installed (CI installs one)."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless browser installed (install the Debian package 'chromium' to run this test)")
