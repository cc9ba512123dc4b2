""":class:`MaskablePPOAgent`: plays a trained sb3-contrib MaskablePPO checkpoint (needs the ``train`` extra)."""

from __future__ import annotations

import os
import zipfile
from typing import Any

import numpy as np

from agents.base import Agent
from solitaire_env.envs.base import OBS_MODES, ObservationEncoder, observation_space
from solitaire_env.registration import ENV_IDS


class MaskablePPOAgent(Agent):
    """Acts with ``model.predict(obs, action_masks=mask, deterministic=...)``.

    The agent is given the env's default ``codes`` observation; when the checkpoint was trained on
    the ``onehot`` or ``dict`` observation of the same game it encodes the codes that way first.
    ``deterministic=False`` samples from the policy instead of taking its most likely action (a
    greedy policy can cycle forever in the two-deck games); ``reset(seed)`` seeds the sampling.
    """

    def __init__(self, model: Any, env_id: str, name: str = "ppo", deterministic: bool = True) -> None:
        self.model, self.env_id, self.name = model, env_id, name
        self.deterministic = deterministic
        variant = ENV_IDS[env_id][1]
        if getattr(model.action_space, "n", None) != variant.n_actions:
            raise ValueError(f"the checkpoint's action space is {model.action_space}, but {env_id} has "
                             f"Discrete({variant.n_actions}): it was trained on another game")
        self._encoder = None
        for mode in OBS_MODES:
            if model.observation_space == observation_space(variant, mode):
                self._encoder = ObservationEncoder(variant, mode)
                break
        else:
            raise ValueError(f"the checkpoint's observation space {model.observation_space} is none of "
                             f"{env_id}'s ({', '.join(OBS_MODES)}): it was trained on another game or observation")

    def reset(self, seed: int | None = None) -> None:
        if not self.deterministic and seed is not None:
            import torch

            torch.manual_seed(seed)

    @classmethod
    def load(cls, path: str | os.PathLike, env_id: str, name: str | None = None,
             deterministic: bool = True) -> MaskablePPOAgent:
        """Load a MaskablePPO ``.zip``; ``FileNotFoundError`` or ``ValueError`` (naming the path) if it cannot."""
        if env_id not in ENV_IDS:
            raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
        path = os.fspath(path)
        if not os.path.isfile(path) and os.path.isfile(path + ".zip"):  # SB3 saves "x" as "x.zip"
            path += ".zip"
        if not os.path.isfile(path):
            raise FileNotFoundError(f"checkpoint not found: {path}")
        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path} is not a MaskablePPO checkpoint (not a .zip file)")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as e:  # pragma: no cover - the train extra is missing
            raise ValueError(f"loading {path} needs sb3-contrib (pip install 'solitaire-env[train]')") from e
        try:
            model = MaskablePPO.load(path, device="cpu")
        except Exception as e:  # anything SB3 raises on a bad file
            raise ValueError(f"cannot read {path} as a MaskablePPO checkpoint: {type(e).__name__}: {e}") from e
        try:
            return cls(model, env_id, name=name or path, deterministic=deterministic)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None

    def act(self, observation: Any, info: dict) -> int:
        mask = np.asarray(info["action_mask"]).astype(bool)
        obs = self._encoder(np.asarray(observation), info["action_mask"])
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        return int(action)


__all__ = ["MaskablePPOAgent"]
