"""The examples run as their docstrings say."""

from __future__ import annotations

import json
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


def test_ceiling_counts_agent_wins_and_flags_clashes(tmp_path):
    def files(won_seeds: list[int]) -> list[str]:
        summary = dict(agent="heuristic", wins=len(won_seeds), win_rate=len(won_seeds) / 3,
                       win_rate_ci95=[0.0, 1.0], mean_foundation_cards=10.0)
        records = [dict(agent="heuristic", deal_seed=s, won=s in won_seeds) for s in range(3)]
        (tmp_path / "eval.json").write_text(json.dumps(dict(env_id="Rainbow-v0", summaries={"heuristic": summary},
                                                            records=records)))
        (tmp_path / "solve.csv").write_text("seed,result,reason,nodes,seconds,solution_length,best_foundation\n"
                                            "0,won,,5,0.1,100,52\n1,unknown,time,9,60,0,20\n2,lost,,7,3,0,18\n")
        return [sys.executable, str(EXAMPLES / "ceiling.py"), "--env", "Rainbow-v0", "--eval-json", "eval.json",
                "--solve-csv", "solve.csv"]

    done = subprocess.run(files([1]), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| winnable: proved by the solver or won by an agent (deals 1) | 2 | 66.7% |" in done.stdout
    assert "| solver, every card known: proved winnable | 1 |" in done.stdout
    done = subprocess.run(files([2]), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "INCONSISTENT" in done.stdout and "won by an agent (deals" not in done.stdout


@pytest.mark.slow
def test_tune_sweep_with_a_tiny_budget(tmp_path):
    """Two Ray Tune trials of a few thousand steps each, scored on validation deals (about a minute)."""
    pytest.importorskip("ray")
    config = EXAMPLES.parent / "configs" / "quick.yaml"
    out = _run("tune_sweep.py", str(config), "--samples", "2", "--timesteps", "2048", "--eval-episodes", "4",
               "--storage", str(tmp_path / "tune"), cwd=tmp_path)
    assert "best:" in out and "| learning_rate |" in out
    trials = json.loads((tmp_path / "tune" / "sweep" / "sweep.json").read_text())["trials"]
    assert len(trials) == 2
    for t in trials:
        assert 0 <= t["win_rate"] <= 1 and t["validation_deals"] == "10020-10023"  # after quick.yaml's eval deals
        assert {"learning_rate", "ent_coef", "reveal_bonus"} == set(t["params"])


def test_recipe_curves_plot(tmp_path):
    """The recipe-curves figure from a run's pretrain.json (here a made-up one: two rounds, one scored per
    epoch), with the heuristic played on the run's validation deals."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(json.dumps({
        "env_id": "Rainbow-v0", "env_kwargs": {"no_revisit": True}, "eval": {"seed": 10_000},
        "pretrain": {"eval_episodes": 2, "epochs": 2}}))
    (run / "pretrain.json").write_text(json.dumps({"rounds": [
        {"examples_total": 100, "epoch_validation_win_rates": [0.0, 0.5], "validation": {"win_rate": 0.5}},
        {"examples_total": 200, "validation": {"win_rate": 1.0}}]}))
    out = _run("plot_recipe_curves.py", str(run), "--out", "curves.png", cwd=tmp_path)
    assert "wrote curves.png" in out
    assert (tmp_path / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_strength_figure_draws_the_baselines_table(tmp_path):
    """Every row of docs/baselines.md's "Strength against seconds" is a figure of the page's full tables (the
    same win rate and interval), each game has at least three budgets, and the script draws one panel each."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_strength", EXAMPLES / "plot_strength.py")
    plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot)
    games = plot.read_table()
    page = plot.BASELINES.read_text()
    elsewhere = page.split(plot.HEADING, 1)[0] + page.split(plot.HEADING, 1)[1].split("\n## ", 1)[1]
    for game, rows in games.items():
        assert len(rows) >= 3, game
        for row in rows:
            assert row["low"] <= row["win"] <= row["high"] and row["seconds"] > 0, (game, row)
            shown = f"{100 * row['win']:.1f}% | {100 * row['low']:.1f}% - {100 * row['high']:.1f}%"
            assert shown in elsewhere, (game, row["agent"], shown)
    anchors = plot.read_anchors()
    assert set(anchors) <= set(games) and "Klondike draw 3" in anchors
    for game, lines in anchors.items():
        for what, win in lines:  # each ceiling is the page's own figure
            assert what.startswith("Bjarnason") or f"{100 * win:.1f}%" in elsewhere, (game, what)
    out = _run("plot_strength.py", "--out", "strength.png", cwd=tmp_path)
    assert "wrote strength.png" in out and all(game in out for game in games)
    assert (tmp_path / "strength.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
