"""Training configs (validation, round trip) and a tiny end-to-end MaskablePPO run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402

from solitaire_env.training import (  # noqa: E402
    ConfigError,
    load_config,
    parse_config,
    plot_learning_curve,
    save_config,
    train,
)

CONFIGS = sorted(Path(__file__).resolve().parent.parent.joinpath("configs").glob("*.yaml"))


def test_there_is_a_config_per_game():
    env_ids = {load_config(p).env_id for p in CONFIGS}
    assert {"RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"} <= env_ids


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_load_and_round_trip(path, tmp_path):
    config = load_config(path)
    save_config(config, tmp_path / "again.yaml")
    assert load_config(tmp_path / "again.yaml") == config


BASE = {"env_id": "Rainbow-v0", "total_timesteps": 1000}


@pytest.mark.parametrize("change, match", [
    ({"learning_rat": 0.1}, "unknown key.*learning_rat"),
    ({"hyperparams": {"learning_rat": 0.1}}, "unknown hyperparameter 'learning_rat'"),
    ({"hyperparams": {"n_steps": "many"}}, "hyperparams.n_steps must be a number"),
    ({"hyperparams": {"batch_size": 0}}, "batch_size must be a positive integer"),
    ({"n_envs": "16"}, "'n_envs' must be int"),
    ({"n_envs": True}, "'n_envs' must be int"),
    ({"total_timesteps": -5}, "must be positive"),
    ({"env_id": "Klondike-v0"}, "env_id 'Klondike-v0' is not one of"),
    ({"policy": "CnnPolicy"}, "policy must be one of"),
    ({"env_kwargs": {"reveal_bonnus": 1.0}}, "unknown env_kwargs reveal_bonnus"),
    ({"policy_kwargs": {"net_arch": [64, -1]}}, "net_arch must be a list of positive"),
    ({"eval": {"episodes": 0}}, "eval.episodes' must be positive"),
    ({"eval": {"every": 10}}, "unknown eval key"),
])
def test_bad_configs_fail_clearly(change, match):
    with pytest.raises(ConfigError, match=match):
        parse_config({**BASE, **change})


def test_missing_required_key():
    with pytest.raises(ConfigError, match="missing required key 'total_timesteps'"):
        parse_config({"env_id": "Rainbow-v0"})


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("env_id: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


@pytest.mark.parametrize("policy", ["CardCodesPolicy", "MlpPolicy"])
def test_tiny_training_run_end_to_end(tmp_path, policy):
    config = parse_config({
        "env_id": "Rainbow-v0", "total_timesteps": 512, "n_envs": 4, "seed": 3, "policy": policy,
        "policy_kwargs": {"net_arch": [16]}, "hyperparams": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "env_kwargs": {"max_episode_steps": 200}, "eval": {"freq": 256, "episodes": 2}, "checkpoint_freq": 256,
    })
    out = train(config, output_dir=tmp_path / "run", progress=False)
    for name in ("final_model.zip", "best_model.zip", "config.yaml", "summary.json", "evaluations.npz",
                 "learning_curve.png"):
        assert (out / name).is_file(), name
    assert list((out / "checkpoints").glob("*.zip"))
    assert list((out / "tb").rglob("events.out.tfevents*"))
    assert yaml.safe_load((out / "config.yaml").read_text())["policy"] == policy
    model = MaskablePPO.load(out / "final_model.zip", device="cpu")
    assert model.num_timesteps >= 512
    plot_learning_curve(out, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_card_codes_policy_matches_one_hot_linear():
    import gymnasium as gym
    import torch

    from solitaire_env.sb3 import CardEmbedding

    env = gym.make("NumberTen-v0")
    obs, _ = env.reset(seed=0)
    nvec = env.observation_space.nvec
    extractor = CardEmbedding(gym.spaces.Box(0, 1, shape=obs.shape), nvec.tolist(), features_dim=8)
    onehot = np.zeros(int(nvec.sum()), dtype=np.float32)
    onehot[np.concatenate(([0], np.cumsum(nvec)[:-1])) + obs] = 1
    with torch.no_grad():
        expected = torch.relu(torch.as_tensor(onehot) @ extractor.embed.weight + extractor.bias)
        got = extractor(torch.as_tensor(obs[None], dtype=torch.float32))[0]
    torch.testing.assert_close(got, expected)
