"""The examples run as their docstrings say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(script: str, *args: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart(tmp_path):
    out = _run("quickstart.py", cwd=tmp_path)
    for env_id in ("RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"):
        assert f"{env_id} " in out
    assert "HeuristicAgent" in out and "RandomAgent" in out


@pytest.mark.slow
def test_train_then_evaluate_examples(tmp_path):
    assert "deal 7:" in _run("train_maskable_ppo.py", cwd=tmp_path)
    out = _run("evaluate.py", "rainbow_ppo.zip", cwd=tmp_path)
    assert "rainbow_ppo.zip" in out and (tmp_path / "rainbow_episodes.csv").is_file()


def test_ceiling_table(tmp_path):
    out = _run("ceiling.py", "--env", "Rainbow-v0", "--episodes", "6", "--agent", "heuristic", "--agent",
               "search:2x200", "--solve-nodes", "30000", "--jobs", "1", cwd=tmp_path)
    assert "| heuristic |" in out and "| search:2x200 |" in out
    assert "solver, every card known" in out and "consistency:" in out
