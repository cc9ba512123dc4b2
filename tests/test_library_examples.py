"""The one-file examples per RL library (docs/libraries.md) run end to end on a tiny budget.

cleanrl_ppo.py needs only torch and runs in the default suite; the RLlib, Tianshou and TorchRL ones are
marked ``integrations`` and skipped when their library is missing (CI: .ci/setup-integrations).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RESULT = re.compile(r"after training: validation mean foundation cards ([\d.]+), win rate ([\d.]+) \((\d+) deals\)")


def _run(script: str, steps: int, *args: str, tmp_path: Path) -> str:
    env = {**os.environ, "SOLITAIRE_ENV_STEPS": str(steps)}
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def _check_report(out: str, steps: int, deals: int) -> None:
    """The script trained at least ``steps`` steps, printed its speed and evaluated ``deals`` validation deals."""
    trained = re.search(r"trained (\d+) steps in \d+ s: (\d+) steps/s", out)
    assert trained, out
    assert int(trained.group(1)) >= steps and int(trained.group(2)) > 0
    found = RESULT.search(out)
    assert found, out
    cards, win_rate, n = float(found.group(1)), float(found.group(2)), int(found.group(3))
    assert n == deals and 0.0 <= cards <= 52.0 and 0.0 <= win_rate <= 1.0
    assert "before training: validation mean foundation cards" in out


def test_cleanrl_ppo_runs_and_reports(tmp_path):
    out = _run("cleanrl_ppo.py", 256, "--num-envs", "4", "--num-steps", "32", "--eval-episodes", "3",
               tmp_path=tmp_path)
    _check_report(out, 256, 3)
    assert "mean foundation cards (train episodes)" in out


def test_cleanrl_ppo_flags_come_from_args(monkeypatch, capsys):
    # The example's own parser, in this process (the run above checks the script starts on its own).
    spec = importlib.util.spec_from_file_location("cleanrl_ppo", EXAMPLES / "cleanrl_ppo.py")
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "cleanrl_ppo", example)  # dataclasses look their module up
    spec.loader.exec_module(example)
    monkeypatch.setattr(sys, "argv", ["cleanrl_ppo.py", "--help"])
    with pytest.raises(SystemExit) as done:
        example.parse_args()
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "--total-timesteps" in out and "--num-minibatches" in out
    assert "games stepped together" in out  # the field's docstring is its help
    bad_sizes = ["--num-envs", "3", "--num-steps", "3", "--num-minibatches", "4"]
    monkeypatch.setattr(sys, "argv", ["cleanrl_ppo.py", *bad_sizes])
    with pytest.raises(SystemExit) as bad:
        example.parse_args()
    assert bad.value.code != 0 and "multiple of num_minibatches" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["cleanrl_ppo.py", "--num-envs", "8", "--anneal-lr", "true"])
    args = example.parse_args()
    assert args.num_envs == 8 and args.anneal_lr is True


@pytest.mark.integrations
def test_tianshou_dqn_runs_and_reports(tmp_path):
    pytest.importorskip("tianshou")
    out = _run("tianshou_dqn.py", 256, "--num-envs", "2", "--collect-steps", "64", "--batch-size", "32",
               "--eval-episodes", "2", tmp_path=tmp_path)
    _check_report(out, 256, 2)


@pytest.mark.integrations
def test_torchrl_ppo_runs_and_reports(tmp_path):
    pytest.importorskip("torchrl")
    out = _run("torchrl_ppo.py", 128, "--num-envs", "2", "--num-steps", "64", "--eval-episodes", "2",
               tmp_path=tmp_path)
    _check_report(out, 128, 2)


@pytest.mark.integrations
def test_rllib_ppo_runs_and_reports(tmp_path):
    pytest.importorskip("ray.rllib")
    out = _run("rllib_ppo.py", 256, "--num-env-runners", "0", "--num-envs-per-env-runner", "2",
               "--train-batch-size", "256", "--minibatch-size", "64", "--eval-episodes", "2", tmp_path=tmp_path)
    _check_report(out, 256, 2)
