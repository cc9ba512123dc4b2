"""The ``solitaire-env`` subcommands wired together: train, plot, evaluate --record, replay, play."""

from __future__ import annotations

import io
import json
import sys

import pytest

pytest.importorskip("sb3_contrib")
from solitaire_env.tools.cli import main  # noqa: E402

TINY = """
env_id: Rainbow-v0
total_timesteps: 256
n_envs: 2
seed: 1
policy: CardCodesPolicy
policy_kwargs: {net_arch: [16], features_dim: 16}
hyperparams: {n_steps: 64, batch_size: 64, n_epochs: 1}
eval: {freq: 128, episodes: 2}
checkpoint_freq: 128
"""


def test_train_then_evaluate_then_plot(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    run = tmp_path / "run"
    assert main(["train", str(config), "--output", str(run), "--evaluate", "3", "--no-progress"]) == 0
    out = capsys.readouterr().out
    for name in ("random", "heuristic", "ppo", "Wilson"):
        assert name in out
    evaluation = json.loads((run / "evaluation.json").read_text())
    assert set(evaluation["summaries"]) == {"random", "heuristic", "ppo"}
    assert main(["plot", str(run), "--out", str(tmp_path / "curve.png")]) == 0
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_train_bad_config_exits_2(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text(TINY + "learning_rate: 0.1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["train", str(config)])
    assert exit_info.value.code == 2
    assert "unknown key(s) learning_rate" in capsys.readouterr().err


def test_evaluate_records_episodes_that_replay(tmp_path, capsys):
    rec_dir = tmp_path / "rec"
    assert main(["evaluate", "--env", "Rainbow-v0", "--agent", "heuristic", "--episodes", "2", "--seed", "5",
                 "--record", str(rec_dir), "--no-progress"]) == 0
    files = sorted(rec_dir.glob("*.json"))
    assert [f.name for f in files] == ["heuristic-deal-5.json", "heuristic-deal-6.json"]
    gif, html = tmp_path / "ep.gif", tmp_path / "ep.html"
    assert main(["replay", str(files[0]), "--gif", str(gif), "--html", str(html)]) == 0
    assert gif.stat().st_size > 0 and "id=\"next\"" in html.read_text()


def test_replay_needs_an_output_and_a_valid_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    for argv in (["replay", str(bad)], ["replay", str(bad), "--gif", str(tmp_path / "x.gif")],
                 ["replay", str(tmp_path / "missing.json"), "--ansi"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2


def test_play_from_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("d\nundo\nfoo\nquit\n"))
    assert main(["play", "rainbow", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "stock" in out


def test_play_needs_a_game():
    with pytest.raises(SystemExit) as exit_info:
        main(["play"])
    assert exit_info.value.code == 2
