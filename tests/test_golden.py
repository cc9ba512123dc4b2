"""The golden playthroughs (tests/golden/*.txt): a fresh playthrough of each case matches its file line for line.

A difference is a change in what the envs do (rules, observation, mask, reward, info): if it is meant,
regenerate the files with the command in the failure message and commit the reviewed diff.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path

import pytest

# The script lives beside its files (tests/ is no package); registered in sys.modules for its dataclass.
_spec = importlib.util.spec_from_file_location("golden_playthroughs",
                                               Path(__file__).parent / "golden" / "playthroughs.py")
golden = sys.modules.setdefault("golden_playthroughs", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(golden)


@pytest.mark.parametrize("case", golden.CASES, ids=lambda c: c.name)
def test_playthrough_matches_its_golden_file(case):
    path = golden.path_of(case)
    assert path.is_file(), f"no golden file {path}: run {golden.COMMAND}"
    expected, got = path.read_text().splitlines(), golden.playthrough(case).splitlines()
    if got != expected:
        diff = list(difflib.unified_diff(expected, got, str(path), "fresh playthrough", n=2, lineterm=""))
        shown = "\n".join(diff[:60]) + (f"\n... {len(diff) - 60} more diff lines" if len(diff) > 60 else "")
        pytest.fail(f"{case.name} plays differently from {path.name}; if the change is meant, run "
                    f"{golden.COMMAND} and commit the reviewed diff.\n{shown}", pytrace=False)


def test_every_golden_file_is_a_case_and_small():
    files = {p.name for p in golden.HERE.glob("*.txt")}
    assert files == {golden.path_of(c).name for c in golden.CASES}
    for name in files:
        assert (golden.HERE / name).stat().st_size < 200_000, name


def test_the_cases_cover_the_options_and_the_endings():
    texts = {c.name: golden.path_of(c).read_text() for c in golden.CASES}
    assert {c.env_id for c in golden.CASES} == {"RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", "FreeCell-v0",
                                                 "Klondike-v0"}
    assert "redeal: waste -> stock" in texts["klondike_draw3"] and "foundation 0 -> tableau" in texts["klondike"]
    assert "stuck=True" in texts["klondike_no_revisit"] and "action_features (183, 11)" in texts["klondike_piles"]
    assert "action_features (216, 11)" in texts["freecell_piles"] and "\n  cells: " in texts["freecell"]
    assert "stuck=" in texts["rainbow_no_revisit"] and "action_features (243, 11)" in texts["rank_and_file_piles"]
    assert any("terminated=True" in t for t in texts.values()) and any("truncated=True" in t for t in texts.values())
    assert all(golden.COMMAND in t.splitlines()[2] for t in texts.values())  # the header says how to regenerate
