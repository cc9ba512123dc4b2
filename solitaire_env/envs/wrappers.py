"""Adapters for RL libraries that read the legal-move mask from the observation.

The envs give the mask in ``info["action_mask"]`` and ``env.unwrapped.action_masks()`` (sb3-contrib's
convention). RLlib, Tianshou and TorchRL each want it inside the observation, under their own key:

>>> env = for_rllib("Rainbow-v0")      # {"observations": float32 Box, "action_mask": float32 Box}
>>> env = for_tianshou("Rainbow-v0")   # {"obs": ..., "mask": bool Box}
>>> env = for_torchrl("Rainbow-v0")    # {"observation": ..., "action_mask": bool Box}

Each passes its keyword arguments to ``gym.make`` (``deals=``, ``no_revisit=``, ``obs_mode=`` ...). This
module imports none of the libraries; tests/test_integrations.py tests the adapters against them.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class MaskInObservation(gym.ObservationWrapper):
    """``Dict({obs_key: the env's observation, mask_key: the legal moves of the position it shows})``.

    ``obs_dtype``: cast the observation to a ``Box`` of this dtype (RLlib encodes a float ``Box``, not
    the ``codes`` mode's int16 ``MultiDiscrete``); a ``Dict`` observation (``obs_mode="dict"``/``"piles"``)
    cannot be cast, use ``"codes"`` or ``"onehot"``. The mask, a ``Box(0, 1, (n_actions,), mask_dtype)``,
    comes from ``info["action_mask"]`` of each reset and step (else ``env.unwrapped.action_masks()``).
    """

    def __init__(self, env: gym.Env, obs_key: str, mask_key: str, obs_dtype: Any = None,
                 mask_dtype: Any = np.int8) -> None:
        super().__init__(env)
        if obs_key == mask_key:
            raise ValueError(f"obs_key and mask_key must differ, both are {obs_key!r}")
        if not isinstance(env.action_space, spaces.Discrete):
            raise ValueError(f"MaskInObservation needs a Discrete action space, got {env.action_space}")
        self.obs_key, self.mask_key = obs_key, mask_key
        self.obs_dtype = None if obs_dtype is None else np.dtype(obs_dtype)
        self.mask_dtype = np.dtype(mask_dtype)
        inner = env.observation_space
        if self.obs_dtype is not None:
            inner = _as_box(inner, self.obs_dtype)
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict({obs_key: inner, mask_key: spaces.Box(0, 1, (n,), self.mask_dtype)})
        self._mask = np.zeros(n, dtype=self.mask_dtype)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._take_mask(info)
        return self.observation(obs), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._take_mask(info)
        return self.observation(obs), reward, terminated, truncated, info

    def observation(self, observation: Any) -> dict:
        if self.obs_dtype is not None:
            observation = np.asarray(observation, dtype=self.obs_dtype)
        return {self.obs_key: observation, self.mask_key: self._mask.copy()}

    def _take_mask(self, info: dict) -> None:
        mask = info.get("action_mask")
        if mask is None:  # an env without the info key: the sb3-contrib method
            mask = self.env.unwrapped.action_masks()
        self._mask = np.asarray(mask).astype(self.mask_dtype)


def _as_box(space: spaces.Space, dtype: np.dtype) -> spaces.Box:
    """``space`` as a ``Box`` of ``dtype`` with the same bounds (the values stay the same numbers)."""
    if isinstance(space, spaces.MultiDiscrete):
        return spaces.Box(np.zeros(space.shape, dtype), (space.nvec - 1).astype(dtype), dtype=dtype)
    if isinstance(space, spaces.Box):
        return spaces.Box(space.low.astype(dtype), space.high.astype(dtype), dtype=dtype)
    raise ValueError(f"cannot cast a {type(space).__name__} observation to a {dtype} Box: "
                     "make the env with obs_mode='codes' or 'onehot'")


def for_rllib(env_id: str, **env_kwargs: Any) -> gym.Env:
    """The env as RLlib's ``ActionMaskingTorchRLModule`` (new API stack, RLlib 2.60) expects it.

    Observation ``{"observations": float32 Box, "action_mask": float32 Box}``: the card codes as floats
    (their values, which RLlib's default MLP encoder takes as they are; ``obs_mode="onehot"`` gives one-hot
    floats instead). Usage: ``config.environment(env=lambda cfg: for_rllib("Rainbow-v0", **cfg))``.
    """
    return MaskInObservation(gym.make(env_id, **env_kwargs), "observations", "action_mask",
                             obs_dtype=np.float32, mask_dtype=np.float32)


def for_tianshou(env_id: str, **env_kwargs: Any) -> gym.Env:
    """The env as Tianshou 2's DQN-family policies read it: ``obs.obs`` and a ``bool`` ``obs.mask``.

    Observation ``{"obs": <the env's observation>, "mask": bool Box}``; Tianshou masks the Q-values of the
    moves whose ``mask`` is False. Usage: ``DummyVectorEnv([lambda: for_tianshou("Rainbow-v0")] * 4)``.
    """
    return MaskInObservation(gym.make(env_id, **env_kwargs), "obs", "mask", mask_dtype=np.bool_)


def for_torchrl(env_id: str, **env_kwargs: Any) -> gym.Env:
    """The env for ``torchrl.envs.GymWrapper``, with a ``bool`` mask that TorchRL's ``ActionMask`` reads.

    Observation ``{"observation": <the env's observation>, "action_mask": bool Box}``. Usage:
    ``TransformedEnv(GymWrapper(for_torchrl("Rainbow-v0"), categorical_action_encoding=True), ActionMask())``.
    """
    return MaskInObservation(gym.make(env_id, **env_kwargs), "observation", "action_mask", mask_dtype=np.bool_)
