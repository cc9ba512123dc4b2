"""stable-baselines3 adapter for the batched vector env, so MaskablePPO trains on it directly.

>>> from solitaire_env.envs.sb3 import make_sb3_vec_env
>>> venv = make_sb3_vec_env("RankAndFile-v0", n_envs=16, seed=0)
>>> model = MaskablePPO("MlpPolicy", venv)   # masks come from one batched env_method("action_masks")

SB3's conventions differ from Gymnasium 1.x: ``reset()`` returns observations only, a finished
sub-env is reset in the same step (its last observation goes to ``info["terminal_observation"]``,
and ``info["TimeLimit.truncated"]`` tells a time-out from a real end).
Needs the ``train`` extra (stable-baselines3).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import VecEnv, VecMonitor
from torch import nn

from solitaire_env.envs.vector import SolitaireVectorEnv


def _row(obs: Any, i: int) -> Any:
    return {k: v[i].copy() for k, v in obs.items()} if isinstance(obs, dict) else obs[i].copy()


class SB3VecEnv(VecEnv):
    """Wraps a :class:`~solitaire_env.envs.vector.SolitaireVectorEnv` as an SB3 ``VecEnv``."""

    def __init__(self, env: SolitaireVectorEnv) -> None:
        if not isinstance(env, SolitaireVectorEnv):
            raise TypeError(f"SB3VecEnv wraps a SolitaireVectorEnv, got {type(env).__name__}")
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> Any:
        seeds = None if all(s is None for s in self._seeds) else [int(s) for s in self._seeds]
        obs, _ = self.env.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict]]:
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos = [
            {"foundation_cards": int(info["foundation_cards"][i]), "is_won": bool(info["is_won"][i])}
            for i in range(self.num_envs)
        ]
        for key in ("revisit", "stuck"):  # with track_revisits / no_revisit
            if key in info:
                for i in range(self.num_envs):
                    infos[i][key] = bool(info[key][i])
        if dones.any():
            done_idx = np.flatnonzero(dones)
            for i in done_idx:
                infos[i]["terminal_observation"] = _row(obs, i)
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            obs = self.env.reset_envs(done_idx)
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        if method_name == "action_masks":  # one batched call for all sub-envs
            masks = self.env.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        result = getattr(self.env, method_name)(*args, **kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def make_sb3_vec_env(env_id: str, n_envs: int = 8, seed: int | None = None, monitor: bool = True,
                     **env_kwargs: Any) -> VecEnv:
    """The batched env of ``env_id`` as an SB3 ``VecEnv`` (with ``VecMonitor`` episode statistics)."""
    import solitaire_env  # noqa: F401  (registers the ids)

    venv: VecEnv = SB3VecEnv(gym.make_vec(env_id, num_envs=n_envs, **env_kwargs))
    if seed is not None:
        venv.seed(seed)
    return VecMonitor(venv) if monitor else venv



class CardEmbedding(BaseFeaturesExtractor):
    """One-hot of every observation entry times a weight matrix, done as an embedding-bag lookup.

    The first linear layer over SB3's one-hot encoding of a ``MultiDiscrete`` observation, but it
    touches only the rows of the cards present: on these 233-296-entry observations (12-16 thousand
    one-hot values) training runs many times faster.

    With ``skip_empty`` (the default for new policies) an entry whose code is 0 (an empty slot: 70-80%
    of the entries in play) adds nothing, so only the occupied slots are looked up: 3-5 times less work
    in the forward and backward passes. This is the same function class, not an approximation:
    one-hot groups sum to one per entry, so code 0's row of each entry can be taken as its reference
    level and folded into the bias (the row stays in the table, unused, so saved shapes do not change).
    Models saved before ``skip_empty`` existed load with it off and compute exactly what they did.
    """

    def __init__(self, observation_space: gym.spaces.Box, nvec: list[int], features_dim: int = 256,
                 skip_empty: bool = True) -> None:
        super().__init__(observation_space, features_dim)
        offsets = np.concatenate(([0], np.cumsum(nvec)[:-1]))
        self.register_buffer("offsets", torch.as_tensor(offsets, dtype=torch.long), persistent=False)
        self.embed = nn.EmbeddingBag(int(np.sum(nvec)), features_dim, mode="sum")
        self.bias = nn.Parameter(torch.zeros(features_dim))
        # Saved with the weights, so a model knows which forward pass it was trained with.
        self.register_buffer("skip_empty", torch.tensor(bool(skip_empty)))

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        state_dict.setdefault(prefix + "skip_empty", torch.tensor(False))  # saved before the option: off
        super()._load_from_state_dict(state_dict, prefix, *args)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        codes = observations.long()
        if not bool(self.skip_empty):
            return torch.relu(self.embed(codes + self.offsets) + self.bias)
        present = codes != 0
        index = (codes + self.offsets)[present]  # the occupied entries, row by row
        starts = torch.zeros(codes.shape[0], dtype=torch.long)
        torch.cumsum(present.sum(dim=1)[:-1], dim=0, out=starts[1:])
        return torch.relu(self.embed(index, starts) + self.bias)


class CardCodesPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy for the default ``codes`` observation, with :class:`CardEmbedding` first.

    The policy sees the observation as a plain ``Box`` of codes so SB3 does not one-hot it;
    :class:`CardEmbedding` does the equivalent far more cheaply. Use ``MaskablePPO(CardCodesPolicy, env)``.
    """

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space, lr_schedule: Any,
                 **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.MultiDiscrete):
            raise TypeError(f"CardCodesPolicy needs the MultiDiscrete 'codes' observation, got {observation_space}")
        nvec = np.asarray(observation_space.nvec, dtype=np.int64)
        codes = gym.spaces.Box(low=0.0, high=(nvec - 1).astype(np.float32), dtype=np.float32)
        kwargs.setdefault("features_extractor_class", CardEmbedding)
        extractor_kwargs = dict(kwargs.get("features_extractor_kwargs") or {})
        extractor_kwargs["nvec"] = nvec.tolist()
        kwargs["features_extractor_kwargs"] = extractor_kwargs
        if kwargs.get("optimizer_class", torch.optim.Adam) is torch.optim.Adam:
            # Adam's fused CPU kernel: one pass over the 4M embedding weights instead of several
            # (45 -> 5 ms a minibatch, docs/results.md "Training throughput").
            kwargs["optimizer_kwargs"] = {"fused": True, **(kwargs.get("optimizer_kwargs") or {})}
        super().__init__(codes, action_space, lr_schedule, **kwargs)
