"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# The JAX tests compile the same programs many times (a training run and its resumed pieces, the example,
# each xdist worker the differential test's steps): JAX's persistent compilation cache keeps them, under
# pytest's cache directory, so each is compiled once a run (a third of the JAX tests' time). Set before any
# test module imports JAX; a cache dir the caller set is kept.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR",
                      str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "jax-compilation"))

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="session")
def browser() -> str:
    """The path of a headless-capable browser; the test is skipped where none is installed (CI installs one)."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless browser installed (install the Debian package 'chromium' to run this test)")
