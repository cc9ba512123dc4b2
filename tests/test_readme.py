"""The README is the front door: its leaderboard is on the first screen and every Python block runs as written.

Each ``python`` block runs on its own in a fresh interpreter, so a block that leans on an import or a
name from another block fails here. A block that trains reads its step budget from
``SOLITAIRE_ENV_STEPS``, which this test sets small; the figures beside the blocks are for the budgets
they default to.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", README, flags=re.S | re.M)
BUDGET = "64"  # environment steps for a block that trains: one rollout and one update
FIRST_SCREEN = 40  # lines


def _block_id(block: str) -> str:
    first = next(line for line in block.splitlines() if line.strip() and not line.startswith(("import", "from")))
    return re.sub(r"\W+", "_", first)[:40]


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 4, f"found {len(BLOCKS)} python blocks in README.md"


def test_the_leaderboard_is_on_the_first_screen():
    head = README.splitlines()[:FIRST_SCREEN]
    assert any(line.startswith("## Leaderboard") for line in head), f"no '## Leaderboard' in the first {FIRST_SCREEN}"
    rows = [line for line in head if line.startswith("| `")]
    assert {"`random`", "`heuristic`", "`search`", "`pretrained`"} <= {r.split("|")[1].split()[0] for r in rows}
    assert any("MaskablePPO from scratch" in line for line in head)
    assert any("solver" in line and "winnable" in line for line in head)


def test_the_leaderboard_is_the_one_in_the_baselines_page():
    """The README's table is the top of docs/baselines.md, figure for figure."""
    table = [line for line in README.split("## Leaderboard", 1)[1].splitlines() if line.startswith("|")][:10]
    baselines = (ROOT / "docs/baselines.md").read_text(encoding="utf-8").splitlines()
    missing = [line for line in table if line not in baselines]
    assert not missing, "README leaderboard rows not in docs/baselines.md:\n" + "\n".join(missing)


@pytest.mark.parametrize("block", BLOCKS, ids=[_block_id(b) for b in BLOCKS])
def test_each_python_block_runs_on_its_own(block, tmp_path):
    if "sb3_contrib" in block and importlib.util.find_spec("sb3_contrib") is None:
        pytest.skip("needs the train extra (sb3-contrib)")
    if ".learn(" in block:
        assert "SOLITAIRE_ENV_STEPS" in block, "a block that trains must read its budget from SOLITAIRE_ENV_STEPS"
    env = {**os.environ, "SOLITAIRE_ENV_STEPS": BUDGET}
    proc = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"README block failed (exit {proc.returncode}):\n{block}\n{proc.stderr[-3000:]}"
