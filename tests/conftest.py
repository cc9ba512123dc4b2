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

# Modules run first, in this order: each has a costly module-scoped fixture (a training run, a benchmark run,
# a Ray cluster, a docs build) or the longest end-to-end tests. xdist's worksteal hands each worker a
# contiguous half of the tests and an idle worker steals from the end of the other's queue, so a module at the
# front runs whole on one worker and its fixture is built once (in the middle of the list a module was split
# and its fixture built on both workers), and the cheap tests left at the end keep the two workers level.
# Ray's cluster starts before any test starts JAX's runtime: Ray forks with a preexec_fn, which JAX's
# threads make unsafe (JAX warns).
FIRST = ("test_ray.py", "test_jax_training.py", "test_benchmark.py", "test_jax_ppo.py", "test_jit_cache.py",
         "test_bench_scripts.py", "test_docs_site.py", "test_integrations.py", "test_library_examples.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))  # stable: the rest keep their order


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="session")
def browser() -> str:
    """The path of a headless-capable browser; the test is skipped where none is installed (CI installs one)."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless browser installed (install the Debian package 'chromium' to run this test)")
