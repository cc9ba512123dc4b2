"""MaskablePPO training from a YAML config, in the RL Zoo's spirit.

A config names the env, the number of parallel games, the budget, the policy and PPO's
hyperparameters, the env's keyword arguments and the seed (see ``configs/*.yaml``). Loading checks it
completely first: an unknown key, a wrong type, a bad value or a missing file is a
:class:`ConfigError` naming the key, never a traceback from inside SB3.

A run directory holds ``config.yaml`` (as used), TensorBoard logs (``tb/``), checkpoints
(``checkpoints/``), ``MaskableEvalCallback``'s ``evaluations.npz`` and ``best_model.zip``,
``final_model.zip``, ``summary.json`` (steps, wall time) and ``learning_curve.png``.
Needs the ``train`` extra.
"""

from __future__ import annotations

import inspect
import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from solitaire_env.registration import ENV_IDS


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the file and the key."""


@dataclass
class EvalConfig:
    freq: int = 50_000  # timesteps between evaluations
    episodes: int = 50
    seed: int = 10_000  # evaluation deals: seed, seed + 1, ... (kept apart from training deals)


@dataclass
class TrainConfig:
    env_id: str
    total_timesteps: int
    n_envs: int = 16
    seed: int = 0
    policy: str = "MlpPolicy"
    policy_kwargs: dict = field(default_factory=dict)
    hyperparams: dict = field(default_factory=dict)
    env_kwargs: dict = field(default_factory=dict)
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint_freq: int = 250_000
    output_dir: str = "runs/default"
    # One thread: these networks are small, and torch's spin-waiting threads collapse (10x slower
    # measured) when the env or anything else shares the cores.
    torch_threads: int = 1

    def to_dict(self) -> dict:
        return asdict(self)


_TYPES: dict[str, tuple[type, ...]] = {
    "env_id": (str,), "total_timesteps": (int,), "n_envs": (int,), "seed": (int,), "policy": (str,),
    "policy_kwargs": (dict,), "hyperparams": (dict,), "env_kwargs": (dict,), "eval": (dict,),
    "checkpoint_freq": (int,), "output_dir": (str,), "torch_threads": (int,),
}
_EVAL_TYPES: dict[str, tuple[type, ...]] = {"freq": (int,), "episodes": (int,), "seed": (int,)}
_ENV_KWARGS = {"obs_mode", "illegal_action", "illegal_penalty", "win_bonus", "step_penalty", "reveal_bonus",
               "max_episode_steps"}
_POLICY_KWARGS = {"net_arch", "activation_fn", "ortho_init", "share_features_extractor", "features_dim"}
POLICIES = ("CardCodesPolicy", "MlpPolicy", "MultiInputPolicy")


def _check_type(where: str, key: str, value: Any, types: tuple[type, ...]) -> None:
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"{where}: '{key}' must be {names}, got {type(value).__name__} {value!r}")


def _ppo_hyperparams() -> dict[str, inspect.Parameter]:
    from sb3_contrib import MaskablePPO

    skip = {"self", "policy", "env", "policy_kwargs", "tensorboard_log", "seed", "device", "verbose",
            "_init_setup_model"}
    return {k: p for k, p in inspect.signature(MaskablePPO.__init__).parameters.items() if k not in skip}


def parse_config(raw: Any, where: str = "config") -> TrainConfig:
    """Validate a config mapping (as read from YAML) and build a :class:`TrainConfig`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a training config is a mapping of keys to values, got {type(raw).__name__}")
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(known))}")
    for key in ("env_id", "total_timesteps"):
        if key not in raw:
            raise ConfigError(f"{where}: missing required key '{key}'")
    for key, value in raw.items():
        _check_type(where, key, value, _TYPES[key])
    if raw["env_id"] not in ENV_IDS:
        raise ConfigError(f"{where}: env_id {raw['env_id']!r} is not one of {', '.join(ENV_IDS)}")
    for key in ("total_timesteps", "n_envs", "checkpoint_freq", "torch_threads"):
        if key in raw and raw[key] <= 0:
            raise ConfigError(f"{where}: '{key}' must be positive, got {raw[key]}")
    if raw.get("policy", "MlpPolicy") not in POLICIES:
        raise ConfigError(f"{where}: policy must be one of {', '.join(POLICIES)}, got {raw['policy']!r}")
    if "features_dim" in raw.get("policy_kwargs", {}) and raw.get("policy") != "CardCodesPolicy":
        raise ConfigError(f"{where}: policy_kwargs.features_dim belongs to CardCodesPolicy only")

    env_kwargs = raw.get("env_kwargs", {})
    bad = sorted(set(env_kwargs) - _ENV_KWARGS)
    if bad:
        raise ConfigError(f"{where}: unknown env_kwargs {', '.join(bad)}; known: {', '.join(sorted(_ENV_KWARGS))}")
    policy_kwargs = raw.get("policy_kwargs", {})
    bad = sorted(set(policy_kwargs) - _POLICY_KWARGS)
    if bad:
        known = ", ".join(sorted(_POLICY_KWARGS))
        raise ConfigError(f"{where}: unknown policy_kwargs {', '.join(bad)}; known: {known}")
    arch = policy_kwargs.get("net_arch")
    if arch is not None and not (
        isinstance(arch, list) and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in arch)
        or isinstance(arch, dict) and set(arch) <= {"pi", "vf"}
        and all(isinstance(v, list) and all(isinstance(x, int) and x > 0 for x in v) for v in arch.values())
    ):
        raise ConfigError(f"{where}: policy_kwargs.net_arch must be a list of positive layer sizes, "
                          f"or {{pi: [...], vf: [...]}}, got {arch!r}")
    if "activation_fn" in policy_kwargs and policy_kwargs["activation_fn"] not in ("tanh", "relu"):
        raise ConfigError(f"{where}: policy_kwargs.activation_fn must be 'tanh' or 'relu'")

    allowed = _ppo_hyperparams()
    hyper = raw.get("hyperparams", {})
    for key, value in hyper.items():
        if key not in allowed:
            takes = ", ".join(sorted(allowed))
            raise ConfigError(f"{where}: unknown hyperparameter '{key}'; MaskablePPO takes: {takes}")
        default = allowed[key].default
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}: hyperparams.{key} must be a number, got {value!r}")
    for key in ("n_steps", "batch_size", "n_epochs"):
        if key in hyper and (not isinstance(hyper[key], int) or hyper[key] <= 0):
            raise ConfigError(f"{where}: hyperparams.{key} must be a positive integer, got {hyper[key]!r}")

    eval_raw = raw.get("eval", {})
    bad = sorted(set(eval_raw) - set(_EVAL_TYPES))
    if bad:
        raise ConfigError(f"{where}: unknown eval key(s) {', '.join(bad)}; known: {', '.join(_EVAL_TYPES)}")
    for key, value in eval_raw.items():
        _check_type(where, f"eval.{key}", value, _EVAL_TYPES[key])
        if key != "seed" and value <= 0:
            raise ConfigError(f"{where}: 'eval.{key}' must be positive, got {value}")
    values = {k: v for k, v in raw.items() if k != "eval"}
    return TrainConfig(**values, eval=EvalConfig(**eval_raw))


def load_config(path: str | Path) -> TrainConfig:
    """Read and validate a YAML training config."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    return parse_config(raw, where=str(path))


def save_config(config: TrainConfig, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))


def train(config: TrainConfig, output_dir: str | Path | None = None, progress: bool = True, verbose: int = 0) -> Path:
    """Train MaskablePPO as the config says; return the run directory."""
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import CheckpointCallback

    from solitaire_env.sb3 import CardCodesPolicy, make_sb3_vec_env

    torch.set_num_threads(config.torch_threads)
    out = Path(output_dir or config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    env_kwargs = dict(config.env_kwargs)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=config.seed, **env_kwargs)
    eval_env = make_sb3_vec_env(config.env_id, n_envs=1, seed=config.eval.seed, **env_kwargs)
    policy_kwargs = dict(config.policy_kwargs)
    if "features_dim" in policy_kwargs:
        policy_kwargs["features_extractor_kwargs"] = {"features_dim": policy_kwargs.pop("features_dim")}
    if "activation_fn" in policy_kwargs:
        policy_kwargs["activation_fn"] = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[policy_kwargs["activation_fn"]]
    policy = CardCodesPolicy if config.policy == "CardCodesPolicy" else config.policy
    model = MaskablePPO(
        policy, venv, seed=config.seed, device="cpu", verbose=verbose, tensorboard_log=str(out / "tb"),
        policy_kwargs=policy_kwargs, **config.hyperparams,
    )
    callbacks = [
        MaskableEvalCallback(
            eval_env, n_eval_episodes=config.eval.episodes, eval_freq=max(config.eval.freq // config.n_envs, 1),
            best_model_save_path=str(out), log_path=str(out), deterministic=True, verbose=verbose,
        ),
        CheckpointCallback(save_freq=max(config.checkpoint_freq // config.n_envs, 1),
                           save_path=str(out / "checkpoints"), name_prefix="ppo"),
    ]
    start = time.perf_counter()
    model.learn(total_timesteps=config.total_timesteps, callback=callbacks, progress_bar=progress)
    wall = time.perf_counter() - start
    model.save(out / "final_model.zip")
    summary = {"env_id": config.env_id, "timesteps": int(model.num_timesteps), "wall_time_s": round(wall, 1),
               "steps_per_s": round(model.num_timesteps / wall, 1), "torch_threads": torch.get_num_threads()}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    venv.close()
    eval_env.close()
    try:
        plot_learning_curve(out)
    except ValueError:
        pass  # too short a run for an evaluation point
    return out


def plot_learning_curve(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Plot the mean evaluation return (and the win rate) against timesteps from ``evaluations.npz``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    run_dir = Path(run_dir)
    log = run_dir / "evaluations.npz"
    if not log.is_file():
        raise ValueError(f"no evaluations.npz in {run_dir}: the run logged no evaluation (too short a run?)")
    data = np.load(log)
    steps, results = data["timesteps"], data["results"]
    mean, std = results.mean(axis=1), results.std(axis=1)
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    ax.plot(steps, mean, marker="o", ms=3, label="mean evaluation return")
    ax.fill_between(steps, mean - std, mean + std, alpha=0.2, label="±1 s.d. over evaluation episodes")
    ax.set_xlabel("timesteps")
    ax.set_ylabel("evaluation return (config reward)")
    config_path = run_dir / "config.yaml"
    title = yaml.safe_load(config_path.read_text()).get("env_id", "") if config_path.is_file() else ""
    ax.set_title(f"MaskablePPO on {title}" if title else "MaskablePPO")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = Path(out) if out else run_dir / "learning_curve.png"
    fig.savefig(path)
    plt.close(fig)
    return path
