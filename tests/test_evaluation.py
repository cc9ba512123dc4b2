"""Evaluation: the Wilson interval, reproducible figures, the records, and the ``solitaire-env`` command."""

from __future__ import annotations

import csv
import json
import math
import re

import gymnasium as gym
import pytest

import solitaire_env  # noqa: F401
from solitaire_env.agents import make_agent
from solitaire_env.tools.cli import main
from solitaire_env.tools.evaluation import agent_seed, evaluate, wilson_interval

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]


# --- the Wilson score interval ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "wins, n, low, high",
    [
        # By hand, from the other way of writing the interval, z = 1.959964 (z² = 3.841459):
        # (k + z²/2 ± z sqrt(k(n-k)/n + z²/4)) / (n + z²). 0 of 10: upper z²/(n + z²) = 3.841459/13.841459;
        # 10 of 10: lower n/(n + z²); 5 of 10: 0.5 ± 1.959964 * sqrt(2.5 + 0.960365) / 13.841459.
        (0, 10, 0.0, 0.2775328),
        (5, 10, 0.2365931, 0.7634069),
        (10, 10, 0.7224672, 1.0),
        (1, 10, 0.0178762, 0.4041500),
        (81, 263, 0.2552885, 0.3662096),
    ],
)
def test_wilson_interval_known_values(wins, n, low, high):
    assert wilson_interval(wins, n) == pytest.approx((low, high), abs=1e-7)


def test_wilson_interval_rejects_bad_counts():
    for wins, n in [(0, 0), (11, 10), (-1, 10)]:
        with pytest.raises(ValueError):
            wilson_interval(wins, n)


# --- evaluate ----------------------------------------------------------------------------------


def _agents(env_id):
    return {name: make_agent(name, env_id, seed=0) for name in ("random", "heuristic")}


def _without_seconds(table):
    """The table less its last column, s/game: the one figure the clock sets."""
    return "\n".join(re.sub(r"[^|]*\|$", "", line) if line.startswith("|") else line for line in table.splitlines())


def _seconds_column(table):
    """Agent -> its s/game cell, from the table's rows."""
    rows = [line.strip("|").split("|") for line in table.splitlines() if line.startswith("| ")][1:]
    return {cells[0].strip(): cells[-1].strip() for cells in rows}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_evaluation_is_reproducible_to_the_digit(env_id, tmp_path):
    runs = []
    for k in range(2):
        result = evaluate(env_id, _agents(env_id), episodes=4, seed=11, max_episode_steps=150)
        result.write_csv(tmp_path / f"{k}.csv")
        result.write_json(tmp_path / f"{k}.json")
        runs.append(result)
    assert runs[0].to_dict() == runs[1].to_dict()
    assert runs[0].table() != _without_seconds(runs[0].table())  # the clock's column is there to drop
    assert _without_seconds(runs[0].table()) == _without_seconds(runs[1].table())
    assert (tmp_path / "0.csv").read_bytes() == (tmp_path / "1.csv").read_bytes()
    assert (tmp_path / "0.json").read_bytes() == (tmp_path / "1.json").read_bytes()


def test_every_agent_plays_the_same_deals_and_records_are_consistent():
    env_id = "Rainbow-v0"
    result = evaluate(env_id, _agents(env_id), episodes=20, seed=100)
    variant = gym.make(env_id).unwrapped.variant
    assert result.max_episode_steps == variant.max_episode_steps  # the registered limit
    for name in ("random", "heuristic"):
        records = [r for r in result.records if r.agent == name]
        assert [r.deal_seed for r in records] == list(range(100, 120))
        for r in records:
            assert r.won == (r.foundation_cards == variant.n_cards)
            assert 1 <= r.foundation_cards <= variant.n_cards  # Rainbow deals one card up
            assert not r.truncated or r.length == variant.max_episode_steps
            # Default rewards: the return is the share of the cards still to win that went up.
            assert r.episode_return == pytest.approx((r.foundation_cards - 1) / (variant.n_cards - 1))
        s = result.summaries[name]
        assert s.episodes == 20 and s.wins == sum(r.won for r in records)
        assert s.win_rate_ci95 == wilson_interval(s.wins, 20)
    assert result.summaries["heuristic"].wins > result.summaries["random"].wins


def test_seconds_per_game_are_measured_shown_and_kept_out_of_the_files(tmp_path):
    result = evaluate("Rainbow-v0", _agents("Rainbow-v0"), episodes=3, seed=0)
    shown = _seconds_column(result.table())
    assert "s/game" in result.table() and set(shown) == {"random", "heuristic"}
    for name, s in result.summaries.items():
        seconds = [r.seconds for r in result.records if r.agent == name]
        assert all(x is not None and math.isfinite(x) and x > 0 for x in seconds)
        assert s.seconds_per_game == pytest.approx(sum(seconds) / len(seconds))
        assert float(shown[name]) == pytest.approx(s.seconds_per_game, rel=0.01)  # three digits
    result.write_csv(tmp_path / "e.csv")
    result.write_json(tmp_path / "e.json")
    assert "second" not in (tmp_path / "e.csv").read_text() + (tmp_path / "e.json").read_text()


def test_time_limit_truncates_and_is_recorded():
    result = evaluate("RankAndFile-v0", {"random": make_agent("random", "RankAndFile-v0")}, 3, 0,
                      max_episode_steps=20)
    assert result.max_episode_steps == 20
    assert all(r.truncated and r.length == 20 for r in result.records)
    assert result.summaries["random"].truncation_rate == 1.0


def test_agent_seeds_come_from_the_deal():
    seeds = [agent_seed(s) for s in range(100)]
    assert len(set(seeds)) == 100 and seeds == [agent_seed(s) for s in range(100)]
    assert all(a != s for a, s in zip(seeds, range(100), strict=True))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(env_id="Spider-v0"), "unknown env id"),
        (dict(episodes=0), "episodes must be positive"),
        (dict(seed=-1), "seed must be non-negative"),
        (dict(agents={}), "no agents"),
    ],
)
def test_evaluate_rejects_bad_arguments(kwargs, message):
    args = dict(env_id="Rainbow-v0", agents={"random": make_agent("random", "Rainbow-v0")}, episodes=2, seed=0)
    with pytest.raises(ValueError, match=message):
        evaluate(**{**args, **kwargs})


def test_progress_bar(capsys):
    evaluate("Rainbow-v0", {"random": make_agent("random", "Rainbow-v0")}, 3, 0, progress=True)
    assert "random" in capsys.readouterr().err


# --- the command -------------------------------------------------------------------------------


def test_cli_evaluate_end_to_end(tmp_path, capsys):
    out_csv, out_json = tmp_path / "episodes.csv", tmp_path / "evaluation.json"
    status = main(["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--agent", "heuristic",
                   "--episodes", "3", "--seed", "5", "--csv", str(out_csv), "--json", str(out_json), "--no-progress"])
    assert status == 0
    out = capsys.readouterr().out
    assert "Rainbow (Rainbow-v0), 3 deals (test deals 5-7)" in out
    assert "| random " in out and "| heuristic " in out and "95% CI (Wilson)" in out
    shown = _seconds_column(out)
    assert set(shown) == {"random", "heuristic"} and " s/game |" in out
    assert all(math.isfinite(float(x)) and float(x) > 0 for x in shown.values())
    with open(out_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    expected = [(agent, seed) for agent in ("random", "heuristic") for seed in (5, 6, 7)]
    assert [(r["agent"], int(r["deal_seed"])) for r in rows] == expected
    assert set(rows[0]) == {"agent", "deal_seed", "won", "foundation_cards", "length", "truncated", "return"}
    data = json.loads(out_json.read_text())
    assert data["env_id"] == "Rainbow-v0" and data["deal_seeds"] == [5, 7] and len(data["records"]) == 6
    assert set(data["summaries"]) == {"random", "heuristic"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env", "Spider-v0", "--agent", "random", "--episodes", "3"], "unknown env id 'Spider-v0'"),
        (["--env", "Rainbow-v0", "--agent", "greedy", "--episodes", "3"], "unknown agent 'greedy'"),
        (["--env", "Rainbow-v0", "--agent", "runs/none/model.zip", "--episodes", "3"],
         "checkpoint not found: runs/none/model.zip"),
        (["--env", "Rainbow-v0", "--agent", "random", "--episodes", "0"], "--episodes: must be positive"),
        (["--env", "Rainbow-v0", "--agent", "random", "--episodes", "-4"], "--episodes: must be positive"),
        (["--env", "Rainbow-v0", "--agent", "random", "--episodes", "many"], "expected a positive integer"),
        (["--env", "Rainbow-v0", "--agent", "random"], "required: --episodes"),
        (["--env", "Rainbow-v0", "--agent", "random", "--agent", "random", "--episodes", "2"], "given twice"),
        (["--env", "Rainbow-v0", "--agent", "random", "--episodes", "2", "--csv", "/no/such/dir/x.csv"],
         "no such directory"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", *argv])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert message in err and err.startswith("solitaire-env evaluate: error:")
    assert len(err.splitlines()) == 1 and "Traceback" not in err and captured.out == ""


def test_cli_needs_a_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err


# --- a trained checkpoint ----------------------------------------------------------------------


def test_tiny_maskable_ppo_checkpoint_loads_and_evaluates(tmp_path, capsys):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gym.make("Rainbow-v0")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1,
                                    policy_kwargs=dict(net_arch=[16]), seed=0, device="cpu")
    model.learn(total_timesteps=256)
    path = tmp_path / "tiny.zip"
    model.save(path)

    agent = make_agent(str(path), "Rainbow-v0")
    first = evaluate("Rainbow-v0", {"ppo": agent}, episodes=3, seed=0)
    again = evaluate("Rainbow-v0", {"ppo": make_agent(str(path), "Rainbow-v0")}, episodes=3, seed=0)
    assert first.to_dict() == again.to_dict()  # deterministic actions
    assert all(r.length > 0 for r in first.records)
    # Played as one batch: each game gets the batch's wall time over its games.
    assert len({r.seconds for r in first.records}) == 1 and first.records[0].seconds > 0
    assert first.summaries["ppo"].seconds_per_game == pytest.approx(first.records[0].seconds)

    assert main(["evaluate", "--env", "Rainbow-v0", "--agent", str(path), "--agent", "random",
                 "--episodes", "2", "--no-progress"]) == 0
    assert str(path) in capsys.readouterr().out
    # A checkpoint of another game is refused with a clear message, not a traceback.
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--env", "RankAndFile-v0", "--agent", str(path), "--episodes", "2"])
    assert exc.value.code == 2 and "trained on another game" in capsys.readouterr().err


def test_policies_play_on_one_torch_thread_and_the_count_is_restored(tmp_path, monkeypatch):
    """A policy's forward passes run on one torch thread (two threads beside other jobs made Number Ten's
    evaluation 25 times slower), batched or one episode at a time, and the caller's count comes back."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    env = gym.make("Rainbow-v0")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1,
                                    policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu")
    model.save(tmp_path / "tiny.zip")
    agent = make_agent(str(tmp_path / "tiny.zip"), "Rainbow-v0")
    seen: list[int] = []
    for method in ("act", "act_batch"):
        original = getattr(agent, method)

        def spy(*args, _original=original, **kwargs):
            seen.append(torch.get_num_threads())
            return _original(*args, **kwargs)

        monkeypatch.setattr(agent, method, spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        evaluate("Rainbow-v0", {"ppo": agent}, episodes=2, seed=0)  # batched play
        evaluate("Rainbow-v0", {"ppo": agent}, episodes=1, seed=0, record_dir=tmp_path)  # one at a time
        assert torch.get_num_threads() == 2
        assert len(seen) > 20 and set(seen) == {1}
        seen.clear()
        torch.set_num_threads(1)
        evaluate("Rainbow-v0", {"ppo": agent}, episodes=1, seed=0, torch_threads=2)
        assert torch.get_num_threads() == 1 and set(seen) == {2}
        seen.clear()
        evaluate("Rainbow-v0", {"ppo": agent}, episodes=1, seed=0, torch_threads=None)  # as the caller set them
        assert set(seen) == {1}
        for bad in (0, -1, 1.5, True, "2"):
            with pytest.raises(ValueError, match="torch_threads must be a positive integer or None"):
                evaluate("Rainbow-v0", {"ppo": agent}, episodes=1, seed=0, torch_threads=bad)
    finally:
        torch.set_num_threads(before)
    with pytest.raises(SystemExit):
        main(["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--episodes", "1", "--torch-threads", "0"])


def test_cli_evaluate_names_the_split_and_keeps_to_it(tmp_path, capsys):
    out_json = tmp_path / "e.json"
    assert main(["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--episodes", "2", "--deals", "validation",
                 "--json", str(out_json), "--no-progress"]) == 0
    assert "2 deals (validation deals 10000-10001)" in capsys.readouterr().out
    data = json.loads(out_json.read_text())
    assert data["split"] == "validation" and data["deal_seeds"] == [10_000, 10_001]
    for args, message in ((["--seed", "9999"], "deals 9999-10000 (--seed, --episodes) are not all test deals"),
                          (["--deals", "validation", "--seed", "3"], "not all validation deals (10000-19999)"),
                          (["--deals", "holdout"], "invalid choice")):
        with pytest.raises(SystemExit) as stop:
            main(["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--episodes", "2", *args])
        assert stop.value.code == 2 and message in capsys.readouterr().err
