"""stable-baselines3 adapter for the batched vector env, so MaskablePPO trains on it directly.

>>> from solitaire_env.envs.sb3 import make_sb3_vec_env
>>> venv = make_sb3_vec_env("RankAndFile-v0", n_envs=16, seed=0)
>>> model = MaskablePPO("MlpPolicy", venv)   # masks come from one batched env_method("action_masks")

SB3's conventions differ from Gymnasium 1.x: ``reset()`` returns observations only, a finished
sub-env is reset in the same step (its last observation goes to ``info["terminal_observation"]``,
and ``info["TimeLimit.truncated"]`` tells a time-out from a real end).
Needs the ``train`` extra (stable-baselines3). The policies that train on it (``CardCodesPolicy`` and the
others) are agents: :mod:`solitaire_env.agents.policies`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

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

    def _all(self, indices: Any, what: str) -> list[int]:
        """The sub-envs ``indices`` names; all of them, since one batched env holds every sub-env's settings."""
        chosen = list(self._get_indices(indices))
        if sorted(chosen) != list(range(self.num_envs)):
            raise ValueError(f"{what} for sub-envs {chosen}: the {self.num_envs} sub-envs are one batched env "
                             "whose attributes and methods they share, so only all of them at once (indices=None)")
        return chosen

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The batched env's attribute, once per sub-env in ``indices`` (every sub-env shares it)."""
        return [getattr(self.env, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of all the sub-envs; ``ValueError`` for a subset, which one batched env cannot hold."""
        self._all(indices, f"set_attr({attr_name!r})")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        """``action_masks`` gives each named sub-env's mask; any other method runs once on the batched
        env, for all the sub-envs (``ValueError`` for a subset), and each gets its result."""
        if method_name == "action_masks":  # one batched call for all sub-envs
            masks = self.env.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        chosen = self._all(indices, f"env_method({method_name!r})")
        result = getattr(self.env, method_name)(*args, **kwargs)
        return [result for _ in chosen]

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
