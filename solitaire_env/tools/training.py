"""MaskablePPO training from a YAML config, in the RL Zoo's spirit.

A config names the env, the number of parallel games, the budget, the policy and PPO's
hyperparameters, the env's keyword arguments and the seed (see ``configs/*.yaml``). Loading checks it
completely first: an unknown key, a wrong type, a bad value or a missing file is a
:class:`ConfigError` naming the key, never a traceback from inside SB3.

A run directory holds ``config.yaml`` (as used), TensorBoard logs (``tb/``), checkpoints
(``checkpoints/``), ``MaskableEvalCallback``'s ``evaluations.npz`` and ``best_model.zip``,
``final_model.zip``, ``summary.json`` (steps, wall time, the deals of each phase) and
``learning_curve.png``. Needs the ``train`` extra.

Deals (:mod:`solitaire_env.engine.deals`): the training envs play the ``train`` split (``deals``, drawn at
random, never a validation or test deal); every evaluation round plays the same validation deals
``eval.seed .. eval.seed + eval.episodes - 1`` (10,000 .. by default), so ``best_model.zip`` is
chosen by comparing checkpoints on one fixed set; the test deals (0 .. 9,999; docs/results.md
reports 0-999) are left to ``solitaire-env evaluate``.

A directory that already holds a run is refused unless ``resume=True`` (go on from its last
checkpoint in ``checkpoints/``, with the same config; evaluations logged after that checkpoint are
dropped, as the training that led to them is replayed) or ``overwrite=True`` (delete the run's files
first).

Warm start (optional ``pretrain`` section): before PPO starts, the policy is fitted to the moves
of the rule-based :class:`~agents.heuristic.HeuristicAgent` (behaviour cloning). The heuristic
plays ``pretrain.episodes`` deals (``pretrain.seed``, ``seed + 1``, ...; they must be train
deals) in the env the config trains on (same
``env_kwargs``: the same rewards and time limit), seeing only the observation, as every agent
does. Every (observation, action mask, heuristic action) it plays, except the aimless moves of a
heuristic that is ``stuck``, becomes a training example: the policy's masked action distribution
(``policy.evaluate_actions`` with the masks) is fitted by cross-entropy for ``pretrain.epochs``
passes, and with ``pretrain.value: true`` the value head by squared error on the discounted
returns (``hyperparams.gamma``) of those episodes. PPO then goes on from that policy; a lower
``hyperparams.learning_rate`` keeps more of the warm start. ``summary.json`` gets a ``pretrain``
entry (examples, agreement with the heuristic on them, wall time)::

    pretrain:
      agent: heuristic      # the only teacher
      episodes: 1000        # heuristic games to learn from
      seed: 1000000         # their deals: seed, seed + 1, ...
      epochs: 5             # passes over the examples
      batch_size: 1024
      learning_rate: 0.001  # Adam, for the pretraining only
      value: true           # also fit the value head
      value_coef: 0.5
"""

from __future__ import annotations

import inspect
import json
import shutil
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from solitaire_env.engine.deals import TRAIN, VALIDATION, deal_set, describe
from solitaire_env.envs.registration import ENV_IDS


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the file and the key."""


@dataclass
class EvalConfig:
    freq: int = 50_000  # timesteps between evaluations
    episodes: int = 50
    seed: int = 10_000  # evaluation deals: seed, seed + 1, ...: validation deals, the same every round
    # False: MaskableEvalCallback samples the policy, so best_model.zip is the best sampled policy
    # (what the two-deck games report: their greedy policies cycle)
    deterministic: bool = True


@dataclass
class PretrainConfig:
    """Behaviour cloning of a teacher agent before PPO (the module docstring says how)."""

    agent: str = "heuristic"
    episodes: int = 1000
    seed: int = 1_000_000  # teacher deals: seed, seed + 1, ... (train deals)
    epochs: int = 5
    batch_size: int = 1024
    learning_rate: float = 1e-3
    value: bool = True
    value_coef: float = 0.5


@dataclass
class TrainConfig:
    env_id: str
    total_timesteps: int
    n_envs: int = 16
    seed: int = 0
    deals: str = "train"  # the training envs' deals: "train" or "A:B" inside the train split
    policy: str = "MlpPolicy"
    policy_kwargs: dict = field(default_factory=dict)
    hyperparams: dict = field(default_factory=dict)
    env_kwargs: dict = field(default_factory=dict)
    eval: EvalConfig = field(default_factory=EvalConfig)
    pretrain: PretrainConfig | None = None
    checkpoint_freq: int = 250_000
    output_dir: str = "runs/default"
    # One thread: these networks are small, and torch's spin-waiting threads collapse (10x slower
    # measured) when the env or anything else shares the cores.
    torch_threads: int = 1

    def to_dict(self) -> dict:
        return asdict(self)


_TYPES: dict[str, tuple[type, ...]] = {
    "env_id": (str,), "total_timesteps": (int,), "n_envs": (int,), "seed": (int,), "deals": (str,), "policy": (str,),
    "policy_kwargs": (dict,), "hyperparams": (dict,), "env_kwargs": (dict,), "eval": (dict,),
    "checkpoint_freq": (int,), "output_dir": (str,), "torch_threads": (int,), "pretrain": (dict,),
}
_EVAL_TYPES: dict[str, tuple[type, ...]] = {"freq": (int,), "episodes": (int,), "seed": (int,),
                                            "deterministic": (bool,)}
_PRETRAIN_TYPES: dict[str, tuple[type, ...]] = {
    "agent": (str,), "episodes": (int,), "seed": (int,), "epochs": (int,), "batch_size": (int,),
    "learning_rate": (float, int), "value": (bool,), "value_coef": (float, int),
}
PRETRAIN_AGENTS = ("heuristic",)
_ENV_KWARGS = {"obs_mode", "illegal_action", "illegal_penalty", "win_bonus", "step_penalty", "reveal_bonus",
               "max_episode_steps", "track_revisits", "no_revisit", "action_features"}
_POLICY_KWARGS = {"net_arch", "activation_fn", "ortho_init", "share_features_extractor", "features_dim"}
POLICIES = ("CardCodesPolicy", "MlpPolicy", "MultiInputPolicy")
# The observation modes each policy reads (SB3's MlpPolicy one-hots a MultiDiscrete itself).
POLICY_OBS_MODES = {"CardCodesPolicy": ("codes",), "MlpPolicy": ("codes", "onehot"),
                    "MultiInputPolicy": ("dict", "piles")}
# What a run writes into its directory: what --overwrite deletes, and what marks a directory as holding a run.
RUN_FILES = ("config.yaml", "summary.json", "pretrain.json", "pretrained_model.zip", "best_model.zip",
             "final_model.zip", "evaluations.npz", "learning_curve.png", "evaluation.json", "evaluation.csv")
RUN_DIRS = ("checkpoints", "tb")


class RunDirError(ValueError):
    """A run directory that cannot be used as asked (it holds a run, or has nothing to resume)."""


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
        hint = " (the training deals are the top-level key 'deals')" if "deals" in bad else ""
        raise ConfigError(f"{where}: unknown env_kwargs {', '.join(bad)}; known: "
                          f"{', '.join(sorted(_ENV_KWARGS))}{hint}")
    _check_env_kwargs(raw["env_id"], env_kwargs, where)
    obs_mode = env_kwargs.get("obs_mode", "codes")
    policy = raw.get("policy", "MlpPolicy")
    if obs_mode not in POLICY_OBS_MODES[policy]:
        fits = ", ".join(p for p, modes in POLICY_OBS_MODES.items() if obs_mode in modes)
        raise ConfigError(f"{where}: policy {policy} reads obs_mode {' or '.join(POLICY_OBS_MODES[policy])}, but "
                          f"env_kwargs.obs_mode is {obs_mode!r}; for {obs_mode!r} use {fits}")
    deals = raw.get("deals", "train")
    try:
        train_deals = deal_set(deals)
    except ValueError as e:
        raise ConfigError(f"{where}: 'deals': {e}") from None
    chosen = train_deals.deals
    if not (isinstance(chosen, range) and chosen.start in TRAIN and chosen[-1] in TRAIN):
        raise ConfigError(f"{where}: 'deals' must be 'train' or a range A:B inside the train split "
                          f"({TRAIN.start} .. 2**62 - 1), got {deals!r}: training never plays validation or test deals")
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
        if key not in ("seed", "deterministic") and value <= 0:
            raise ConfigError(f"{where}: 'eval.{key}' must be positive, got {value}")
    eval_config = EvalConfig(**eval_raw)
    evals = range(eval_config.seed, eval_config.seed + eval_config.episodes)
    if evals.start not in VALIDATION or evals.stop - 1 not in VALIDATION:
        raise ConfigError(f"{where}: the evaluation deals {evals.start}-{evals.stop - 1} (eval.seed, eval.episodes) "
                          f"must be validation deals ({VALIDATION.start}-{VALIDATION.stop - 1})")
    pretrain = None
    if raw.get("pretrain") is not None:
        pretrain = _parse_pretrain(raw["pretrain"], raw, eval_config, where)
    values = {k: v for k, v in raw.items() if k not in ("eval", "pretrain")}
    return TrainConfig(**values, eval=eval_config, pretrain=pretrain)


def _parse_pretrain(pre: dict, raw: dict, eval_config: EvalConfig, where: str) -> PretrainConfig:
    bad = sorted(set(pre) - set(_PRETRAIN_TYPES))
    if bad:
        raise ConfigError(f"{where}: unknown pretrain key(s) {', '.join(bad)}; known: {', '.join(_PRETRAIN_TYPES)}")
    for key, value in pre.items():
        _check_type(where, f"pretrain.{key}", value, _PRETRAIN_TYPES[key])
        if key in ("episodes", "epochs", "batch_size", "learning_rate") and value <= 0:
            raise ConfigError(f"{where}: 'pretrain.{key}' must be positive, got {value}")
        if key in ("seed", "value_coef") and value < 0:
            raise ConfigError(f"{where}: 'pretrain.{key}' must not be negative, got {value}")
    config = PretrainConfig(**pre)
    if config.agent not in PRETRAIN_AGENTS:
        raise ConfigError(f"{where}: pretrain.agent must be one of {', '.join(PRETRAIN_AGENTS)}, got {config.agent!r}")
    if raw.get("env_kwargs", {}).get("obs_mode", "codes") != "codes":
        raise ConfigError(f"{where}: pretrain needs the default 'codes' observation (the heuristic reads it), "
                          f"but env_kwargs.obs_mode is {raw['env_kwargs']['obs_mode']!r}")
    deals = range(config.seed, config.seed + config.episodes)
    if deals.start not in TRAIN or deals.stop - 1 not in TRAIN:
        raise ConfigError(f"{where}: pretrain deals {deals.start}-{deals.stop - 1} (pretrain.seed, pretrain.episodes) "
                          f"must be train deals ({TRAIN.start} and up), apart from the validation and test deals")
    return config


def _check_env_kwargs(env_id: str, env_kwargs: dict, where: str) -> None:
    """Build the env once with ``env_kwargs``, so a bad value is a ConfigError before any run starts."""
    import gymnasium as gym

    import solitaire_env  # noqa: F401  (registers the ids)

    try:
        gym.make_vec(env_id, num_envs=1, **env_kwargs).close()
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: env_kwargs: {e}") from None


def describe_deals(config: TrainConfig) -> dict[str, str]:
    """Which deals each phase of a run plays, in words (for the run's summary and its first lines)."""
    train = deal_set(config.deals)
    if train.sampled:
        words = f"train split (deals {TRAIN.start} .. 2**62 - 1), drawn at random (seed {config.seed})"
    else:
        words = f"{train.name}, in order"
    deals = {"train": words,
             "validation": f"{describe(config.eval.seed, config.eval.seed + config.eval.episodes - 1)}, every round"}
    if config.pretrain is not None:
        pre = config.pretrain
        deals["pretrain"] = describe(pre.seed, pre.seed + pre.episodes - 1)
    return deals


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
    data = config.to_dict()
    if data["pretrain"] is None:
        del data["pretrain"]
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False))


def prepare_run_dir(out: Path, config: TrainConfig, resume: bool = False, overwrite: bool = False) -> Path | None:
    """Make ``out`` ready for ``config``'s run; return the checkpoint to resume from (``None``: start anew).

    ``RunDirError`` (nothing changed) when ``out`` holds a run and neither flag is given, or when
    ``resume`` finds a run of another config.
    """
    if resume and overwrite:
        raise RunDirError("resume and overwrite exclude each other: say which is meant")
    holds_run = out.is_dir() and any((out / name).exists() for name in RUN_FILES + RUN_DIRS)
    if holds_run and not (resume or overwrite):
        raise RunDirError(f"{out} already holds a training run: pass --resume to go on from its last checkpoint, "
                          f"--overwrite to replace it, or --output DIR for a new directory")
    if holds_run and resume:
        saved = out / "config.yaml"
        if not saved.is_file():
            raise RunDirError(f"cannot resume {out}: it has no config.yaml (use --overwrite to start anew)")
        earlier = parse_config(yaml.safe_load(saved.read_text()), where=str(saved)).to_dict()
        now = config.to_dict()
        differ = sorted(k for k in now if k not in ("total_timesteps", "output_dir") and now[k] != earlier.get(k))
        if differ:
            raise RunDirError(f"cannot resume {out}: its run used another config ({', '.join(differ)} differ); "
                              f"use --overwrite or another --output")
        checkpoint = latest_checkpoint(out)
        if checkpoint is not None:
            return checkpoint
        print(f"{out}: no checkpoint saved yet, starting the run anew")
    if holds_run:  # overwrite, or a resume with nothing to resume from
        for name in RUN_FILES:
            (out / name).unlink(missing_ok=True)
        for name in RUN_DIRS:
            shutil.rmtree(out / name, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    return None


def latest_checkpoint(out: Path) -> Path | None:
    """The checkpoint with the most timesteps in ``out/checkpoints`` (``ppo_<steps>_steps.zip``), if any."""
    found = []
    for path in (out / "checkpoints").glob("ppo_*_steps.zip"):
        steps = path.name.removeprefix("ppo_").removesuffix("_steps.zip")
        if steps.isdigit():
            found.append((int(steps), path))
    return max(found)[1] if found else None


def train(config: TrainConfig, output_dir: str | Path | None = None, progress: bool = True, verbose: int = 0,
          resume: bool = False, overwrite: bool = False) -> Path:
    """Train MaskablePPO as the config says; return the run directory.

    A directory that holds a run is refused (``RunDirError``) unless ``resume`` (go on from its last
    checkpoint) or ``overwrite`` (delete the run's files first) says which is meant.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CheckpointCallback

    from solitaire_env.envs.sb3 import CardCodesPolicy, make_sb3_vec_env

    out = Path(output_dir or config.output_dir)
    checkpoint = prepare_run_dir(out, config, resume=resume, overwrite=overwrite)
    torch.set_num_threads(config.torch_threads)
    save_config(config, out / "config.yaml")
    deals = describe_deals(config)
    for phase, words in deals.items():
        print(f"{phase} deals: {words}")
    env_kwargs = dict(config.env_kwargs)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=config.seed, deals=config.deals, **env_kwargs)
    evals = range(config.eval.seed, config.eval.seed + config.eval.episodes)
    eval_env = make_sb3_vec_env(config.env_id, n_envs=1, deals=evals, **env_kwargs)
    pretrain_stats = None
    if checkpoint is not None:
        model = MaskablePPO.load(checkpoint, env=venv, device="cpu", tensorboard_log=str(out / "tb"))
        # Fresh training deals after the resume, not a replay of the run's first ones.
        venv.seed(config.seed + model.num_timesteps)
        print(f"resuming {out} from {checkpoint.name} ({model.num_timesteps} timesteps)")
    else:
        policy_kwargs = dict(config.policy_kwargs)
        if "features_dim" in policy_kwargs:
            policy_kwargs["features_extractor_kwargs"] = {"features_dim": policy_kwargs.pop("features_dim")}
        if "activation_fn" in policy_kwargs:
            activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
            policy_kwargs["activation_fn"] = activations[policy_kwargs["activation_fn"]]
        policy = CardCodesPolicy if config.policy == "CardCodesPolicy" else config.policy
        model = MaskablePPO(
            policy, venv, seed=config.seed, device="cpu", verbose=verbose, tensorboard_log=str(out / "tb"),
            policy_kwargs=policy_kwargs, **config.hyperparams,
        )
        if config.pretrain is not None:
            pretrain_stats = pretrain_policy(model, config, verbose=verbose)
            (out / "pretrain.json").write_text(json.dumps(pretrain_stats, indent=2))
            model.save(out / "pretrained_model.zip")
    evaluation = fixed_deals_eval_callback(
        eval_env, n_eval_episodes=config.eval.episodes, eval_freq=max(config.eval.freq // config.n_envs, 1),
        best_model_save_path=str(out), log_path=str(out), deterministic=config.eval.deterministic,
        verbose=verbose,
    )
    if checkpoint is not None:
        evaluation.restore(out, model.num_timesteps)
    callbacks = [
        evaluation,
        CheckpointCallback(save_freq=max(config.checkpoint_freq // config.n_envs, 1),
                           save_path=str(out / "checkpoints"), name_prefix="ppo"),
    ]
    start, first_step = time.perf_counter(), model.num_timesteps
    model.learn(total_timesteps=max(config.total_timesteps - model.num_timesteps, 0), callback=callbacks,
                progress_bar=progress, reset_num_timesteps=checkpoint is None)
    wall = time.perf_counter() - start
    model.save(out / "final_model.zip")
    steps = model.num_timesteps - first_step
    summary = {"env_id": config.env_id, "timesteps": int(model.num_timesteps), "wall_time_s": round(wall, 1),
               "steps_per_s": round(steps / wall, 1) if wall > 0 else None,
               "torch_threads": torch.get_num_threads(), "deals": deals}
    if checkpoint is not None:
        summary["resumed_from_timesteps"] = int(first_step)  # wall time and steps/s are this piece's
    if pretrain_stats is not None:
        summary["pretrain"] = pretrain_stats
    elif checkpoint is not None and (out / "pretrain.json").is_file():
        summary["pretrain"] = json.loads((out / "pretrain.json").read_text())
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    venv.close()
    eval_env.close()
    try:
        plot_learning_curve(out)
    except ValueError:
        pass  # too short a run for an evaluation point
    return out


def fixed_deals_eval_callback(eval_env: Any, **kwargs: Any) -> Any:
    """sb3-contrib's ``MaskableEvalCallback`` that plays the same deals every round.

    ``eval_env`` has an ordered deal set (its one sub-env walks through it); before each round the
    env is seeded with 0, which rewinds it to the set's first deal, so every round plays deals 0 ..
    ``n_eval_episodes - 1`` of the set and ``best_model.zip`` compares checkpoints on the same deals.
    """
    import numpy as np
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback

    class FixedDealsEvalCallback(MaskableEvalCallback):
        def _on_step(self) -> bool:
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(0)  # used by the reset that starts the round
            return super()._on_step()

        def restore(self, out: Path, timesteps: int) -> None:
            """Take up the log of a run resumed at ``timesteps``: the rounds up to there, and their best."""
            log = out / "evaluations.npz"
            if not log.is_file():
                return
            data = np.load(log)
            keep = data["timesteps"] <= timesteps
            self.evaluations_timesteps = data["timesteps"][keep].tolist()
            self.evaluations_results = data["results"][keep].tolist()
            self.evaluations_length = data["ep_lengths"][keep].tolist()
            means = data["results"].mean(axis=1)
            if keep.any() and keep[int(np.argmax(means))]:
                self.best_mean_reward = float(means[keep].max())
            else:  # best_model.zip came from a round that is replayed now: choose again
                (out / "best_model.zip").unlink(missing_ok=True)

    return FixedDealsEvalCallback(eval_env, **kwargs)


def collect_demonstrations(config: TrainConfig) -> dict[str, Any]:
    """Let ``config.pretrain.agent`` play ``config.pretrain.episodes`` deals in the config's env.

    Returns arrays ``obs`` (codes), ``masks`` (bool), ``actions`` and ``returns`` (the discounted
    return from each step, ``hyperparams.gamma``), one row per recorded step (the steps a stuck
    heuristic plays are left out), plus ``episodes``, ``wins``, ``steps`` (all steps played) and
    ``mean_foundation_cards``.
    """
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401  (registers the ids)
    from agents import make_agent

    pre = config.pretrain or PretrainConfig()
    gamma = float(config.hyperparams.get("gamma", _ppo_hyperparams()["gamma"].default))
    env = gym.make(config.env_id, **config.env_kwargs)
    agent = make_agent(pre.agent, config.env_id, seed=pre.seed)
    obs_rows, mask_rows, actions, returns = [], [], [], []
    wins = steps = cards = 0
    for episode in range(pre.episodes):
        deal = pre.seed + episode
        obs, info = env.reset(seed=deal)
        agent.reset(deal)
        rewards, keep = [], []
        done = False
        while not done:
            action = agent.act(obs, info)
            if not getattr(agent, "stuck", False):
                obs_rows.append(obs.astype(np.uint8))
                mask_rows.append(np.asarray(info["action_mask"], dtype=bool))
                actions.append(action)
                keep.append(len(rewards))
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
        steps += len(rewards)
        wins += bool(info["is_won"])
        cards += int(info["foundation_cards"])
        to_go = np.zeros(len(rewards) + 1)
        for t in range(len(rewards) - 1, -1, -1):
            to_go[t] = rewards[t] + gamma * to_go[t + 1]
        returns.extend(to_go[keep].tolist())
    env.close()
    n_obs = len(obs_rows)
    return {
        "obs": np.stack(obs_rows) if n_obs else np.zeros((0, env.observation_space.shape[0]), np.uint8),
        "masks": np.stack(mask_rows) if n_obs else np.zeros((0, env.action_space.n), bool),
        "actions": np.asarray(actions, dtype=np.int64), "returns": np.asarray(returns, dtype=np.float32),
        "episodes": pre.episodes, "wins": wins, "steps": steps, "mean_foundation_cards": cards / max(pre.episodes, 1),
    }


def pretrain_policy(model: Any, config: TrainConfig, verbose: int = 0) -> dict[str, Any]:
    """Warm start: fit ``model.policy`` to the teacher's moves (see the module docstring).

    Returns the statistics that go into ``summary.json``: the teacher's games, the number of
    examples, the policy's agreement with the teacher on those with a choice (:func:`agreement`)
    before and after, what a random legal choice would agree on, the final losses and the wall time.
    """
    import numpy as np
    import torch

    pre = config.pretrain or PretrainConfig()
    start = time.perf_counter()
    data = collect_demonstrations(config)
    collect_s = time.perf_counter() - start
    obs = data["obs"]
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=pre.learning_rate)
    masks, actions = data["masks"], torch.as_tensor(data["actions"])
    returns = torch.as_tensor(data["returns"])
    n = len(actions)
    rng = np.random.default_rng(pre.seed)
    agreement_before = agreement(policy, data)
    policy_loss = value_loss = float("nan")
    for epoch in range(pre.epochs):
        order = rng.permutation(n)
        totals = np.zeros(2)
        for lo in range(0, n, pre.batch_size):
            idx = order[lo:lo + pre.batch_size]
            batch = torch.as_tensor(obs[idx], dtype=torch.float32)
            values, log_prob, _ = policy.evaluate_actions(batch, actions[idx], action_masks=masks[idx])
            pol = -log_prob.mean()
            val = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            loss = pol + pre.value_coef * val if pre.value else pol
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            optimizer.step()
            totals += (pol.item() * len(idx), val.item() * len(idx))
        policy_loss, value_loss = totals / max(n, 1)
        if verbose:
            print(f"pretrain epoch {epoch + 1}/{pre.epochs}: cross-entropy {policy_loss:.4f}, "
                  f"value mse {value_loss:.5f}")
    policy.set_training_mode(False)
    stats = {
        "agent": pre.agent, "episodes": data["episodes"], "teacher_wins": data["wins"],
        "teacher_mean_foundation_cards": round(data["mean_foundation_cards"], 2), "steps_played": data["steps"],
        "examples": n, "epochs": pre.epochs, "cross_entropy": round(float(policy_loss), 4),
        "value_mse": round(float(value_loss), 6), "agreement_before": round(agreement_before, 4),
        "agreement": round(agreement(policy, data), 4),
        "chance_agreement": round(chance_agreement(data), 4),
        "collect_s": round(collect_s, 1), "wall_time_s": round(time.perf_counter() - start, 1),
    }
    if verbose:
        print(f"pretrain: {stats}")
    return stats


def agreement(policy: Any, data: dict[str, Any], batch_size: int = 8192) -> float:
    """How often the policy's most likely legal action is the teacher's, over ``data``'s examples
    with a choice (two legal actions or more; 0.0 if there are none)."""
    import numpy as np
    import torch

    choice = np.flatnonzero(data["masks"].sum(axis=1) > 1)
    hits = 0
    with torch.no_grad():
        for lo in range(0, len(choice), batch_size):
            idx = choice[lo:lo + batch_size]
            obs = torch.as_tensor(data["obs"][idx], dtype=torch.float32)
            dist = policy.get_distribution(obs, action_masks=data["masks"][idx])
            chosen = dist.distribution.probs.argmax(dim=1).numpy()
            hits += int((chosen == data["actions"][idx]).sum())
    return hits / max(len(choice), 1)


def chance_agreement(data: dict[str, Any]) -> float:
    """What a uniformly random legal choice would agree on, over the same examples as :func:`agreement`."""
    import numpy as np

    legal = data["masks"].sum(axis=1)
    legal = legal[legal > 1]
    return float(np.mean(1.0 / legal)) if len(legal) else 0.0


def plot_learning_curve(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Plot the mean evaluation return (and the win rate) against timesteps from ``evaluations.npz``.

    Raises ``FileNotFoundError`` / ``NotADirectoryError`` when ``run_dir`` is missing or not a directory,
    ``ValueError`` when it holds no ``evaluations.npz``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        if run_dir.exists():
            raise NotADirectoryError(f"run directory {run_dir} is not a directory")
        raise FileNotFoundError(f"run directory {run_dir} does not exist")
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
