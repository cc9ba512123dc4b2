"""``solitaire-env solve`` and ``solitaire-env solvitaire``: results, summary, files and bad input."""

import csv
import json

import pytest

from solitaire_env.engine import state
from solitaire_env.engine.games import RANK_AND_FILE
from solitaire_env.solver import solve
from solitaire_env.solver.solvitaire import card_name, to_solvitaire
from solitaire_env.solver.winnability import solve_deals
from solitaire_env.tools.cli import main
from solitaire_env.tools.winnability import parse_seeds, summarize


def test_solve_command_writes_rows_and_summary(tmp_path, capsys):
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    assert main(["solve", "rainbow", "--seeds", "0:6", "--time-limit", "3", "--jobs", "2", "--no-progress",
                 "--csv", str(out_csv), "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "winnable:" in text and "95% CI" in text
    rows = list(csv.DictReader(out_csv.open()))
    assert [int(r["seed"]) for r in rows] == list(range(6))
    assert {r["result"] for r in rows} <= {"won", "lost", "unknown"}
    summary = json.loads(out_json.read_text())
    assert summary["deals"] == 6
    assert summary["won"] + summary["lost"] + summary["unknown"] == 6
    assert summary["won"] == sum(r["result"] == "won" for r in rows)
    for r in rows:
        assert (int(r["solution_length"]) > 0) == (r["result"] == "won")


def test_parallel_and_serial_runs_agree_under_a_node_limit():
    serial = solve_deals("rainbow", range(4), time_limit=None, max_nodes=20_000, jobs=1)
    parallel = solve_deals("rainbow", range(4), time_limit=None, max_nodes=20_000, jobs=2)
    key = [(r.seed, r.result, r.nodes, r.solution_length) for r in serial]
    assert key == [(r.seed, r.result, r.nodes, r.solution_length) for r in parallel]


def test_summary_counts_unknown_both_ways():
    results = solve_deals("rank_and_file", range(3), time_limit=None, max_nodes=300)
    s = summarize("rank_and_file", results, None)
    assert s["won"] + s["lost"] + s["unknown"] == 3
    assert s["winnable"] <= s["winnable_if_unknown_won"]
    assert s["winnable_ci95"][0] <= s["winnable"] <= s["winnable_ci95"][1]


@pytest.mark.parametrize("argv, message", [
    (["solve", "spider", "--seeds", "0:3"], "unknown variant"),
    (["solve", "rainbow", "--seeds", "5:2"], "bad seed range"),
    (["solve", "rainbow", "--seeds", "a:b"], "bad seed range"),
    (["solve", "rainbow", "--seeds=-3:2"], "bad seed range"),
    (["solve", "rainbow", "--seeds", "0:2", "--time-limit", "0"], "--time-limit must be positive"),
    (["solve", "rainbow", "--seeds", "0:2", "--jobs", "0"], "must be positive"),
    (["solve", "rainbow", "--seeds", "0:2", "--restart-share", "1"], "--restart-share must be"),
    (["solve", "rainbow", "--seeds", "0:2", "--restart-share", "-0.1"], "--restart-share must be"),
    (["solvitaire", "--seeds", "2:2", "--out", "x"], "bad seed range"),
])
def test_bad_input_is_a_clear_error(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def _spy_solve(monkeypatch) -> list[tuple[dict, object]]:
    """Record every call the solve command makes to the solver: (keyword arguments, result)."""
    from solitaire_env.solver import winnability

    real, calls = winnability.solve, []

    def spy(*args, **kwargs):
        calls.append((kwargs, real(*args, **kwargs)))
        return calls[-1][1]

    monkeypatch.setattr(winnability, "solve", spy)
    return calls


def test_restart_share_reaches_the_solver(tmp_path, monkeypatch):
    out = tmp_path / "r.csv"
    calls = _spy_solve(monkeypatch)
    assert main(["solve", "rank_and_file", "--seeds", "2:3", "--max-nodes", "1000", "--restart-share", "0.5",
                 "--no-agent-guidance", "--jobs", "1", "--no-progress", "--csv", str(out)]) == 0
    (row,) = list(csv.DictReader(out.open()))
    ((kwargs, result),) = calls
    options = kwargs["options"]
    assert options.first_phase == 0.5 and options.agent_guidance is False and options.max_nodes == 1000
    assert options.playout is None  # no guidance: no player
    assert (row["result"], int(row["nodes"])) == (result.result, result.nodes)
    with pytest.raises(ValueError, match="restart share"):
        solve_deals("rank_and_file", [0], first_phase=1.0)


@pytest.mark.parametrize("share", [0.5, 0.9])
def test_the_restarts_never_spend_more_than_their_share(monkeypatch, share):
    """The restarts (first phase, promising moves only) stop at their share of the node limit, to within
    one slice; whatever is left goes to the complete search."""
    from solitaire_env.solver import api

    spent = []  # (searched only the promising moves, positions) per search
    real = api._drive

    def spy(search, stop, slice_nodes):
        out = real(search, stop, slice_nodes)
        spent.append((search.min_score > 0, search.nodes))
        return out

    monkeypatch.setattr(api, "_drive", spy)
    limit = 100_000
    result = solve("rank_and_file", seed=2, time_limit=None, max_nodes=limit, first_phase=share,
                   agent_guidance=False)
    restarts = sum(n for promising, n in spent if promising)
    assert restarts <= share * limit + api.RESTART_NODES
    assert result.nodes == sum(n for _, n in spent)


def test_parse_seeds():
    assert parse_seeds("3:7") == range(3, 7)
    assert parse_seeds("4") == range(4, 5)


def test_solvitaire_export_is_the_deal(tmp_path, capsys):
    assert main(["solvitaire", "--seeds", "0:3", "--out", str(tmp_path)]) == 0
    assert "rank-and-file" in capsys.readouterr().out
    for seed in range(3):
        deal = json.loads((tmp_path / f"rank_and_file-{seed}.json").read_text())
        ours = state.to_json(RANK_AND_FILE, state.deal(RANK_AND_FILE, seed))
        assert set(deal) == {"tableau piles", "stock"}
        # Same cards in the same places: piles bottom first, the stock's last card dealt first.
        for pile, exported in zip(ours["tableau"], deal["tableau piles"], strict=True):
            assert [c.lstrip("#").replace("T", "10").upper() for c in pile] == exported
        assert [c.replace("T", "10").upper() for c in ours["stock"]] == deal["stock"]
        names = [c for p in deal["tableau piles"] for c in p] + deal["stock"]
        assert len(names) == 104 and all(names.count(c) == 2 for c in set(names))


def test_solvitaire_card_names_and_refusals():
    assert [card_name(c) for c in (0, 9, 13 + 10, 39 + 12)] == ["AC", "10C", "JD", "KS"]
    s = state.deal(RANK_AND_FILE, 0)
    from solitaire_env.engine import core

    core.apply_action(s, RANK_AND_FILE.spec, RANK_AND_FILE.actions, 0)  # draw: the waste is no longer empty
    with pytest.raises(ValueError, match="fresh deal"):
        to_solvitaire(s)
    with pytest.raises(ValueError, match="Rank and File state"):
        to_solvitaire(state.deal("rainbow", 0))


def test_retry_solves_only_the_unknown_deals_again(tmp_path, capsys):
    first = tmp_path / "first.csv"
    first.write_text("seed,result,reason,nodes,seconds,solution_length,best_foundation\n"
                     "3,won,,10,0.1,140,52\n5,unknown,nodes,100,0.1,0,19\n8,unknown,nodes,100,0.1,0,12\n")
    again, summary_path = tmp_path / "again.csv", tmp_path / "again.json"
    assert main(["solve", "rainbow", "--retry", str(first), "--max-nodes", "20000", "--jobs", "1", "--no-progress",
                 "--csv", str(again), "--json", str(summary_path)]) == 0
    assert "retried the 2 deals" in capsys.readouterr().out
    rows = {int(r["seed"]): r for r in csv.DictReader(again.open())}
    assert sorted(rows) == [3, 5, 8]  # every deal of the first run, the decided one carried over
    assert rows[3]["result"] == "won" and rows[3]["nodes"] == "10"
    for seed in (5, 8):  # solved again, with the new limit
        expected = solve_deals("rainbow", [seed], time_limit=60.0, max_nodes=20000)[0]
        assert (rows[seed]["result"], int(rows[seed]["nodes"])) == (expected.result, expected.nodes)
    summary = json.loads(summary_path.read_text())
    assert summary["deals"] == 3 and summary["retried"] == 2
    assert summary["won"] == sum(r["result"] == "won" for r in rows.values())
    assert summary["decided_on_retry"] == sum(rows[s]["result"] != "unknown" for s in (5, 8))
    (tmp_path / "bad.csv").write_text("seed,result\n3,won\n4,maybe\n")
    with pytest.raises(SystemExit):
        main(["solve", "rainbow", "--retry", str(tmp_path / "bad.csv")])
    assert "line 3" in capsys.readouterr().err
    (tmp_path / "done.csv").write_text("seed,result\n3,won\n")
    with pytest.raises(SystemExit):
        main(["solve", "rainbow", "--retry", str(tmp_path / "done.csv")])
    assert "nothing to retry" in capsys.readouterr().err
    (tmp_path / "other.csv").write_text("agent,deal_seed\nx,1\n")
    with pytest.raises(SystemExit):
        main(["solve", "rainbow", "--retry", str(tmp_path / "other.csv")])
    assert "not a solve CSV" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["solve", "rainbow", "--retry", str(tmp_path / "missing.csv")])
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("game, flag, macros", [
    ("rainbow", None, True), ("rainbow", "--no-stock-macros", False),
    ("rank_and_file", None, False), ("rank_and_file", "--stock-macros", True)])
def test_stock_macros_default_per_game_and_flags_reach_the_solver(tmp_path, game, flag, macros):
    out = tmp_path / "r.csv"
    seeds = "953:954" if game == "rainbow" else "0:1"
    args = ["solve", game, "--seeds", seeds, "--max-nodes", "3000000", "--jobs", "1", "--no-progress",
            "--csv", str(out)]
    assert main(args + ([flag] if flag else [])) == 0
    (row,) = list(csv.DictReader(out.open()))
    seed = int(seeds.split(":")[0])
    chosen = solve(game, seed=seed, time_limit=None, max_nodes=3000000, stock_macros=macros)
    other = solve(game, seed=seed, time_limit=None, max_nodes=3000000, stock_macros=not macros)
    assert (row["result"], int(row["nodes"])) == (chosen.result, chosen.nodes)
    assert chosen.nodes != other.nodes  # the two searches differ, so the row tells which one ran


@pytest.mark.parametrize("flag, guidance", [(None, True), ("--agent-guidance", True), ("--no-agent-guidance", False)])
def test_the_agent_guidance_flags_reach_the_solver(tmp_path, monkeypatch, flag, guidance):
    # No flag leaves it to the game's default: on for the two-deck games. With guidance, the command
    # gives the solver the heuristic agent as its player.
    from solitaire_env.agents.heuristic import playout

    out = tmp_path / "r.csv"
    calls = _spy_solve(monkeypatch)
    args = ["solve", "rank_and_file", "--seeds", "336:337", "--max-nodes", "1000", "--jobs", "1", "--no-progress",
            "--csv", str(out)]
    assert main(args + ([flag] if flag else [])) == 0
    (row,) = list(csv.DictReader(out.open()))
    ((kwargs, result),) = calls
    assert kwargs["options"].agent_guidance is guidance
    assert kwargs["options"].playout is (playout if guidance else None)
    assert (row["result"], int(row["nodes"])) == (result.result, result.nodes)
