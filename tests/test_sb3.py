"""stable-baselines3 and sb3-contrib: the envs plug in as they are, and MaskablePPO learns on each."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

import solitaire_env  # noqa: E402,F401
from solitaire_env.sb3 import SB3VecEnv, make_sb3_vec_env  # noqa: E402

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]
PPO_SMALL = dict(n_steps=64, batch_size=64, n_epochs=2, policy_kwargs=dict(net_arch=[32]), seed=0, device="cpu")


def _masked_actions_are_legal(model, venv, steps=200):
    obs = venv.reset()
    for _ in range(steps):
        masks = get_action_masks(venv)
        actions, _ = model.predict(obs, action_masks=masks)
        assert masks[np.arange(len(actions)), actions].all()
        obs, rewards, dones, infos = venv.step(actions)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_maskable_ppo_learns_a_few_thousand_steps(env_id):
    env = gym.make(env_id)
    model = MaskablePPO("MlpPolicy", env, **PPO_SMALL)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs, info = env.reset(seed=0)
    for _ in range(100):
        action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks())
        assert info["action_mask"][action] == 1
        obs, r, term, trunc, info = env.step(action)
        if term or trunc:
            obs, info = env.reset()


def test_make_vec_env_with_subprocesses():
    # The "module:id" form registers the envs inside each subprocess too.
    venv = make_vec_env("solitaire_env:RankAndFile-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    try:
        model = MaskablePPO("MlpPolicy", venv, **PPO_SMALL)
        model.learn(total_timesteps=256)
        _masked_actions_are_legal(model, venv, steps=50)
    finally:
        venv.close()


def test_sync_vector_env_works():
    env = gym.make_vec("Rainbow-v0", num_envs=3, vectorization_mode="sync")
    obs, info = env.reset(seed=0)
    for _ in range(50):
        actions = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
        obs, r, term, trunc, info = env.step(actions)
    assert obs.shape == (3, 296)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_maskable_ppo_on_the_batched_env(env_id):
    venv = make_sb3_vec_env(env_id, n_envs=8, seed=0, max_episode_steps=100)
    model = MaskablePPO("MlpPolicy", venv, **PPO_SMALL)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    _masked_actions_are_legal(model, venv)


def test_adapter_resets_in_the_same_step():
    venv = SB3VecEnv(gym.make_vec("RankAndFile-v0", num_envs=2, max_episode_steps=5))
    venv.seed(3)
    obs = venv.reset()
    for _ in range(5):
        obs, rewards, dones, infos = venv.step(np.array([0, 0]))  # draw, draw, ...
    assert dones.all()
    assert all(info["TimeLimit.truncated"] for info in infos)
    assert not np.array_equal(infos[0]["terminal_observation"], obs[0])
    assert obs[0][-1] == 64  # a fresh deal: full stock
    masks = venv.env_method("action_masks")
    assert len(masks) == 2 and masks[0].dtype == bool


def test_adapter_seeding_is_reproducible():
    def first_obs():
        venv = make_sb3_vec_env("Rainbow-v0", n_envs=3, seed=7)
        return venv.reset()

    np.testing.assert_array_equal(first_obs(), first_obs())
