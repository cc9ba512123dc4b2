""":class:`MaskablePPOAgent`: plays a trained sb3-contrib MaskablePPO checkpoint (needs the ``train`` extra)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from solitaire_env.agents.base import Agent
from solitaire_env.envs.base import DICT_MODES, OBS_MODES, ObservationEncoder, observation_space
from solitaire_env.envs.registration import ENV_IDS

# The env options a policy's play depends on, read from its run's config (or a <checkpoint>.json beside it).
# ``draw`` is a rule (Klondike's): a policy trained on draw 1 is refused a draw 3 game, not played there silently.
PLAY_OPTIONS = ("obs_mode", "action_features", "no_revisit", "track_revisits", "draw")

# Where the classes named in the pickles of checkpoints saved by 0.2 and earlier live now: the agents
# installed as a top-level ``agents`` package then, and the policies sat in the SB3 adapter.
LEGACY_POLICIES = ("FastMaskablePolicy", "CardCodesPolicy", "CardEmbedding", "UpdateThreads")


@contextlib.contextmanager
def legacy_class_paths():
    """While loading a checkpoint, the old class paths name the classes where they live now."""
    from solitaire_env.agents import move_scorer, policies
    from solitaire_env.envs import sb3

    aliases = {"agents": sys.modules["solitaire_env.agents"], "agents.move_scorer": move_scorer,
               "agents.policies": policies}
    added = [name for name in aliases if name not in sys.modules]
    sys.modules.update({name: aliases[name] for name in added})
    moved = [name for name in LEGACY_POLICIES if not hasattr(sb3, name)]
    for name in moved:
        setattr(sb3, name, getattr(policies, name))
    try:
        yield
    finally:
        for name in added:
            del sys.modules[name]
        for name in moved:
            delattr(sb3, name)


def load_model(path: str | os.PathLike, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)``, also for checkpoints that name the classes' old paths."""
    from sb3_contrib import MaskablePPO

    with legacy_class_paths():
        return MaskablePPO.load(path, **kwargs)


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

    def __init__(self, model: Any, env_id: str, name: str = "ppo", deterministic: bool = True,
                 play_options: dict | None = None) -> None:
        self.model, self.env_id, self.name = model, env_id, name
        self.deterministic = deterministic
        self.checkpoint: str | None = None  # the file it was loaded from, by load()
        variant = ENV_IDS[env_id][1]
        if getattr(model.action_space, "n", None) != variant.n_actions:
            raise ValueError(f"the checkpoint's action space is {model.action_space}, but {env_id} has "
                             f"Discrete({variant.n_actions}): it was trained on another game")
        self._encoder = None
        options = {k: v for k, v in (play_options or {}).items() if k in PLAY_OPTIONS}
        for mode in DICT_MODES:  # observations with action features only an env can make: play in one
            if model.observation_space == observation_space(variant, mode, action_features=True):
                self.env_kwargs = {**options, "obs_mode": mode, "action_features": True}
                return
        for mode in OBS_MODES:
            if model.observation_space == observation_space(variant, mode):
                self._encoder = ObservationEncoder(variant, mode)
                break
        else:
            raise ValueError(f"the checkpoint's observation space {model.observation_space} is none of "
                             f"{env_id}'s ({', '.join(OBS_MODES)}): it was trained on another game or observation")
        # Re-encoded from the default observation; the options that change the rules or what the mask allows
        # still hold.
        self.env_kwargs = {k: v for k, v in options.items() if k in ("no_revisit", "draw") and v}

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
            import sb3_contrib  # noqa: F401
        except ImportError as e:  # pragma: no cover - the train extra is missing
            raise ValueError(f"loading {path} needs sb3-contrib (pip install 'solitaire-env[train]')") from e
        try:
            model = load_model(path, device="cpu")
        except Exception as e:  # anything SB3 or torch raises on a bad file
            raise ValueError(_unreadable(path, _short_reason(e))) from e
        try:
            agent = cls(model, env_id, name=name or path, deterministic=deterministic,
                        play_options=play_options(path))
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        agent.checkpoint = path
        return agent

    @property
    def batched(self) -> bool:
        """Whether :meth:`act_batch` plays as :meth:`act` does: greedy play, no randomness to keep in step."""
        return self.deterministic

    def act_batch(self, observations: Any, masks: np.ndarray) -> np.ndarray:
        """The greedy actions for a batch of observations of this agent's env options (what a batched
        env returns) and their masks: one forward pass for all."""
        obs = observations if self._encoder is None else self._encoder(np.asarray(observations), masks)
        return policy_actions(self.model.policy, obs, np.asarray(masks).astype(bool), deterministic=True)

    def act(self, observation: Any, info: dict) -> int:
        mask = np.asarray(info["action_mask"]).astype(bool)
        obs = observation if self._encoder is None else self._encoder(np.asarray(observation), info["action_mask"])
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        return int(action)


def policy_actions(policy: Any, obs: Any, masks: np.ndarray, deterministic: bool) -> np.ndarray:
    """The actions of an SB3 maskable policy for a batch of observations (greedy or sampled)."""
    import torch

    with torch.no_grad():
        tensor = policy.obs_to_tensor(obs)[0]
        dist = policy.get_distribution(tensor, action_masks=masks)
        return dist.get_actions(deterministic=deterministic).cpu().numpy().astype(np.int64)


def play_options(path: str | os.PathLike) -> dict:
    """The env options (:data:`PLAY_OPTIONS`) a checkpoint was trained with: from ``<checkpoint>.json``
    (``{"env_kwargs": {...}}``, as the shipped policies have) or else the ``config.yaml`` of its run
    directory (the checkpoint's folder, or the one above ``checkpoints/``); ``{}`` if neither is there."""
    path = Path(path)
    sidecar = path.with_suffix(".json")
    if sidecar.is_file():
        return dict(json.loads(sidecar.read_text()).get("env_kwargs", {}))
    for folder in (path.parent, path.parent.parent):
        config = folder / "config.yaml"
        if config.is_file():
            raw = yaml.safe_load(config.read_text())
            return dict(raw.get("env_kwargs") or {}) if isinstance(raw, dict) else {}
    return {}


__all__ = ["PLAY_OPTIONS", "RUN_DIR_MODELS", "MaskablePPOAgent", "find_checkpoint", "play_options", "policy_actions"]
