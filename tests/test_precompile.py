"""Compiling the engine ahead of first use (solitaire_env/tools/precompile.py, what .ci/run does first)."""

import pytest

from solitaire_env.tools import precompile


def test_both_halves_run_and_report_their_seconds(capsys):
    assert precompile.main(["--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("precompiled in ")
    for part in precompile.PARTS:
        assert f"{part} " in out


def test_a_failed_half_is_an_error_naming_it(monkeypatch):
    monkeypatch.setattr(precompile, "MODULE", "solitaire_env.tools.no_such_module")
    with pytest.raises(RuntimeError, match="part 'vector' failed"):
        precompile.precompile(jobs=1)


def test_jobs_must_be_positive():
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        precompile.precompile(jobs=0)
