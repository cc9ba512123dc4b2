"""Training configs: one typed definition (:class:`TrainConfig` and its sections), read from YAML files
that may build on each other, overridden from the command line, and checked completely before a run.

A config file may name a ``base:`` file (relative to the file that names it; bases may chain) and
override its keys. The sections ``hyperparams``, ``policy_kwargs``, ``env_kwargs``, ``eval`` and
``pretrain`` merge key by key; any other key replaces the base's value. ``key: null`` removes a key,
so it takes its default (``pretrain: null``: no pretraining; ``env_kwargs: {obs_mode: null}``: the
env's default observation). ``--set KEY=VALUE`` (:func:`apply_overrides`) does the same from the
command line, ``KEY`` dotted into a section (``hyperparams.learning_rate``), ``VALUE`` read as YAML.

The types come from the dataclass fields, the range checks from their ``metadata``; what cannot be
said per field (a policy reads certain observations, deals belong to certain splits, the env takes
these options) is checked after. Every problem is a :class:`ConfigError` of one line naming the key,
the file (or the ``--set``) it came from and what is allowed, never a traceback from inside SB3.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import yaml

from solitaire_env.engine.deals import TRAIN, VALIDATION, deal_set, describe
from solitaire_env.envs.registration import ENV_IDS


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the file and the key."""


def _opt(default: Any, check: str | None = None) -> Any:
    """A field with its default and its range check: ``positive``, ``non_negative`` or ``unit`` ([0, 1])."""
    metadata = {"check": check} if check else {}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class EvalConfig:
    freq: int = _opt(50_000, "positive")  # timesteps between evaluations
    episodes: int = _opt(50, "positive")
    seed: int = 10_000  # evaluation deals: seed, seed + 1, ...: validation deals, the same every round
    # False: MaskableEvalCallback samples the policy, so best_model.zip is the best sampled policy
    # (what the two-deck games report: their greedy policies cycle)
    deterministic: bool = True


@dataclass
class PretrainConfig:
    """Behaviour cloning of a teacher agent before PPO (:mod:`solitaire_env.tools.pretraining` says how)."""

    agent: str = "heuristic"
    episodes: int = _opt(1000, "positive")
    seed: int = _opt(1_000_000, "non_negative")  # teacher deals: seed, seed + 1, ... (train deals)
    epochs: int = _opt(5, "positive")
    batch_size: int = _opt(1024, "positive")
    learning_rate: float = _opt(1e-3, "positive")
    value: bool = True
    value_coef: float = _opt(0.5, "non_negative")
    rounds: int = _opt(1, "positive")  # 1: cloning of the teacher's games; each further round is a DAgger round
    beta: float = _opt(0.0, "unit")  # DAgger rounds: the share of moves the teacher plays (the student the rest)
    eval_episodes: int = _opt(0, "non_negative")  # validation deals (eval.seed ..) played greedily after each round
    select_epoch: bool = False  # with eval_episodes: score every epoch on those deals and keep the best
    lr_decay: bool = False  # the learning rate falls linearly to zero over each round's epochs
    # DAgger rounds: the student's move is its label where the teacher finds it keeps as short a win as the
    # teacher's own move (a teacher with a ``label`` method: FreeCell's planner, plan:1xN)
    accept_student: bool = False


@dataclass
class TrainConfig:
    env_id: str
    total_timesteps: int = field(metadata={"check": "positive"})  # 0 too, with a pretrain section
    # "sb3": sb3-contrib's MaskablePPO on the numba batched env; "jax": the JAX backend's compiled PPO
    # (solitaire_env.tools.jax_training), CardCodesPolicy's network, the same hyperparameters.
    backend: str = "sb3"
    n_envs: int = _opt(16, "positive")
    seed: int = 0
    deals: str = "train"  # the training envs' deals: "train" or "A:B" inside the train split
    policy: str = "MlpPolicy"
    policy_kwargs: dict = _opt({})
    hyperparams: dict = _opt({})
    env_kwargs: dict = _opt({})
    eval: EvalConfig = field(default_factory=EvalConfig)
    pretrain: PretrainConfig | None = None
    checkpoint_freq: int = _opt(250_000, "positive")
    output_dir: str = "runs/default"
    init_model: str | None = None  # a saved model whose policy weights the run starts from
    # One thread: these networks are small, and torch's spin-waiting threads collapse (10x slower
    # measured) when the env or anything else shares the cores.
    torch_threads: int = _opt(1, "positive")
    # Threads for PPO's update alone (None: torch_threads); the rollouts keep torch_threads. Two
    # threads speed up the update on an otherwise idle 2-core machine (docs/benchmarks.md, "Training throughput").
    update_threads: int | None = _opt(None, "positive")

    def to_dict(self) -> dict:
        return asdict(self)


SECTIONS = ("hyperparams", "policy_kwargs", "env_kwargs", "eval", "pretrain")  # merged key by key
# search:WxN, plan:WxN(xK) and plan-sliced:WxN(xK) too (solitaire_env.agents.make_agent)
PRETRAIN_AGENTS = ("heuristic", "search", "plan", "plan-sliced")
POLICIES = ("CardCodesPolicy", "MlpPolicy", "MultiInputPolicy", "MoveScorerPolicy")
BACKENDS = ("sb3", "jax")
# What the JAX backend takes: PPO's hyperparameters by SB3's names (solitaire_env.tools.jax_ppo.PPOSettings),
# CardCodesPolicy's sizes, and the options of the JAX env (the reward's coefficients; its rules and
# observation are the Gymnasium env's defaults).
JAX_HYPERPARAMS = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range",
                   "ent_coef", "vf_coef", "max_grad_norm")
JAX_POLICY_KWARGS = ("features_dim", "net_arch")
JAX_ENV_KWARGS = ("illegal_penalty", "win_bonus", "step_penalty", "reveal_bonus")
# The observation modes each policy reads (SB3's MlpPolicy one-hots a MultiDiscrete itself).
POLICY_OBS_MODES = {"CardCodesPolicy": ("codes",), "MlpPolicy": ("codes", "onehot"),
                    "MultiInputPolicy": ("dict", "piles"), "MoveScorerPolicy": ("piles",)}
# The policy_kwargs build_model turns into SB3's arguments (features_dim, activation_fn by name; dim, hidden,
# draw_card for MoveScorerPolicy), or passes on as they are.
_POLICY_KWARGS = {"net_arch", "activation_fn", "ortho_init", "share_features_extractor", "features_dim", "dim",
                  "hidden", "draw_card"}


# --- reading: YAML, bases, --set -------------------------------------------------------------------

class _Loader(yaml.SafeLoader):
    """YAML as PyYAML reads it, except that ``1e-4`` is a number (YAML 1.2), not a string."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
               r"|[0-9][0-9_]*[eE][-+]?[0-9]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def _read_yaml(path: Path) -> dict:
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        raw = yaml.load(path.read_text(), Loader=_Loader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a training config is a mapping of keys to values, got {type(raw).__name__}")
    return raw


def _merge(raw: dict, origins: dict[str, str], own: dict, where: str) -> None:
    """Put ``own`` (from ``where``) over ``raw``: sections key by key; ``None`` removes a key."""
    for key, value in own.items():
        if key in SECTIONS and isinstance(value, dict) and isinstance(raw.get(key), dict):
            section = dict(raw[key])
            for sub, v in value.items():
                if v is None:
                    section.pop(sub, None)
                else:
                    section[sub] = v
                origins[f"{key}.{sub}"] = where
            raw[key] = section
        elif value is None:
            raw.pop(key, None)
        else:
            if key in SECTIONS and isinstance(value, dict):
                value = {k: v for k, v in value.items() if v is not None}
                origins.update({f"{key}.{sub}": where for sub in value})
            raw[key] = value
        origins[key] = where


def resolve(path: str | Path, _chain: tuple[Path, ...] = ()) -> tuple[dict, dict[str, str]]:
    """The config mapping ``path`` says, its ``base`` files merged in; and where each key came from."""
    path = Path(path)
    here = path.resolve()
    if here in _chain:
        cycle = " -> ".join(str(p) for p in (*_chain, here))
        raise ConfigError(f"{path}: a cycle of base files: {cycle}")
    own = _read_yaml(path)
    raw: dict = {}
    origins: dict[str, str] = {}
    base = own.pop("base", None)
    if base is not None:
        if not isinstance(base, str):
            raise ConfigError(f"{path}: 'base' must be a file name (str), got {type(base).__name__} {base!r}")
        raw, origins = resolve(path.parent / base, (*_chain, here))
    _merge(raw, origins, own, str(path))
    return raw, origins


def apply_overrides(raw: dict, origins: dict[str, str], overrides: list[str] | tuple[str, ...]) -> None:
    """Apply ``--set KEY=VALUE`` overrides to ``raw`` in order (``KEY`` dotted into a section, ``VALUE`` YAML)."""
    known = {f.name for f in fields(TrainConfig)}
    for item in overrides:
        where = f"--set {item}"
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"{where}: expected KEY=VALUE, e.g. --set hyperparams.learning_rate=1e-4")
        try:
            value = yaml.load(text, Loader=_Loader) if text.strip() else None  # noqa: S506 (a SafeLoader)
        except yaml.YAMLError as err:
            raise ConfigError(f"{where}: the value is not valid YAML: {' '.join(str(err).split())}") from None
        top, dot, sub = key.partition(".")
        if top not in known:
            raise ConfigError(f"{where}: unknown key '{top}'; known keys: {', '.join(sorted(known))}")
        if dot and (top not in SECTIONS or not sub or "." in sub):
            raise ConfigError(f"{where}: '{key}': a dotted key is SECTION.KEY, with SECTION one of "
                              f"{', '.join(SECTIONS)}")
        _merge(raw, origins, {top: {sub: value}} if dot else {top: value}, where)


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """Read a YAML training config (its ``base`` files merged in), apply ``--set`` ``overrides``, validate."""
    raw, origins = resolve(path)
    apply_overrides(raw, origins, overrides)
    return parse_config(raw, where=str(path), origins=origins)


def save_config(config: TrainConfig, path: str | Path) -> None:
    """Write the resolved config (no ``base``: a run's ``config.yaml`` stands alone)."""
    data = config.to_dict()
    for key in ("pretrain", "init_model"):
        if data[key] is None:
            del data[key]
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False))


# --- checking ------------------------------------------------------------------------------------

def _allowed(hint: Any) -> tuple[type, ...]:
    """The Python types a YAML value may have for a field annotated ``hint`` (a section: a mapping)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return tuple(t for arg in typing.get_args(hint) for t in _allowed(arg))
    if is_dataclass(hint):
        return (dict,)
    if hint is float:
        return (float, int)
    return (typing.get_origin(hint) or hint,)


def _check_fields(cls: type, values: dict, where: Any, prefix: str = "") -> None:
    """Every key of ``values`` is a field of ``cls``, of its type, within its range (``where(key)``: its origin)."""
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        what = f"{prefix.rstrip('.')} key(s)" if prefix else "key(s)"
        raise ConfigError(f"{where(prefix + unknown[0])}: unknown {what} {', '.join(unknown)}; known: "
                          f"{', '.join(known)}")
    for name, value in values.items():
        key = prefix + name
        allowed = tuple(t for t in _allowed(hints[name]) if t is not type(None))
        if value is None and len(allowed) < len(_allowed(hints[name])):
            continue
        if isinstance(value, bool) and bool not in allowed or not isinstance(value, allowed):
            names = " or ".join(t.__name__ for t in allowed)
            raise ConfigError(f"{where(key)}: '{key}' must be {names}, got {type(value).__name__} {value!r}")
        check = known[name].metadata.get("check")
        if check == "positive" and value <= 0:
            if key == "total_timesteps" and value == 0 and values.get("pretrain"):
                continue  # cloning alone
            hint = " (0 only with a pretrain section: cloning alone)" if key == "total_timesteps" else ""
            raise ConfigError(f"{where(key)}: '{key}' must be positive, got {value}{hint}")
        if check == "non_negative" and value < 0:
            raise ConfigError(f"{where(key)}: '{key}' must not be negative, got {value}")
        if check == "unit" and not 0 <= value <= 1:
            raise ConfigError(f"{where(key)}: '{key}' must be between 0 and 1, got {value}")


def _ppo_hyperparams() -> dict[str, inspect.Parameter]:
    from sb3_contrib import MaskablePPO

    skip = {"self", "policy", "env", "policy_kwargs", "tensorboard_log", "seed", "device", "verbose",
            "_init_setup_model"}
    return {k: p for k, p in inspect.signature(MaskablePPO.__init__).parameters.items() if k not in skip}


def _env_options(env_id: str) -> set[str]:
    """The keyword arguments the batched env of ``env_id`` takes (what ``env_kwargs`` may set)."""
    import gymnasium as gym

    import solitaire_env  # noqa: F401  (registers the ids)

    entry = gym.spec(env_id).vector_entry_point or gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        entry = getattr(__import__(module, fromlist=[name]), name)
    skip = {"self", "num_envs", "deals", "render_mode", "ansi_color"}  # ansi_color: rendering only
    # A class that adds an option of its own (FreeCell's cells) passes the rest on as **kwargs.
    names: set[str] = set()
    for cls in getattr(entry, "__mro__", (entry,)):
        params = inspect.signature(cls).parameters.values()
        names |= {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            break
    return names - skip


def parse_config(raw: Any, where: str = "config", origins: dict[str, str] | None = None) -> TrainConfig:
    """Validate a config mapping (as read from YAML, bases merged) and build a :class:`TrainConfig`.

    ``origins``: the file (or ``--set``) each key came from, for the messages (default: ``where``)."""
    origins = origins or {}

    def src(key: str) -> str:
        return origins.get(key) or origins.get(key.split(".")[0]) or where

    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a training config is a mapping of keys to values, got {type(raw).__name__}")
    raw = {k: v for k, v in raw.items() if not (k in ("init_model", "update_threads", "pretrain") and v is None)}
    known = [f.name for f in fields(TrainConfig)]
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"{src(unknown[0])}: unknown key(s) {', '.join(unknown)}; known keys: "
                          f"{', '.join(sorted(known))}")
    for key in ("env_id", "total_timesteps"):
        if key not in raw:
            raise ConfigError(f"{where}: missing required key '{key}'")
    _check_fields(TrainConfig, raw, src)
    if raw["env_id"] not in ENV_IDS:
        raise ConfigError(f"{src('env_id')}: env_id {raw['env_id']!r} is not one of {', '.join(ENV_IDS)}")
    policy = raw.get("policy", "MlpPolicy")
    if policy not in POLICIES:
        raise ConfigError(f"{src('policy')}: policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    _check_policy_kwargs(raw.get("policy_kwargs", {}), policy, src)
    env_kwargs = raw.get("env_kwargs", {})
    _check_env_kwargs(raw["env_id"], env_kwargs, src)
    obs_mode = env_kwargs.get("obs_mode", "codes")
    if obs_mode not in POLICY_OBS_MODES[policy]:
        fits = ", ".join(p for p, modes in POLICY_OBS_MODES.items() if obs_mode in modes)
        raise ConfigError(f"{src('env_kwargs.obs_mode')}: policy {policy} reads obs_mode "
                          f"{' or '.join(POLICY_OBS_MODES[policy])}, but env_kwargs.obs_mode is {obs_mode!r}; "
                          f"for {obs_mode!r} use {fits}")
    if policy == "MoveScorerPolicy" and env_kwargs.get("action_features") is not True:
        raise ConfigError(f"{src('env_kwargs.action_features')}: policy MoveScorerPolicy scores moves by their "
                          "features: set env_kwargs.action_features: true")
    _check_deals(raw.get("deals", "train"), src("deals"))
    if raw.get("backend", "sb3") not in BACKENDS:
        raise ConfigError(f"{src('backend')}: backend must be one of {', '.join(BACKENDS)}, got {raw['backend']!r}")
    if raw.get("backend") == "jax":
        _check_jax(raw, src)
    else:
        _check_hyperparams(raw.get("hyperparams", {}), src)

    eval_raw = raw.get("eval", {})
    _check_fields(EvalConfig, eval_raw, src, "eval.")
    eval_config = EvalConfig(**eval_raw)
    evals = range(eval_config.seed, eval_config.seed + eval_config.episodes)
    if evals.start not in VALIDATION or evals.stop - 1 not in VALIDATION:
        raise ConfigError(f"{src('eval.seed')}: the evaluation deals {evals.start}-{evals.stop - 1} (eval.seed, "
                          f"eval.episodes) must be validation deals ({VALIDATION.start}-{VALIDATION.stop - 1})")
    if raw.get("init_model") is not None and not Path(raw["init_model"]).is_file():
        raise ConfigError(f"{src('init_model')}: init_model {raw['init_model']!r}: no such file")
    pretrain = None
    if raw.get("pretrain") is not None:
        pretrain = _parse_pretrain(raw["pretrain"], raw["env_id"], eval_config, src)
    values = {k: v for k, v in raw.items() if k not in ("eval", "pretrain")}
    return TrainConfig(**values, eval=eval_config, pretrain=pretrain)


def _check_policy_kwargs(policy_kwargs: dict, policy: str, src: Any) -> None:
    bad = sorted(set(policy_kwargs) - _POLICY_KWARGS)
    if bad:
        raise ConfigError(f"{src('policy_kwargs.' + bad[0])}: unknown policy_kwargs {', '.join(bad)}; known: "
                          f"{', '.join(sorted(_POLICY_KWARGS))}")
    if "features_dim" in policy_kwargs and policy != "CardCodesPolicy":
        raise ConfigError(f"{src('policy_kwargs.features_dim')}: policy_kwargs.features_dim belongs to "
                          "CardCodesPolicy only")
    for key in sorted({"dim", "hidden", "draw_card"} & set(policy_kwargs)):
        if policy != "MoveScorerPolicy":
            raise ConfigError(f"{src('policy_kwargs.' + key)}: policy_kwargs.{key} belongs to MoveScorerPolicy only")
        value = policy_kwargs[key]
        if key == "draw_card":
            if not isinstance(value, bool):
                raise ConfigError(f"{src('policy_kwargs.' + key)}: policy_kwargs.{key} must be true or false, "
                                  f"got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{src('policy_kwargs.' + key)}: policy_kwargs.{key} must be a positive integer, "
                              f"got {value!r}")

    def sizes(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)

    arch = policy_kwargs.get("net_arch")
    if arch is not None and not (sizes(arch) or isinstance(arch, dict) and set(arch) <= {"pi", "vf"}
                                 and all(sizes(v) for v in arch.values())):
        raise ConfigError(f"{src('policy_kwargs.net_arch')}: policy_kwargs.net_arch must be a list of positive "
                          f"layer sizes, or {{pi: [...], vf: [...]}}, got {arch!r}")
    if "activation_fn" in policy_kwargs and policy_kwargs["activation_fn"] not in ("tanh", "relu"):
        raise ConfigError(f"{src('policy_kwargs.activation_fn')}: policy_kwargs.activation_fn must be 'tanh' "
                          "or 'relu'")


def _check_env_kwargs(env_id: str, env_kwargs: dict, src: Any) -> None:
    """Only options the env takes, and the env built once with them, so a bad value is a ConfigError
    before any run starts."""
    import gymnasium as gym

    allowed = _env_options(env_id)
    bad = sorted(set(env_kwargs) - allowed)
    if bad:
        hint = " (the training deals are the top-level key 'deals')" if "deals" in bad else ""
        raise ConfigError(f"{src('env_kwargs.' + bad[0])}: unknown env_kwargs {', '.join(bad)}; known: "
                          f"{', '.join(sorted(allowed))}{hint}")
    try:
        gym.make_vec(env_id, num_envs=1, **env_kwargs).close()
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{src('env_kwargs')}: env_kwargs: {e}") from None


def _check_deals(deals: str, where: str) -> None:
    try:
        chosen = deal_set(deals).deals
    except ValueError as e:
        raise ConfigError(f"{where}: 'deals': {e}") from None
    if not (isinstance(chosen, range) and chosen.start in TRAIN and chosen[-1] in TRAIN):
        raise ConfigError(f"{where}: 'deals' must be 'train' or a range A:B inside the train split "
                          f"({TRAIN.start} .. 2**62 - 1), got {deals!r}: training never plays validation or test deals")


def _check_hyperparams(hyper: dict, src: Any) -> None:
    allowed = _ppo_hyperparams()
    for key, value in hyper.items():
        where = src(f"hyperparams.{key}")
        if key not in allowed:
            raise ConfigError(f"{where}: unknown hyperparameter '{key}'; MaskablePPO takes: "
                              f"{', '.join(sorted(allowed))}")
        default = allowed[key].default
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}: hyperparams.{key} must be a number, got {value!r}")
        if key in ("n_steps", "batch_size", "n_epochs") and (not isinstance(value, int) or value <= 0):
            raise ConfigError(f"{where}: hyperparams.{key} must be a positive integer, got {value!r}")


def _check_jax(raw: dict, src: Any) -> None:
    """What ``backend: jax`` can train: CardCodesPolicy on the default rules and observation, PPO's
    hyperparameters, random training deals; no cloning and no warm start (those are SB3's)."""
    if raw.get("policy", "MlpPolicy") != "CardCodesPolicy":
        raise ConfigError(f"{src('policy')}: backend jax trains CardCodesPolicy's network; set policy: "
                          f"CardCodesPolicy (got {raw.get('policy', 'MlpPolicy')!r})")
    for section, allowed in (("policy_kwargs", JAX_POLICY_KWARGS), ("env_kwargs", JAX_ENV_KWARGS),
                             ("hyperparams", JAX_HYPERPARAMS)):
        values = dict(raw.get(section, {}))
        if section == "env_kwargs" and values.get("obs_mode") == "codes":
            values.pop("obs_mode")  # the default observation, said out loud
        bad = sorted(set(values) - set(allowed))
        if bad:
            raise ConfigError(f"{src(section + '.' + bad[0])}: backend jax takes no {section}.{bad[0]}; "
                              f"its {section}: {', '.join(allowed)}")
    arch = raw.get("policy_kwargs", {}).get("net_arch")
    if isinstance(arch, dict):
        raise ConfigError(f"{src('policy_kwargs.net_arch')}: backend jax takes net_arch as one list of layer "
                          "sizes (each head gets those layers)")
    hyper = raw.get("hyperparams", {})
    for key, value in hyper.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{src('hyperparams.' + key)}: hyperparams.{key} must be a non-negative number, "
                              f"got {value!r}")
    try:
        from solitaire_env.tools.jax_ppo import PPOSettings  # its checks are the settings' own
    except ImportError as e:
        raise ConfigError(f"{src('backend')}: backend jax needs JAX, flax and optax: pip install "
                          f"'solitaire-env[jax]' ({e})") from None
    try:
        PPOSettings(n_envs=raw.get("n_envs", 16), **hyper)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{src('hyperparams')}: {e}") from None
    if raw.get("deals", "train") != "train":
        raise ConfigError(f"{src('deals')}: backend jax trains on random deals (jax.random shuffles), "
                          f"not a numbered range: set deals: train (got {raw['deals']!r})")
    for key in ("pretrain", "init_model"):
        if raw.get(key) is not None:
            raise ConfigError(f"{src(key)}: backend jax has no {key}: cloning and warm starts are the sb3 "
                              "backend's")


def _parse_pretrain(pre: dict, env_id: str, eval_config: EvalConfig, src: Any) -> PretrainConfig:
    _check_fields(PretrainConfig, pre, src, "pretrain.")
    config = PretrainConfig(**pre)
    if config.agent.split(":")[0] not in PRETRAIN_AGENTS:
        raise ConfigError(f"{src('pretrain.agent')}: pretrain.agent must be one of {', '.join(PRETRAIN_AGENTS)} "
                          f"(or search:WxN, plan:WxN, plan-sliced:WxN), got {config.agent!r}")
    teacher = None
    if config.agent.startswith(("search", "plan")):
        from solitaire_env.agents import make_agent

        try:
            teacher = make_agent(config.agent, env_id)
        except ValueError as e:
            raise ConfigError(f"{src('pretrain.agent')}: pretrain.agent: {e}") from None
    if config.accept_student and not hasattr(teacher, "label"):
        raise ConfigError(f"{src('pretrain.accept_student')}: pretrain.accept_student needs a teacher that judges "
                          f"the student's move (FreeCell's planner, plan:1xN); {config.agent!r} in {env_id} does not")
    deals = range(config.seed, config.seed + config.rounds * config.episodes)
    if deals.start not in TRAIN or deals.stop - 1 not in TRAIN:
        raise ConfigError(f"{src('pretrain.seed')}: pretrain deals {deals.start}-{deals.stop - 1} (pretrain.seed, "
                          f"pretrain.episodes per round) must be train deals ({TRAIN.start} and up), apart from the "
                          "validation and test deals")
    if config.eval_episodes > eval_config.episodes:
        raise ConfigError(f"{src('pretrain.eval_episodes')}: 'pretrain.eval_episodes' ({config.eval_episodes}) must "
                          f"be at most eval.episodes ({eval_config.episodes}): it plays the first of the same "
                          "validation deals")
    return config


def describe_deals(config: TrainConfig) -> dict[str, str]:
    """Which deals each phase of a run plays, in words (for the run's summary and its first lines)."""
    from solitaire_env.envs.registration import ENV_IDS

    train = deal_set(config.deals)
    if train.sampled:
        limit = ENV_IDS[config.env_id][1].deal_limit  # FreeCell's deals stop at Microsoft's last
        words = (f"train split (deals {TRAIN.start} .. 2**{limit.bit_length() - 1} - 1), drawn at random "
                 f"(seed {config.seed})")
    else:
        words = f"{train.name}, in order"
    deals = {"train": words,
             "validation": f"{describe(config.eval.seed, config.eval.seed + config.eval.episodes - 1)}, every round"}
    if config.pretrain is not None:
        pre = config.pretrain
        deals["pretrain"] = describe(pre.seed, pre.seed + pre.rounds * pre.episodes - 1)
    return deals


__all__ = ["BACKENDS", "POLICIES", "POLICY_OBS_MODES", "PRETRAIN_AGENTS", "SECTIONS", "ConfigError", "EvalConfig",
           "PretrainConfig", "TrainConfig", "apply_overrides", "describe_deals", "load_config", "parse_config",
           "resolve", "save_config"]
