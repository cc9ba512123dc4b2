"""A policy trained on the JAX backend: :class:`CardCodesNet` (flax), its checkpoint file, and
:class:`JaxPolicyAgent`, which plays it in the ordinary (numba) env (needs the ``jax`` extra).

The network is :class:`~solitaire_env.agents.policies.CardCodesPolicy`'s, written in flax: a card
embedding of the default ``codes`` observation (a linear layer over the one-hot of every entry, done as
a lookup of the non-zero entries), a ReLU, then separate policy and value MLPs with tanh layers of
``net_arch`` widths. ``solitaire-env train`` with ``backend: jax`` trains it
(:mod:`solitaire_env.tools.jax_training`); ``solitaire-env evaluate --agent RUN/best_model.msgpack``
plays it, greedy, or sampled with ``sample:PATH``, on the same deals as every other agent.

A checkpoint is one msgpack file (``flax.serialization``): ``{"meta": JSON text, "params": the
network's weights}``; ``meta`` names the format, the env id, the network's sizes and the env options
it was trained with, so the file alone rebuilds the network.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import flax.linen as nn
import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

from solitaire_env.agents.base import Agent
from solitaire_env.engine.variant import observation_fields
from solitaire_env.envs.base import observation_nvec
from solitaire_env.envs.registration import ENV_IDS

FORMAT = "solitaire-env/jax-card-codes"  # the meta's "format": what load_policy reads
# What a JAX training run directory holds (solitaire_env.tools.jax_training), in the order taken.
RUN_DIR_MODELS = ("best_model.msgpack", "final_model.msgpack")
# Observation fields that are lists of cards: each card lies in at most one of their entries.
CARD_LISTS = ("tableau", "waste", "stock", "reserve")


class CardCodesNet(nn.Module):
    """Card embedding of the ``codes`` observation, then a policy MLP and a value MLP (tanh layers).

    ``__call__(codes, mask)`` takes a batch ``(N, obs_size)`` of codes and ``(N, n_actions)`` masks and
    returns the masked logits (illegal moves at -1e9) and the values ``(N,)``.
    """

    nvec: tuple[int, ...]  # values each observation entry takes
    n_actions: int
    features_dim: int  # width of the card embedding
    net_arch: tuple[int, ...]  # hidden tanh layers of each head
    max_present: int  # at most this many entries of an observation are non-zero

    @nn.compact
    def __call__(self, codes: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        # Entry j with code c is row offsets[j] + c of one table. Code 0 (an empty slot, most entries) adds
        # nothing (its constant is the bias's), so only the non-zero entries are gathered: a fixed
        # max_present of them, not obs_size.
        offsets = jnp.asarray(np.concatenate(([0], np.cumsum(self.nvec)[:-1])), dtype=jnp.int32)
        # N(0, 1), as torch's EmbeddingBag in CardCodesPolicy.
        table = self.param("embed", nn.initializers.normal(1.0), (sum(self.nvec), self.features_dim))
        bias = self.param("bias", nn.initializers.zeros, (self.features_dim,))

        def embed(c: jax.Array) -> jax.Array:
            at = jnp.nonzero(c, size=self.max_present, fill_value=0)[0]
            used = jnp.arange(self.max_present) < jnp.count_nonzero(c)
            return jnp.sum(table[offsets[at] + c[at]] * used[:, None], axis=0)

        features = nn.relu(jax.vmap(embed)(codes.astype(jnp.int32)) + bias)
        pi, vf = features, features
        for width in self.net_arch:
            pi, vf = nn.tanh(nn.Dense(width)(pi)), nn.tanh(nn.Dense(width)(vf))
        logits = nn.Dense(self.n_actions)(pi)
        value = nn.Dense(1)(vf)[:, 0]
        # Illegal moves: probability 0. A row with no legal move (a finished game) is uniform.
        return jnp.where(mask, logits, -1e9), value


def make_network(env_id: str, features_dim: int = 256, net_arch: tuple[int, ...] | list[int] = (128,)) -> CardCodesNet:
    """The network for ``env_id``'s ``codes`` observation and action space."""
    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
    variant = ENV_IDS[env_id][1]
    nvec = tuple(int(n) for n in observation_nvec(variant))
    fields = observation_fields(variant)
    # Each card lies in at most one entry of the lists; every other field's entries may all be non-zero.
    others = sum(f.stop - f.start for name, (f, _) in fields.items() if name not in CARD_LISTS)
    max_present = min(variant.n_cards + others, len(nvec))
    return CardCodesNet(nvec, variant.n_actions, int(features_dim), tuple(int(w) for w in net_arch), max_present)


def init_params(net: CardCodesNet, key: jax.Array) -> Any:
    """Fresh weights for ``net`` (a batch of one all-empty observation is enough to shape them). Compiled as
    one program: run eagerly, each operation of the initialisers compiles on its own (seconds more)."""
    return jax.jit(net.init)(key, jnp.zeros((1, len(net.nvec)), jnp.int16), jnp.ones((1, net.n_actions), bool))


def save_policy(path: str | os.PathLike, params: Any, env_id: str, net: CardCodesNet, env_kwargs: dict) -> None:
    """Write a checkpoint ``path`` that :func:`load_policy` reads back (written whole, then renamed)."""
    meta = {"format": FORMAT, "env_id": env_id, "features_dim": net.features_dim, "net_arch": list(net.net_arch),
            "env_kwargs": dict(env_kwargs)}
    blob = flax.serialization.msgpack_serialize(
        {"meta": json.dumps(meta), "params": flax.serialization.to_state_dict(jax.device_get(params))})
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(blob)
    partial.replace(path)  # a stop mid-write leaves the old file, never half a new one


def find_policy(path: str | os.PathLike) -> str:
    """The checkpoint ``path`` names: the file, or in a run directory its best (else final) model."""
    path = os.fspath(path)
    if os.path.isdir(path):
        for model in RUN_DIR_MODELS:
            if os.path.isfile(os.path.join(path, model)):
                return os.path.join(path, model)
        raise FileNotFoundError(f"{path} holds no {' or '.join(RUN_DIR_MODELS)}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    return path


def load_policy(path: str | os.PathLike) -> tuple[CardCodesNet, Any, dict]:
    """``(net, params, meta)`` from a checkpoint :func:`save_policy` wrote; ``ValueError`` naming the path
    and what is wrong for anything else."""
    path = find_policy(path)
    try:
        raw = flax.serialization.msgpack_restore(Path(path).read_bytes())
        meta = json.loads(raw["meta"])
        stored = raw["params"]
    except Exception as e:  # msgpack's and json's errors on a damaged or foreign file
        raise ValueError(f"cannot read {path} as a JAX policy checkpoint: the file is damaged or not one "
                         f"({type(e).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not a JAX policy checkpoint (its format is "
                         f"{meta.get('format') if isinstance(meta, dict) else None!r}, expected {FORMAT!r})")
    net = make_network(meta["env_id"], meta["features_dim"], meta["net_arch"])
    template = init_params(net, jax.random.key(0))
    try:
        params = flax.serialization.from_state_dict(template, stored)
        shapes = jax.tree.map(lambda a, b: np.shape(a) == np.shape(b), template, params)
    except (KeyError, ValueError, TypeError) as e:
        raise ValueError(f"{path}: its weights do not fit the network its meta describes ({e})") from None
    if not all(jax.tree.leaves(shapes)):
        raise ValueError(f"{path}: its weights' shapes do not fit the network its meta describes")
    return net, jax.tree.map(jnp.asarray, params), meta


def _compiled_logits(net: CardCodesNet) -> Any:
    """``net``'s masked logits as one compiled call ``(params, obs, mask) -> logits``."""
    return jax.jit(lambda params, obs, mask: net.apply(params, obs, mask)[0])


class JaxPolicyAgent(Agent):
    """Plays a JAX-trained :class:`CardCodesNet` on the env's default ``codes`` observation: greedy (the
    most likely legal move) or, with ``deterministic=False``, sampled from the policy (``reset(seed)``
    seeds the sampling)."""

    def __init__(self, net: CardCodesNet, params: Any, env_id: str, name: str = "jax-ppo",
                 deterministic: bool = True) -> None:
        variant = ENV_IDS[env_id][1]
        if net.n_actions != variant.n_actions or len(net.nvec) != variant.obs_size:
            raise ValueError(f"the policy was trained on another game: its network has {net.n_actions} actions "
                             f"and {len(net.nvec)} observation entries, {env_id} has {variant.n_actions} and "
                             f"{variant.obs_size}")
        self.net, self.params, self.env_id, self.name = net, params, env_id, name
        self.deterministic = deterministic
        self.checkpoint: str | None = None  # the file it was loaded from, by load()
        # The JAX env has the Gymnasium env's default rules and observation: the policy plays in any env
        # of the game (env_kwargs stays empty; the reward options it trained with change no move).
        self._logits = _compiled_logits(net)
        self._rng = np.random.default_rng()

    @classmethod
    def load(cls, path: str | os.PathLike, env_id: str, name: str | None = None,
             deterministic: bool = True) -> JaxPolicyAgent:
        """The agent of a checkpoint file or run directory (:func:`find_policy`); ``ValueError`` if the file
        is not one, or was trained on another game."""
        file = find_policy(path)
        net, params, meta = load_policy(file)
        if meta["env_id"] != env_id:
            raise ValueError(f"{file} was trained on {meta['env_id']}, not {env_id}")
        agent = cls(net, params, env_id, name=name or file, deterministic=deterministic)
        agent.checkpoint = file
        return agent

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def __getstate__(self) -> dict[str, Any]:
        # The compiled forward pass stays behind (a jitted closure does not pickle): --ray and --jobs
        # workers compile their own.
        state = dict(self.__dict__)
        state["params"] = jax.device_get(state["params"])
        del state["_logits"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._logits = _compiled_logits(self.net)

    @property
    def batched(self) -> bool:
        """Whether :meth:`act_batch` plays as :meth:`act` does: greedy play, no randomness to keep in step."""
        return self.deterministic

    def logits(self, observations: Any, masks: Any) -> np.ndarray:
        """The masked logits of a batch of ``codes`` observations ``(N, obs_size)`` and masks ``(N, n_actions)``."""
        obs = jnp.asarray(np.asarray(observations, dtype=np.int16))
        return np.asarray(self._logits(self.params, obs, jnp.asarray(np.asarray(masks).astype(bool))))

    def act_batch(self, observations: Any, masks: np.ndarray) -> np.ndarray:
        """The greedy actions of a batch: one compiled forward pass for all."""
        return self.logits(observations, masks).argmax(axis=1).astype(np.int64)

    def act(self, observation: Any, info: dict) -> int:
        mask = np.asarray(info["action_mask"]).astype(bool)
        logits = self.logits(np.asarray(observation)[None], mask[None])[0]
        if self.deterministic:
            return int(logits.argmax())
        p = np.exp(logits - logits.max()) * mask
        return int(self._rng.choice(len(p), p=p / p.sum()))


__all__ = ["FORMAT", "RUN_DIR_MODELS", "CardCodesNet", "JaxPolicyAgent", "find_policy", "init_params",
           "load_policy", "make_network", "save_policy"]
