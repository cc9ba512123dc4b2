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

Warm start (optional ``pretrain`` section; :mod:`solitaire_env.tools.imitation` does the work):
before PPO starts, the policy is fitted to the moves of the rule-based
:class:`~solitaire_env.agents.heuristic.HeuristicAgent`. Round 0 is behaviour cloning: the heuristic plays
``pretrain.episodes`` deals (``pretrain.seed``, ``seed + 1``, ...; train deals) in the batched env
the config trains on (same ``env_kwargs``: rewards, time limit, ``no_revisit``), reading each
position's default ``codes`` observation while the policy gets the config's observation. Every
move it makes, except the aimless moves of a heuristic that is ``stuck``, becomes a training
example: the policy's masked action distribution is fitted by cross-entropy for ``pretrain.epochs``
passes, and with ``pretrain.value: true`` the value head by squared error on the discounted returns
(``hyperparams.gamma``) of those games. Each further round (``pretrain.rounds``) is a DAgger round on
the next ``episodes`` deals: the policy plays (greedily; the teacher's move with probability
``pretrain.beta``), the heuristic labels every position it reaches, and the policy is fitted again
on all rounds' examples. With ``pretrain.eval_episodes`` each round ends with the policy playing
the first validation deals of ``eval`` greedily, and PPO starts from the round with the best win
rate. A finished round is saved (``pretrain/round_<r>.zip`` and ``.npz``, ``pretrain.json``), so
``--resume`` goes on after the last one. PPO then goes on from that policy; a lower
``hyperparams.learning_rate`` keeps more of the warm start. ``summary.json`` gets a ``pretrain``
entry (examples, agreement with the heuristic, wall time, each round)::

    pretrain:
      agent: heuristic      # the teacher: heuristic, or search (search:WxN) for the search agent
      episodes: 1000        # games per round
      seed: 1000000         # their deals: seed, seed + 1, ... (round r: seed + r * episodes, ...)
      epochs: 5             # passes over the examples, each round
      batch_size: 1024
      learning_rate: 0.001  # Adam, for the pretraining only
      value: true           # also fit the value head
      value_coef: 0.5
      rounds: 1             # 1: cloning only; more: DAgger rounds after it
      beta: 0.0             # DAgger rounds: the share of moves the teacher plays
      eval_episodes: 0      # validation deals played after each round (at most eval.episodes)
      select_epoch: false   # true: fit one epoch at a time, score each on those deals, keep the best

Fine-tuning (optional ``init_model``): a saved model (``.zip``; e.g. ``agents/pretrained/rainbow.zip``
or another run's ``selected_model.zip``) whose policy weights the run starts from, before any
pretraining and PPO. Its policy class and sizes must be the config's (a mismatch is a
``ConfigError``). The run then ends, as a pretraining run does, by scoring the starting policy,
``best_model.zip`` and ``final_model.zip`` on the first ``eval.episodes`` validation deals and copying
the best to ``selected_model.zip``, so fine-tuning never reports a policy worse than its start
without saying so.

One file or two: a config with a ``pretrain`` section and PPO steps (the whole recipe in one file)
trains exactly as its two halves do, the same config with ``total_timesteps: 0`` and then with
``init_model`` set to that run's ``selected_model.zip`` and no ``pretrain`` section: the PPO phase
starts from the random state of a freshly built model either way (tested bit for bit).
"""

from __future__ import annotations

import copy
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
    rounds: int = 1  # 1: cloning of the teacher's games; each further round is a DAgger round
    beta: float = 0.0  # DAgger rounds: the share of moves the teacher plays (the student plays the rest)
    eval_episodes: int = 0  # validation deals (eval.seed ..) the policy plays greedily after each round
    select_epoch: bool = False  # with eval_episodes: score every epoch on those deals and keep the best


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
    init_model: str | None = None  # a saved model whose policy weights the run starts from
    # One thread: these networks are small, and torch's spin-waiting threads collapse (10x slower
    # measured) when the env or anything else shares the cores.
    torch_threads: int = 1
    # Threads for PPO's update alone (None: torch_threads); the rollouts keep torch_threads. Two
    # threads speed up the update on an otherwise idle 2-core machine (docs/results.md).
    update_threads: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


_TYPES: dict[str, tuple[type, ...]] = {
    "env_id": (str,), "total_timesteps": (int,), "n_envs": (int,), "seed": (int,), "deals": (str,), "policy": (str,),
    "policy_kwargs": (dict,), "hyperparams": (dict,), "env_kwargs": (dict,), "eval": (dict,),
    "checkpoint_freq": (int,), "output_dir": (str,), "torch_threads": (int,), "pretrain": (dict,),
    "init_model": (str,), "update_threads": (int,),
}
_EVAL_TYPES: dict[str, tuple[type, ...]] = {"freq": (int,), "episodes": (int,), "seed": (int,),
                                            "deterministic": (bool,)}
_PRETRAIN_TYPES: dict[str, tuple[type, ...]] = {
    "agent": (str,), "episodes": (int,), "seed": (int,), "epochs": (int,), "batch_size": (int,),
    "learning_rate": (float, int), "value": (bool,), "value_coef": (float, int), "rounds": (int,),
    "beta": (float, int), "eval_episodes": (int,), "select_epoch": (bool,),
}
PRETRAIN_AGENTS = ("heuristic", "search")  # search also as search:WxN (solitaire_env.agents.make_agent)
_ENV_KWARGS = {"obs_mode", "illegal_action", "illegal_penalty", "win_bonus", "step_penalty", "reveal_bonus",
               "max_episode_steps", "track_revisits", "no_revisit", "action_features"}
_POLICY_KWARGS = {"net_arch", "activation_fn", "ortho_init", "share_features_extractor", "features_dim", "dim",
                  "hidden"}
POLICIES = ("CardCodesPolicy", "MlpPolicy", "MultiInputPolicy", "MoveScorerPolicy")
# The observation modes each policy reads (SB3's MlpPolicy one-hots a MultiDiscrete itself).
POLICY_OBS_MODES = {"CardCodesPolicy": ("codes",), "MlpPolicy": ("codes", "onehot"),
                    "MultiInputPolicy": ("dict", "piles"), "MoveScorerPolicy": ("piles",)}
# What a run writes into its directory: what --overwrite deletes, and what marks a directory as holding a run.
RUN_FILES = ("config.yaml", "summary.json", "pretrain.json", "pretrained_model.zip", "initial_model.zip",
             "best_model.zip",
             "selected_model.zip",
             "final_model.zip", "evaluations.npz", "learning_curve.png", "evaluation.json", "evaluation.csv")
RUN_DIRS = ("checkpoints", "tb", "pretrain")


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
        if not (key in ("init_model", "update_threads") and value is None):
            _check_type(where, key, value, _TYPES[key])
    if raw["env_id"] not in ENV_IDS:
        raise ConfigError(f"{where}: env_id {raw['env_id']!r} is not one of {', '.join(ENV_IDS)}")
    for key in ("total_timesteps", "n_envs", "checkpoint_freq", "torch_threads", "update_threads"):
        cloning_only = key == "total_timesteps" and raw.get(key) == 0 and raw.get("pretrain")
        if raw.get(key) is not None and raw[key] <= 0 and not cloning_only:
            hint = " (0 only with a pretrain section: cloning alone)" if key == "total_timesteps" else ""
            raise ConfigError(f"{where}: '{key}' must be positive, got {raw[key]}{hint}")
    if raw.get("policy", "MlpPolicy") not in POLICIES:
        raise ConfigError(f"{where}: policy must be one of {', '.join(POLICIES)}, got {raw['policy']!r}")
    if "features_dim" in raw.get("policy_kwargs", {}) and raw.get("policy") != "CardCodesPolicy":
        raise ConfigError(f"{where}: policy_kwargs.features_dim belongs to CardCodesPolicy only")
    scorer_keys = sorted({"dim", "hidden"} & set(raw.get("policy_kwargs", {})))
    if scorer_keys and raw.get("policy") != "MoveScorerPolicy":
        raise ConfigError(f"{where}: policy_kwargs.{scorer_keys[0]} belongs to MoveScorerPolicy only")
    for key in scorer_keys:
        value = raw["policy_kwargs"][key]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where}: policy_kwargs.{key} must be a positive integer, got {value!r}")

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
    if policy == "MoveScorerPolicy" and env_kwargs.get("action_features") is not True:
        raise ConfigError(f"{where}: policy MoveScorerPolicy scores moves by their features: set "
                          "env_kwargs.action_features: true")
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
    if raw.get("init_model") is not None and not Path(raw["init_model"]).is_file():
        raise ConfigError(f"{where}: init_model {raw['init_model']!r}: no such file")
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
        if key in ("episodes", "epochs", "batch_size", "learning_rate", "rounds") and value <= 0:
            raise ConfigError(f"{where}: 'pretrain.{key}' must be positive, got {value}")
        if key in ("seed", "value_coef", "eval_episodes") and value < 0:
            raise ConfigError(f"{where}: 'pretrain.{key}' must not be negative, got {value}")
        if key == "beta" and not 0 <= value <= 1:
            raise ConfigError(f"{where}: 'pretrain.beta' must be between 0 and 1, got {value}")
    config = PretrainConfig(**pre)
    if config.agent.split(":")[0] not in PRETRAIN_AGENTS:
        raise ConfigError(f"{where}: pretrain.agent must be one of {', '.join(PRETRAIN_AGENTS)} (or search:WxN), "
                          f"got {config.agent!r}")
    if config.agent.startswith("search"):
        from solitaire_env.agents import make_agent

        try:
            make_agent(config.agent, raw["env_id"])
        except ValueError as e:
            raise ConfigError(f"{where}: pretrain.agent: {e}") from None
    deals = range(config.seed, config.seed + config.rounds * config.episodes)
    if deals.start not in TRAIN or deals.stop - 1 not in TRAIN:
        raise ConfigError(f"{where}: pretrain deals {deals.start}-{deals.stop - 1} (pretrain.seed, pretrain.episodes "
                          f"per round) must be train deals ({TRAIN.start} and up), apart from the validation and "
                          "test deals")
    if config.eval_episodes > eval_config.episodes:
        raise ConfigError(f"{where}: 'pretrain.eval_episodes' ({config.eval_episodes}) must be at most eval.episodes "
                          f"({eval_config.episodes}): it plays the first of the same validation deals")
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
        deals["pretrain"] = describe(pre.seed, pre.seed + pre.rounds * pre.episodes - 1)
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
    for key in ("pretrain", "init_model"):
        if data[key] is None:
            del data[key]
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
        kept: tuple[str, ...] = ()
        if (out / "pretrain.json").is_file() and (out / "pretrain").is_dir():
            kept = ("pretrain.json", "pretrain")  # pretrain_policy goes on after its last finished round
            print(f"{out}: no PPO checkpoint saved yet, going on with the pretraining rounds it finished")
        else:
            print(f"{out}: no checkpoint saved yet, starting the run anew")
    else:
        kept = ()
    if holds_run:  # overwrite, or a resume with nothing to resume from
        for name in RUN_FILES:
            if name not in kept:
                (out / name).unlink(missing_ok=True)
        for name in RUN_DIRS:
            if name not in kept:
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
    from stable_baselines3.common.callbacks import CheckpointCallback

    from solitaire_env.agents.policies import UpdateThreads
    from solitaire_env.agents.ppo import legacy_class_paths, load_model
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    out = Path(output_dir or config.output_dir)
    if config.init_model is not None:
        check_init_model(config)  # before the run directory is touched
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
        model = load_model(checkpoint, env=venv, device="cpu", tensorboard_log=str(out / "tb"))
        # Fresh training deals after the resume, not a replay of the run's first ones.
        venv.seed(config.seed + model.num_timesteps)
        print(f"resuming {out} from {checkpoint.name} ({model.num_timesteps} timesteps)")
    else:
        model = build_model(config, venv, verbose=verbose, tensorboard_log=str(out / "tb"))
        if config.init_model is not None:
            with legacy_class_paths():
                model.set_parameters(config.init_model, exact_match=True, device="cpu")
            model.save(out / "initial_model.zip")
            print(f"starting from the policy of {config.init_model}")
        if config.pretrain is not None:
            # The PPO phase starts from the random state a freshly built model has, so a one-file recipe
            # (pretrain, then PPO) trains exactly as its two halves do (a cloning-only run, then a run
            # with init_model = its selected_model.zip).
            random_state = _random_state()
            pretrain_stats = pretrain_policy(model, config, out=out, verbose=verbose, progress=progress)
            (out / "pretrain.json").write_text(json.dumps(pretrain_stats, indent=2))
            model.save(out / "pretrained_model.zip")
            _set_random_state(random_state)
    evaluation = fixed_deals_eval_callback(
        eval_env, n_eval_episodes=config.eval.episodes, eval_freq=max(config.eval.freq // config.n_envs, 1),
        best_model_save_path=str(out), log_path=str(out), deterministic=config.eval.deterministic,
        verbose=verbose,
    )
    if checkpoint is not None:
        evaluation.restore(out, model.num_timesteps)
    callbacks = [
        UpdateThreads(config.update_threads or config.torch_threads, config.torch_threads),
        evaluation,
        CheckpointCallback(save_freq=max(config.checkpoint_freq // config.n_envs, 1),
                           save_path=str(out / "checkpoints"), name_prefix="ppo"),
    ]
    start, first_step = time.perf_counter(), model.num_timesteps
    if config.total_timesteps > 0:  # 0: the pretraining alone (an ablation); the final model is the pretrained one
        model.learn(total_timesteps=max(config.total_timesteps - model.num_timesteps, 0), callback=callbacks,
                    progress_bar=progress, reset_num_timesteps=checkpoint is None)
    wall = time.perf_counter() - start
    model.save(out / "final_model.zip")
    steps = model.num_timesteps - first_step
    print(f"ppo: {steps} steps in {wall:.0f} s ({steps / max(wall, 1e-9):.0f} env steps/s)", flush=True)
    summary = {"env_id": config.env_id, "timesteps": int(model.num_timesteps), "wall_time_s": round(wall, 1),
               "steps_per_s": round(steps / wall, 1) if wall > 0 else None,
               "torch_threads": torch.get_num_threads(),
               "update_threads": config.update_threads or config.torch_threads, "deals": deals}
    if checkpoint is not None:
        summary["resumed_from_timesteps"] = int(first_step)  # wall time and steps/s are this piece's
    if pretrain_stats is not None:
        summary["pretrain"] = pretrain_stats
    elif checkpoint is not None and (out / "pretrain.json").is_file():
        summary["pretrain"] = json.loads((out / "pretrain.json").read_text())
    if config.pretrain is not None and config.pretrain.eval_episodes or config.init_model is not None:
        summary["selection"] = select_model(config, out, summary.get("pretrain"))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    venv.close()
    eval_env.close()
    try:
        plot_learning_curve(out)
    except ValueError:
        pass  # too short a run for an evaluation point
    return out


def _random_state() -> tuple[Any, Any, Any]:
    """The global random generators' states (Python's, numpy's, torch's): what SB3 draws from."""
    import random

    import numpy as np
    import torch

    return random.getstate(), np.random.get_state(), torch.get_rng_state()


def _set_random_state(state: tuple[Any, Any, Any]) -> None:
    import random

    import numpy as np
    import torch

    random.setstate(state[0])
    np.random.set_state(state[1])
    torch.set_rng_state(state[2])


def build_model(config: TrainConfig, venv: Any, **kwargs: Any) -> Any:
    """A fresh MaskablePPO model of ``config``'s policy and hyperparameters on ``venv`` (``kwargs``: more
    arguments to ``MaskablePPO``)."""
    import torch
    from sb3_contrib import MaskablePPO

    from solitaire_env.agents.move_scorer import MoveScorerPolicy
    from solitaire_env.agents.policies import CardCodesPolicy

    policy_kwargs = dict(config.policy_kwargs)
    if "features_dim" in policy_kwargs:
        policy_kwargs["features_extractor_kwargs"] = {"features_dim": policy_kwargs.pop("features_dim")}
    if "activation_fn" in policy_kwargs:
        activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
        policy_kwargs["activation_fn"] = activations[policy_kwargs["activation_fn"]]
    policy = {"CardCodesPolicy": CardCodesPolicy, "MoveScorerPolicy": MoveScorerPolicy}.get(config.policy,
                                                                                          config.policy)
    return MaskablePPO(policy, venv, seed=config.seed, device="cpu", policy_kwargs=policy_kwargs,
                       **config.hyperparams, **kwargs)


def check_init_model(config: TrainConfig) -> None:
    """``ConfigError`` unless ``config.init_model`` holds a policy of the config's class with the same
    parameter shapes (so its weights can start the run)."""
    from stable_baselines3.common.save_util import load_from_zip_file

    from solitaire_env.agents.ppo import legacy_class_paths
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    where = f"init_model {config.init_model}"
    try:
        with legacy_class_paths():
            data, params, _ = load_from_zip_file(config.init_model, device="cpu")
    except Exception as e:  # not a zip, or not a saved SB3 model
        raise ConfigError(f"{where}: not a saved model ({type(e).__name__}: {e})") from None
    saved_class = getattr((data or {}).get("policy_class"), "__name__", None)
    if saved_class != config.policy:
        raise ConfigError(f"{where}: holds a {saved_class} policy, the config trains {config.policy}")
    venv = make_sb3_vec_env(config.env_id, n_envs=1, monitor=False, **config.env_kwargs)
    try:
        fresh = build_model(config, venv).policy.state_dict()
    finally:
        venv.close()
    saved = params.get("policy", {})
    differ = sorted(k for k in set(fresh) | set(saved)
                    if k not in saved or k not in fresh or tuple(saved[k].shape) != tuple(fresh[k].shape))
    if differ:
        raise ConfigError(f"{where}: its policy's parameters do not fit the config's policy_kwargs and env "
                          f"({len(differ)} differ, e.g. {differ[0]})")


def select_model(config: TrainConfig, out: Path, pretrain: dict | None) -> dict[str, Any]:
    """Which of the run's policies wins most of the validation deals (the pretraining's
    ``eval_episodes``, or ``eval.episodes`` for a fine-tuning run without pretraining), played greedily
    (or as ``eval.deterministic`` says): the pretrained one (its round's figure) or the ``init_model``
    one, ``best_model.zip`` (the best PPO evaluation by return) and ``final_model.zip``. The winner is
    copied to ``selected_model.zip``: the policy to report and ship. Ties go to the earlier in that order."""
    from solitaire_env.agents.ppo import load_model
    from solitaire_env.tools import imitation

    pre = config.pretrain
    episodes = pre.eval_episodes if pre is not None and pre.eval_episodes else config.eval.episodes
    evals = range(config.eval.seed, config.eval.seed + episodes)
    rates: dict[str, float] = {}
    names = ["best_model.zip", "final_model.zip"]
    if pretrain and pretrain.get("rounds"):
        best = pretrain["rounds"][pretrain["best_round"]]
        if "validation" in best:
            rates["pretrained_model.zip"] = best["validation"]["win_rate"]
    elif config.init_model is not None:
        names.insert(0, "initial_model.zip")
    for name in names:
        if (out / name).is_file():
            model = load_model(out / name, device="cpu")
            played = imitation.play(config.env_id, evals, config.env_kwargs, n_envs=config.n_envs,
                                    policy=model.policy, deterministic=config.eval.deterministic, seed=config.eval.seed)
            rates[name] = played.stats["win_rate"]
    chosen = max(rates, key=lambda k: rates[k])  # the first of equals
    shutil.copyfile(out / chosen, out / "selected_model.zip")
    print(f"validation win rates ({describe(evals.start, evals[-1])}): "
          + ", ".join(f"{k} {v:.3f}" for k, v in rates.items()) + f"; selected {chosen}", flush=True)
    return {"deals": describe(evals.start, evals[-1]), "win_rates": rates, "selected": chosen}


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


def pretrain_deals(config: TrainConfig, round_: int) -> range:
    """The teacher deals of pretraining round ``round_`` (0: the cloning round)."""
    pre = config.pretrain or PretrainConfig()
    return range(pre.seed + round_ * pre.episodes, pre.seed + (round_ + 1) * pre.episodes)


def pretrain_policy(model: Any, config: TrainConfig, out: Path | None = None, verbose: int = 0,
                    progress: bool = False) -> dict[str, Any]:
    """Warm start: fit ``model.policy`` to the teacher's moves, over ``pretrain.rounds`` rounds (see the
    module docstring).

    With ``out``, each finished round leaves ``pretrain/round_<r>.zip`` (the model) and
    ``pretrain/round_<r>.npz`` (its examples) there, and ``pretrain.json`` its statistics, so a run cut
    short goes on after its last finished round; the model of the round with the best validation win
    rate (the last round when there is no validation) is loaded into ``model`` at the end. Returns the
    statistics that go into ``summary.json``.
    """
    from solitaire_env.tools import imitation

    pre = config.pretrain or PretrainConfig()
    gamma = float(config.hyperparams.get("gamma", _ppo_hyperparams()["gamma"].default))
    folder = out / "pretrain" if out is not None else None
    rounds: list[dict[str, Any]] = []
    parts: list[imitation.Games] = []
    if folder is not None and (out / "pretrain.json").is_file():  # resume after the last finished round
        done = json.loads((out / "pretrain.json").read_text()).get("rounds", [])
        for r, stats in enumerate(done):
            if not ((folder / f"round_{r}.zip").is_file() and (folder / f"round_{r}.npz").is_file()):
                break
            rounds.append(stats)
            parts.append(imitation.Games.load(str(folder / f"round_{r}.npz")))
        if rounds:
            model.set_parameters(str(folder / f"round_{len(rounds) - 1}.zip"), device="cpu")
            print(f"pretrain: resuming after round {len(rounds)} of {pre.rounds}")
    evals = range(config.eval.seed, config.eval.seed + min(pre.eval_episodes, config.eval.episodes))
    for r in range(len(rounds), pre.rounds):
        t0 = time.perf_counter()
        teacher_plays = r == 0  # round 0 is cloning of the teacher's own games; then DAgger
        data = imitation.play(config.env_id, pretrain_deals(config, r), config.env_kwargs, n_envs=config.n_envs,
                              teacher=pre.agent, policy=None if teacher_plays else model.policy,
                              beta=1.0 if teacher_plays else pre.beta, seed=pre.seed + r, gamma=gamma,
                              progress=progress)
        collect_s = time.perf_counter() - t0
        parts.append(data)
        everything = imitation.Games.concat(parts) if len(parts) > 1 else data
        before = imitation.agreement(model.policy, data)
        fit_args = {"batch_size": pre.batch_size, "learning_rate": pre.learning_rate, "value": pre.value,
                    "value_coef": pre.value_coef, "max_grad_norm": model.max_grad_norm, "progress": progress}
        epoch_rates: list[float] = []
        if pre.select_epoch and pre.eval_episodes:
            # One epoch at a time (a fresh Adam each), each scored on the validation deals; keep the best.
            best_state, losses = None, {}
            for e in range(pre.epochs):
                losses = imitation.fit(model.policy, everything, 1, seed=pre.seed + 1000 * r + e, **fit_args)
                val = imitation.play(config.env_id, evals, config.env_kwargs, n_envs=config.n_envs,
                                     policy=model.policy, deterministic=config.eval.deterministic,
                                     seed=config.eval.seed)
                epoch_rates.append(val.stats["win_rate"])
                if val.stats["win_rate"] == max(epoch_rates):  # the latest of equals
                    best_state, best_val = copy.deepcopy(model.policy.state_dict()), val
            model.policy.load_state_dict(best_state)
        else:
            losses = imitation.fit(model.policy, everything, pre.epochs, seed=pre.seed + r, **fit_args)
        fit_s = time.perf_counter() - t0 - collect_s
        stats = {"round": r, "deals": describe(pretrain_deals(config, r).start, pretrain_deals(config, r)[-1]),
                 "player": "teacher" if teacher_plays else f"student, teacher's move with probability {pre.beta}",
                 "games": data.stats["games"], "player_wins": data.stats["wins"],
                 "player_mean_foundation_cards": data.stats["mean_foundation_cards"],
                 "steps_played": data.stats["steps"],
                 "examples": len(data), "examples_total": len(everything), "agreement_before": round(before, 4),
                 "agreement": round(imitation.agreement(model.policy, data), 4),
                 "chance_agreement": round(imitation.chance_agreement(data), 4), **losses,
                 "collect_s": round(collect_s, 1), "collect_steps_per_s": data.stats["steps_per_s"],
                 "fit_s": round(fit_s, 1),
                 "fit_examples_per_s": round(pre.epochs * len(everything) / max(fit_s, 1e-9), 1)}
        if epoch_rates:
            stats["epoch_validation_win_rates"] = epoch_rates  # the best epoch's policy is kept
        if pre.eval_episodes:
            val = best_val if epoch_rates else imitation.play(
                config.env_id, evals, config.env_kwargs, n_envs=config.n_envs, policy=model.policy,
                deterministic=config.eval.deterministic, seed=config.eval.seed)
            stats["validation"] = {"deals": describe(evals.start, evals[-1]), "win_rate": val.stats["win_rate"],
                                   "mean_foundation_cards": val.stats["mean_foundation_cards"]}
        rounds.append(stats)
        line = (f"pretrain round {r + 1}/{pre.rounds}: {stats['examples']} examples ({len(everything)} in all), "
                f"agreement {stats['agreement']:.3f} (chance {stats['chance_agreement']:.3f}), "
                f"collect {collect_s:.0f} s ({data.stats['steps_per_s']:.0f} steps/s), fit {fit_s:.0f} s "
                f"({stats['fit_examples_per_s']:.0f} examples/s)")
        if "validation" in stats:
            line += f", validation win rate {stats['validation']['win_rate']:.3f}"
        print(line, flush=True)
        if folder is not None:
            folder.mkdir(exist_ok=True)
            model.save(folder / f"round_{r}.zip")
            data.save(str(folder / f"round_{r}.npz"))
            (out / "pretrain.json").write_text(json.dumps(_pretrain_summary(pre, rounds), indent=2))
    summary = _pretrain_summary(pre, rounds)
    if folder is not None and summary["best_round"] != len(rounds) - 1:
        model.set_parameters(str(folder / f"round_{summary['best_round']}.zip"), device="cpu")
    if verbose:
        print(f"pretrain: {summary}")
    return summary


def _pretrain_summary(pre: PretrainConfig, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [r["validation"]["win_rate"] if "validation" in r else -1.0 for r in rounds]
    # The best validation round (the first of equals); the last round when none was validated.
    best = len(rounds) - 1 if max(scored, default=-1.0) < 0 else scored.index(max(scored))
    last = rounds[-1] if rounds else {}
    # The first round's keys at the top, as a one-round run wrote them before rounds existed.
    first = rounds[0] if rounds else {}
    return {"agent": pre.agent, "episodes": pre.episodes, "epochs": pre.epochs,
            "teacher_wins": first.get("player_wins"), "examples": last.get("examples_total", 0),
            "agreement_before": first.get("agreement_before"), "agreement": last.get("agreement"),
            "chance_agreement": first.get("chance_agreement"), "cross_entropy": last.get("cross_entropy"),
            "value_mse": last.get("value_mse"), "best_round": best, "rounds": rounds,
            "wall_time_s": round(sum(r["collect_s"] + r["fit_s"] for r in rounds), 1)}


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
