"""The suite's order on two workers (``FIRST`` in tests/conftest.py): the modules with a costly fixture run
first, each whole on one worker (docs/design.md, "Test sizes")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def _first() -> tuple[str, ...]:
    spec = importlib.util.spec_from_file_location("_conftest_order", TESTS / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FIRST


def test_every_module_named_first_exists():
    missing = [name for name in _first() if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py's FIRST names modules that do not exist: {missing}"


def test_the_modules_named_first_are_collected_first_in_that_order(request: pytest.FixtureRequest):
    first = _first()
    names = [item.path.name for item in request.session.items]
    ranks = [first.index(n) if n in first else len(first) for n in names]
    assert ranks == sorted(ranks)
    assert "test_order.py" in names[ranks.index(len(first)):]  # this module is not one of them
