"""The suite's order on two workers (``FIRST`` in tests/conftest.py): the modules with a costly fixture run
first, each whole on one worker (docs/design.md, "Test sizes")."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIRST  # pytest puts tests/ on sys.path for its conftest (no package here)

TESTS = Path(__file__).resolve().parent


def test_every_module_named_first_exists():
    missing = [name for name in FIRST if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py's FIRST names modules that do not exist: {missing}"


def test_the_modules_named_first_are_collected_first_in_that_order(request: pytest.FixtureRequest):
    names = [item.path.name for item in request.session.items]
    ranks = [FIRST.index(n) if n in FIRST else len(FIRST) for n in names]
    assert ranks == sorted(ranks)
    assert "test_order.py" in names[ranks.index(len(FIRST)):]  # this module is not one of them
