"""Minari datasets (solitaire_env.tools.dataset, ``solitaire-env dataset``): each episode equal to a replay
through a fresh env on its deal; the solver's lines only on test deals; bad arguments refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

minari = pytest.importorskip("minari")
pytest.importorskip("pyarrow")

from solitaire_env.solver.winnability import load  # noqa: E402
from solitaire_env.tools.cli import main  # noqa: E402
from solitaire_env.tools.dataset import make_dataset  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    return tmp_path


def assert_replays(dataset) -> list[int]:
    """Every episode equals a replay of its actions through the env recovered from the dataset's spec,
    reset with the episode's seed; returns the episodes' deals."""
    deals = []
    metadata = list(dataset.storage.get_episode_metadata(range(dataset.total_episodes)))
    assert len(metadata) == dataset.total_episodes > 0
    for episode, meta in zip(dataset.iterate_episodes(), metadata, strict=True):
        env = dataset.recover_environment()
        obs, info = env.reset(seed=meta["seed"])
        assert info["deal_seed"] == meta["deal"]
        deals.append(meta["deal"])
        T = len(episode)
        assert episode.observations.shape == (T + 1, *env.observation_space.shape)
        assert episode.infos["action_mask"].shape == (T + 1, env.action_space.n)
        np.testing.assert_array_equal(episode.observations[0], obs)
        np.testing.assert_array_equal(episode.infos["action_mask"][0], info["action_mask"])
        assert episode.infos["move_id"][0] == -1
        for t, action in enumerate(episode.actions):
            assert episode.infos["action_mask"][t][action] == 1
            obs, reward, terminated, truncated, info = env.step(int(action))
            np.testing.assert_array_equal(episode.observations[t + 1], obs)
            np.testing.assert_array_equal(episode.infos["action_mask"][t + 1], info["action_mask"])
            assert episode.rewards[t] == pytest.approx(reward)
            assert (episode.terminations[t], episode.truncations[t]) == (terminated, truncated)
            assert episode.infos["foundation_cards"][t + 1] == info["foundation_cards"]
            assert episode.infos["move_id"][t + 1] == action
            if "stuck" in episode.infos:
                assert episode.infos["stuck"][t + 1] == info["stuck"]
        assert terminated or truncated
        assert bool(episode.infos["is_won"][-1]) == info["is_won"] == meta["won"]
        env.close()
    return deals


def test_heuristic_dataset_loads_back_equal_to_a_replay(root):
    _, summary = make_dataset("rainbow", "heuristic", 3)
    dataset = minari.load_dataset("solitaire/rainbow-heuristic-v0")
    assert dataset.total_episodes == 3 and dataset.total_steps == summary["steps"]
    deals = assert_replays(dataset)
    assert all(d >= 20_000 for d in deals) and len(set(deals)) == 3  # train deals
    meta = dataset.storage.metadata
    assert meta["perfect_information"] is False and meta["agent"] == "heuristic"
    assert meta["env_id"] == "Rainbow-v0" and meta["env_kwargs"] == {"deals": "train"}
    assert meta["deal_split"] == "train" and meta["solitaire_env_version"]
    assert dataset.recover_environment(eval_env=True).spec.kwargs["deals"] == "validation"


def test_solver_dataset_replays_the_shipped_winning_lines(root):
    make_dataset("rainbow", "solver", 3, deals="test", data_format="arrow")
    dataset = minari.load_dataset("solitaire/rainbow-solver-test-v0")
    assert dataset.storage.metadata["data_format"] == "arrow"
    deals = assert_replays(dataset)
    won = [r.seed for r in load("rainbow") if r.result == "won"]
    assert deals == won[:3]  # the first deals the solver won, in order
    assert all(e.infos["is_won"][-1] for e in dataset.iterate_episodes())
    assert dataset.storage.metadata["perfect_information"] is True


def test_solver_dataset_on_a_range_and_its_limits(root):
    _, summary = make_dataset("number_ten", "solver", 2, deals="990:1000", dataset_id="tests/nt-v0")
    deals = [m["deal"] for m in minari.load_dataset("tests/nt-v0").storage.get_episode_metadata(range(2))]
    won = [r.seed for r in load("number_ten") if r.result == "won" and r.seed >= 990]
    assert deals == won[:2] and summary["wins"] == 2
    with pytest.raises(ValueError, match="test deals 0-999 only"):
        make_dataset("rainbow", "solver", 2)  # train deals: the lines are of test deals
    with pytest.raises(ValueError, match="test deals 0-999 only"):
        make_dataset("rainbow", "solver", 2, deals="validation")
    with pytest.raises(ValueError, match="ask for at most"):
        make_dataset("rainbow", "solver", 1000, deals="test")


def test_pretrained_dataset_is_recorded_in_codes_with_the_agents_game_options(root):
    pytest.importorskip("sb3_contrib")
    make_dataset("rainbow", "pretrained", 1, deals="5:6")
    dataset = minari.load_dataset("solitaire/rainbow-pretrained-deals-5-5-v0")
    meta = dataset.storage.metadata
    assert meta["env_kwargs"] == {"deals": "5:6", "no_revisit": True}
    assert meta["agent_env_kwargs"]["obs_mode"] == "piles"
    assert dataset.observation_space.shape == (296,)  # the codes, not the policy's own observation
    assert "stuck" in next(dataset.iterate_episodes()).infos
    assert assert_replays(dataset) == [5]


@pytest.mark.parametrize(("argv", "message"), [
    (["rainbow", "--agent", "solver", "--episodes", "2"], "test deals 0-999 only"),
    (["rainbow", "--agent", "best", "--episodes", "2"], "unknown dataset agent 'best'"),
    (["spider", "--agent", "heuristic", "--episodes", "2"], "unknown game 'spider'"),
    (["rainbow", "--agent", "heuristic", "--episodes", "2", "--deals", "5:3"], "non-empty range"),
    (["rainbow", "--agent", "heuristic", "--episodes", "2", "--deals", "tests"], "deals must be"),
    (["rainbow", "--agent", "heuristic", "--episodes", "3", "--deals", "0:2"], "hold 2 deals, fewer than 3"),
    (["rainbow", "--agent", "heuristic", "--episodes", "0"], "must be positive"),
    (["rainbow", "--agent", "heuristic", "--episodes", "2", "--id", "mine"], "bad dataset id 'mine'"),
    (["rainbow", "--agent", "search:8", "--episodes", "2"], "bad search agent"),
])
def test_bad_arguments_get_one_clear_line(root, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["dataset", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not list(root.glob("**/data"))  # nothing half-written


def test_cli_writes_then_refuses_to_overwrite(root, capsys, tmp_path):
    out = tmp_path / "elsewhere"
    assert main(["dataset", "rainbow", "--agent", "random", "--episodes", "2", "--deals", "0:2", "--out", str(out),
                 "--no-progress"]) == 0
    assert "wrote solitaire/rainbow-random-deals-0-1-v0: 2 episodes" in capsys.readouterr().out
    assert (out / "solitaire" / "rainbow-random-deals-0-1-v0" / "data" / "metadata.json").is_file()
    with pytest.raises(SystemExit):
        main(["dataset", "rainbow", "--agent", "random", "--episodes", "2", "--deals", "0:2", "--out", str(out)])
    assert "exists already" in capsys.readouterr().err


@pytest.mark.slow  # about 25 s: the default suite keeps within its 6 minutes; -m slow runs it
def test_bc_example_with_a_tiny_budget(root, tmp_path):
    pytest.importorskip("sb3_contrib")
    make_dataset("rainbow", "heuristic", 4)
    env = {**os.environ, "BC_EPOCHS": "1", "BC_EVAL_EPISODES": "3"}
    done = subprocess.run([sys.executable, str(EXAMPLES / "bc_from_minari.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "held-out agreement" in done.stdout and "saved bc_rainbow.zip" in done.stdout
    rows = [line.split("|")[1].strip() for line in done.stdout.splitlines() if line.startswith("| ")]
    assert "bc_rainbow.zip" in rows and "heuristic" in rows
    assert (tmp_path / "bc_rainbow.zip").is_file()
