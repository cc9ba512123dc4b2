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
from solitaire_env import Game  # noqa: E402
from solitaire_env.envs.sb3 import SB3VecEnv, make_sb3_vec_env  # noqa: E402

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]
PPO_SMALL = dict(n_steps=64, batch_size=64, n_epochs=2, policy_kwargs=dict(net_arch=[32]), seed=0, device="cpu")


def _masked_actions_are_legal(model, venv, steps=200):
    obs = venv.reset()
    for _ in range(steps):
        masks = get_action_masks(venv)
        actions, _ = model.predict(obs, action_masks=masks)
        assert masks[np.arange(len(actions)), actions].all()
        obs, rewards, dones, infos = venv.step(actions)


class FixedStart(gym.Wrapper):
    """Every episode starts from one position (a state JSON)."""

    def __init__(self, env: gym.Env, state: dict) -> None:
        super().__init__(env)
        self.start = state

    def reset(self, **kwargs):
        return self.env.reset(options={"state": self.start})

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def _one_move_rewards(env: FixedStart) -> dict[int, float]:
    rewards = {}
    _, info = env.reset()
    for a in np.flatnonzero(info["action_mask"]):
        env.reset()
        rewards[int(a)] = env.step(int(a))[1]
    return rewards


def _position_with_one_revealing_move(env_id: str, game: str, min_legal: int) -> dict:
    """A position of random play (deal 0 on) where exactly one of at least ``min_legal`` legal moves turns a
    card face up, and none of the others earns anything."""
    for seed in range(20):
        g, rng = Game(game, seed), np.random.default_rng(seed)
        for _ in range(100):
            if not len(g.legal_actions()):
                break
            env = FixedStart(gym.make(env_id, max_episode_steps=1, reveal_bonus=1.0), g.get_state())
            rewards = np.array(list(_one_move_rewards(env).values()))
            if len(rewards) >= min_legal and (rewards > 0.5).sum() == 1 and (rewards == 0).sum() == len(rewards) - 1:
                return g.get_state()
            g.play(int(rng.choice(g.legal_actions())))
    raise AssertionError(f"no position with one revealing move among {min_legal} in {game}'s random play")


def _masked_probs(model, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        tensor, _ = model.policy.obs_to_tensor(obs)
        return model.policy.get_distribution(tensor, action_masks=mask[None]).distribution.probs[0].numpy()


@pytest.mark.parametrize("env_id, game, min_legal",
                         [("RankAndFile-v0", "rank_and_file", 4), ("NumberTen-v0", "number_ten", 4),
                          ("Rainbow-v0", "rainbow", 3)])
def test_maskable_ppo_learns_the_one_rewarding_move_of_a_fixed_position(env_id, game, min_legal):
    """One-move episodes from one position where a single legal move earns the reveal bonus: a few hundred
    steps of MaskablePPO move the policy's masked probability onto that move."""
    state = _position_with_one_revealing_move(env_id, game, min_legal)
    env = FixedStart(gym.make(env_id, max_episode_steps=1, reveal_bonus=1.0, obs_mode="onehot"), state)
    rewards = _one_move_rewards(env)
    (best,) = [a for a, r in rewards.items() if r > 0.5]
    obs, info = env.reset()
    mask = info["action_mask"].astype(bool)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=4, learning_rate=1e-3,
                        policy_kwargs=dict(net_arch=[32]), seed=0, device="cpu")
    before = _masked_probs(model, obs, mask)
    model.learn(total_timesteps=512)
    after = _masked_probs(model, obs, mask)
    assert after[~mask].sum() == 0 and before[~mask].sum() == 0  # illegal moves never get probability
    assert after[best] > max(0.5, before[best] + 0.3), (before[best], after[best], len(rewards))


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
def test_maskable_ppo_trains_on_the_batched_env_and_picks_legal_moves(env_id):
    import torch

    venv = make_sb3_vec_env(env_id, n_envs=8, seed=0, max_episode_steps=100, obs_mode="onehot")
    model = MaskablePPO("MlpPolicy", venv, **PPO_SMALL)
    weights = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024
    assert any(not torch.equal(a, b) for a, b in zip(weights, model.policy.parameters(), strict=True))
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


def test_adapter_attributes_and_methods_honour_indices():
    """get_attr answers once per named sub-env; set_attr and env_method on a subset raise (one batched env
    holds every sub-env's settings) and change nothing; on all sub-envs they apply."""
    venv = SB3VecEnv(gym.make_vec("Rainbow-v0", num_envs=3))
    assert venv.get_attr("num_envs", indices=[0, 2]) == [3, 3]
    assert len(venv.get_attr("num_envs")) == 3
    with pytest.raises(ValueError, match=r"sub-envs \[1\].*indices=None"):
        venv.set_attr("marker", 1, indices=[1])
    assert not hasattr(venv.env, "marker")
    venv.set_attr("marker", 2, indices=[0, 1, 2])
    assert venv.env.marker == 2
    with pytest.raises(ValueError, match="env_method"):
        venv.env_method("action_masks_of", indices=0)
    venv.reset()
    assert [m.shape for m in venv.env_method("action_masks", indices=[2])] == [(29,)]
