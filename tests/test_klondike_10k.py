"""Klondike on deals 0-9999 (``benchmarks/klondike_10k.py``): which pass's answer counts for a deal, the draw 1 /
draw 3 cross-check, and the committed rows behind the figures of docs/winnability.md."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks import klondike_10k as k10
from solitaire_env.solver import winnability as w

SNAPSHOTS = sorted(k10.DEFAULT_DIR.glob("*.csv.gz"))
# The budget of each pass of benchmarks/klondike_10k.sh (positions, seconds), by its pass number.
BUDGETS = {1: (4_000_000, 600.0), 2: (30_000_000, 3600.0), 3: (300_000_000, 7200.0)}


def _row(seed: int, result: str, attempt: int = 1) -> w.DealResult:
    line = "d" if result == "won" else ""
    return w.DealResult(seed=seed, result=result, reason="nodes" if result == "unknown" else "", nodes=10,
                        seconds=0.1, solution_length=int(result == "won"), best_foundation=0, attempt=attempt,
                        max_nodes=4_000_000, time_limit=600.0, line=line)


def test_a_later_pass_answers_for_the_deals_it_searched_and_the_shipped_deals_come_first(tmp_path):
    w.write_results(tmp_path / "draw3_pass1.csv.gz",
                    [_row(1000, "won"), _row(1001, "unknown"), _row(1002, "unknown"), _row(1003, "lost")])
    w.write_results(tmp_path / "draw3_pass2.csv", [_row(1001, "lost", 2)])  # a pass still running: its rows so far
    rows = k10.deals_0_9999("klondike_draw3", tmp_path)
    assert [r.seed for r in rows] == [*range(1000), 1000, 1001, 1002, 1003]
    assert [(r.result, r.attempt) for r in rows[1000:]] == [("won", 1), ("lost", 2), ("unknown", 1), ("lost", 1)]
    assert rows[:1000] == w.load("klondike_draw3")
    # A plain CSV (a run writing to it) is read before the snapshot of the same pass.
    w.write_results(tmp_path / "draw3_pass2.csv.gz", [_row(1002, "won", 2)])
    assert k10.deals_0_9999("klondike_draw3", tmp_path)[1002].result == "unknown"


def test_a_deal_won_in_draw_3_and_lost_in_draw_1_is_reported_and_fails_the_report(tmp_path, capsys):
    assert k10.contradictions([_row(5, "won"), _row(6, "won")], [_row(5, "won"), _row(6, "lost")]) == [6]
    assert k10.contradictions([_row(5, "lost")], [_row(5, "won")]) == []  # draw 1 can win what draw 3 cannot
    shipped_won3 = next(r.seed for r in w.load("klondike_draw3") if r.result == "won")
    w.write_results(tmp_path / "draw1_pass1.csv", [_row(shipped_won3, "lost")])
    assert k10.main([str(tmp_path)]) == 1
    assert f"proved lost in draw 1: 1 [{shipped_won3}]" in capsys.readouterr().out


@pytest.mark.skipif(not SNAPSHOTS, reason="no committed rows")
@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name)
def test_each_committed_pass_keeps_its_budget_and_a_sample_of_its_lines_replays(path: Path):
    game = "klondike" if path.name.startswith("draw1") else "klondike_draw3"
    rows = w.read_results(path)
    assert rows and len({r.seed for r in rows}) == len(rows)
    for r in rows:
        assert (r.max_nodes, r.time_limit) == BUDGETS[r.attempt], r
        assert (r.result == "won") == bool(r.line)
    won = [r for r in rows if r.result == "won"]
    replayed, failures = w.replay_lines(game, random.Random(path.name).sample(won, min(10, len(won))))
    assert failures == [] and replayed == min(10, len(won))


def test_no_committed_deal_is_won_in_draw_3_and_proved_lost_in_draw_1():
    draw3, draw1 = (k10.deals_0_9999(game) for game in ("klondike_draw3", "klondike"))
    assert k10.contradictions(draw3, draw1) == []
