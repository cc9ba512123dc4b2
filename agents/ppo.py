""":class:`MaskablePPOAgent`: plays a trained sb3-contrib MaskablePPO checkpoint (needs the ``train`` extra)."""

from __future__ import annotations

import os
import zipfile
from typing import Any

import numpy as np

from agents.base import Agent
from solitaire_env.envs.base import OBS_MODES, ObservationEncoder, observation_space
from solitaire_env.envs.registration import ENV_IDS

# What a training run directory holds (solitaire_env.tools.training), in the order taken.
RUN_DIR_MODELS = ("best_model.zip", "final_model.zip")


def find_checkpoint(path: str | os.PathLike) -> str:
    """The checkpoint file ``path`` names: the file itself, ``path + ".zip"`` (SB3 saves "x" as "x.zip"),
    or in a run directory its ``best_model.zip``, else its ``final_model.zip``.

    ``FileNotFoundError`` if there is none, saying what a directory holds instead.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        for model in RUN_DIR_MODELS:
            if os.path.isfile(os.path.join(path, model)):
                return os.path.join(path, model)
        entries = sorted(e + "/" if os.path.isdir(os.path.join(path, e)) else e for e in os.listdir(path))
        held = ", ".join(entries[:8]) + (", ..." if len(entries) > 8 else "") if entries else "nothing"
        raise FileNotFoundError(f"{path} holds no {' or '.join(RUN_DIR_MODELS)} (it holds {held})")
    if not os.path.isfile(path) and os.path.isfile(path + ".zip"):
        path += ".zip"
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    return path


def _unreadable(path: str, reason: str) -> str:
    return f"cannot read {path} as a MaskablePPO checkpoint: the file is damaged or not an SB3 save ({reason})"


def _short_reason(exc: BaseException) -> str:
    """One short line on why loading failed.

    torch's errors run to paragraphs, and its ``UnpicklingError`` advises ``weights_only=False``:
    wrong for a damaged file (and unsafe for a foreign one), so keep only the cause it names.
    """
    text = str(exc)
    _, marker, cause = text.partition("WeightsUnpickler error:")
    lines = [line.strip() for line in (cause if marker else text).splitlines() if line.strip()]
    first = lines[0].split(". ")[0].rstrip(".") if lines else ""
    if len(first) > 100:
        first = first[:99] + "…"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


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
        self.checkpoint: str | None = None  # the file it was loaded from, by load()
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
        """Load a MaskablePPO ``.zip``, or a run directory's best (else final) model (:func:`find_checkpoint`).

        ``FileNotFoundError`` or ``ValueError`` (naming the path) if it cannot; the file loaded is
        the agent's ``checkpoint``.
        """
        if env_id not in ENV_IDS:
            raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
        path = find_checkpoint(path)
        if not zipfile.is_zipfile(path):  # also what a truncated save looks like: the zip directory is at the end
            raise ValueError(_unreadable(path, "not a complete zip archive"))
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as e:  # pragma: no cover - the train extra is missing
            raise ValueError(f"loading {path} needs sb3-contrib (pip install 'solitaire-env[train]')") from e
        try:
            model = MaskablePPO.load(path, device="cpu")
        except Exception as e:  # anything SB3 or torch raises on a bad file
            raise ValueError(_unreadable(path, _short_reason(e))) from e
        try:
            agent = cls(model, env_id, name=name or path, deterministic=deterministic)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        agent.checkpoint = path
        return agent

    def act(self, observation: Any, info: dict) -> int:
        mask = np.asarray(info["action_mask"]).astype(bool)
        obs = self._encoder(np.asarray(observation), info["action_mask"])
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        return int(action)


__all__ = ["RUN_DIR_MODELS", "MaskablePPOAgent", "find_checkpoint"]
