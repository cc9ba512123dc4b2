"""The JAX env: :class:`Env` (``init``, ``init_deal``, ``step``) over a typed :class:`State`, and :func:`make`.

Pure functions in the style of pgx: a state in, a state out, no Python per step, so
``jax.jit(jax.vmap(env.step))`` plays a batch of games in one compiled call. The step is the
Gymnasium env's with its default options: the same reward (:class:`~solitaire_env.envs.reward.Reward`'s
terms), ``terminated`` when the game is won or no legal move is left, ``truncated`` at the
registered ``max_episode_steps`` (Gymnasium's ``TimeLimit``), and an illegal action changes nothing
and costs ``illegal_penalty``. Two things differ because a compiled step cannot raise: an action id
outside the action space is treated as an illegal action, and a finished game (terminated or
truncated) ignores actions, returning its state with reward 0.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from solitaire_env.engine.state import check_seed, deal
from solitaire_env.engine.variant import Variant
from solitaire_env.envs.registration import ENV_IDS
from solitaire_env.envs.reward import Reward
from solitaire_env.jax import rules
from solitaire_env.jax.layout import Layout, deal_plan, lay_out, pack, unpack

# The env's reward coefficients and their defaults, read off the env's own Reward.
REWARD_DEFAULTS = {f.name: f.default for f in fields(Reward)}


class State(NamedTuple):
    """One game (or, under ``vmap``, a batch with a leading axis on every field).

    ====================  ===========================  ==========================================================
    field                 shape, dtype                 meaning
    ====================  ===========================  ==========================================================
    board                 (state_size,) int8           the engine's flat state (``variant.spec`` offsets)
    observation           (obs_size,) int16            the env's default ``codes`` observation
    legal_action_mask     (n_actions,) bool            the env's ``info["action_mask"]``
    reward                () float32                   the last step's reward (0 after ``init``)
    terminated            () bool                      won, or no legal move left
    truncated             () bool                      ``step_count`` reached the episode limit
    step_count            () int32                     steps since the deal
    to_win                () int32                     cards off the foundations at the deal (the reward's divisor)
    ====================  ===========================  ==========================================================
    """

    board: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    step_count: jax.Array
    to_win: jax.Array


class Env:
    """One game's rules as pure JAX functions; :func:`make` builds one from an env id."""

    def __init__(self, variant: Variant, max_episode_steps: int | None = None, **reward: float) -> None:
        if variant.cells or variant.run_limit or variant.shuffle != "pcg64" or variant.foundation_to_tableau \
                or variant.kings_to_empty or variant.draw != 1 or variant.redeals is None:
            raise ValueError(f"the JAX backend does not play {variant.title} yet (FreeCell's free cells, run limit "
                             f"and Microsoft's deals, and Klondike's rules, are numba-only); use the Gymnasium env")
        unknown = sorted(set(reward) - set(REWARD_DEFAULTS))
        if unknown:
            raise ValueError(f"unknown argument(s) {unknown}; the JAX env takes max_episode_steps and "
                             f"the reward coefficients {', '.join(REWARD_DEFAULTS)}")
        if max_episode_steps is None:
            max_episode_steps = variant.max_episode_steps
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, (int, np.integer)) \
                or max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be a positive integer or None, got {max_episode_steps!r}")
        self.variant = variant
        self.layout = Layout.of(variant)
        self.max_episode_steps = int(max_episode_steps)
        self.reward = asdict(Reward(**reward))  # Reward checks each coefficient, as the Gymnasium env's does
        self._plan = deal_plan(self.layout)
        self._actions = np.asarray(variant.actions, dtype=np.int32)  # a constant of the compiled step
        self._mask_index = rules.mask_index(self.layout, variant.actions)
        self._start_one = jax.jit(self._start)
        self._start_many = jax.jit(jax.vmap(self._start))

    @property
    def num_actions(self) -> int:
        return self.layout.n_actions

    @property
    def observation_shape(self) -> tuple[int]:
        return (self.layout.obs_size,)

    # --- starting a game ------------------------------------------------------------------------

    def init(self, key: jax.Array) -> State:
        """A random deal: ``key`` shuffles the variant's decks (``jax.random``); jit- and vmap-able."""
        deck = jax.random.permutation(key, jnp.arange(self.layout.n_cards, dtype=jnp.int32) % 52)
        return self._start(lay_out(self.layout, self._plan, deck))

    def init_deal(self, seed: int | Any) -> State:
        """Deal number ``seed``, exactly as ``gym.make(id).reset(seed=seed)`` deals it (the engine's deal,
        made on the host). A 1-D array or list of seeds gives a batch of states, one row a seed. Not
        traceable: call it outside ``jit``."""
        seeds = np.asarray(seed, dtype=object)
        if seeds.ndim > 1:
            raise ValueError(f"seed must be an integer or a 1-D sequence of them, got shape {seeds.shape}")
        if seeds.size == 0:
            raise ValueError("seed is an empty sequence: give at least one deal number")
        boards = np.stack([deal(self.variant, check_seed(s)) for s in seeds.reshape(-1)])
        return self.from_engine_state(boards[0] if seeds.ndim == 0 else boards)

    def from_engine_state(self, board: Any) -> State:
        """A game from the engine's flat state (``(state_size,)`` or a batch ``(N, state_size)`` int8), e.g.
        ``Game.state`` or a JSON position's ``state.from_json(...)[1]``; its step count starts at 0."""
        board = np.asarray(board)
        size = self.layout.state_size
        if board.dtype != np.int8 or board.ndim not in (1, 2) or board.shape[-1] != size:
            raise ValueError(f"an engine state of {self.variant.title} is int8 of shape ({size},) or (N, {size}), "
                             f"got {board.dtype} of shape {board.shape}")
        return (self._start_one if board.ndim == 1 else self._start_many)(jnp.asarray(board))

    def _start(self, board: jax.Array) -> State:
        t = unpack(self.layout, board)
        mask = rules.legal_mask(self.layout, t, self._mask_index)
        found = rules.foundation_cards(t)
        return State(
            board=board, observation=rules.observe(self.layout, t), legal_action_mask=mask,
            reward=jnp.float32(0.0), terminated=(found == self.layout.n_cards) | ~mask.any(),
            truncated=jnp.bool_(False), step_count=jnp.int32(0),
            to_win=jnp.maximum(self.layout.n_cards - found, 1).astype(jnp.int32),
        )

    # --- playing --------------------------------------------------------------------------------

    def step(self, state: State, action: Any) -> State:
        """Play ``action`` (one integer id) in one game; ``jax.vmap`` it for a batch. Pure and jit-able."""
        self._check(state, action)
        layout, actions = self.layout, jnp.asarray(self._actions)
        action = jnp.asarray(action)
        a = jnp.clip(action, 0, layout.n_actions - 1)
        done = state.terminated | state.truncated
        legal = (action >= 0) & (action < layout.n_actions) & state.legal_action_mask[a]

        t = unpack(layout, state.board)
        kind, src, dst, cnt = actions[a, 0], actions[a, 1], actions[a, 2], actions[a, 3]
        target, count = rules.resolve(layout, t, rules.pile_facts(layout, t), kind, src, dst, cnt)
        moved = rules.apply(layout, t, kind, src, target, count)
        # An illegal action changes nothing; the mask is then recomputed for the same position, as it was.
        after = jax.tree.map(lambda new, old: jnp.where(legal, new, old), moved, t)
        # Computed once: without the barrier XLA fuses the move into every read of the new position and
        # computes it again for each of them (the step took twice as long).
        after = jax.lax.optimization_barrier(after)

        mask = rules.legal_mask(layout, after, self._mask_index)
        found = rules.foundation_cards(after)
        won = found == layout.n_cards
        gained = found - rules.foundation_cards(t)
        revealed = rules.hidden_cards(t) - rules.hidden_cards(after)
        step_count = state.step_count + 1
        played = State(
            board=pack(layout, after), observation=rules.observe(layout, after), legal_action_mask=mask,
            reward=self._reward(gained, state.to_win, revealed, ~legal, won),
            terminated=won | ~mask.any(), truncated=step_count >= self.max_episode_steps,
            step_count=step_count, to_win=state.to_win,
        )
        # A finished game stays as it is.
        kept = state._replace(reward=jnp.float32(0.0))
        return jax.tree.map(lambda new, old: jnp.where(done, old, new), played, kept)

    def _reward(self, gained: jax.Array, to_win: jax.Array, revealed: jax.Array, illegal: jax.Array,
                won: jax.Array) -> jax.Array:
        """``Reward.__call__``'s terms, in float32; terms with a 0 coefficient are left out, as there."""
        c = self.reward
        reward = gained.astype(jnp.float32) / to_win.astype(jnp.float32)
        if c["reveal_bonus"]:
            reward = reward + c["reveal_bonus"] * revealed
        if c["step_penalty"]:
            reward = reward - c["step_penalty"]
        if c["illegal_penalty"]:
            reward = reward - c["illegal_penalty"] * illegal
        if c["win_bonus"]:
            reward = reward + c["win_bonus"] * (won & ~illegal)
        return reward.astype(jnp.float32)

    def _check(self, state: Any, action: Any) -> None:
        """Shapes and types, checked while tracing (values cannot be: an out-of-range id is illegal)."""
        if not isinstance(state, State):
            raise ValueError(f"state must be a solitaire_env.jax.State, got {type(state).__name__}")
        size = self.layout.state_size
        if tuple(jnp.shape(state.board)) != (size,):
            batch = " (for a batch of games use jax.vmap(env.step))" if jnp.ndim(state.board) == 2 else ""
            raise ValueError(f"state.board must have shape ({size},) for {self.variant.title}, "
                             f"got {tuple(jnp.shape(state.board))}{batch}")
        if isinstance(action, (bool, np.bool_)) or action is None:
            raise ValueError(f"action must be an integer id, got {action!r}")
        shape = tuple(jnp.shape(action))
        if shape != ():
            raise ValueError(f"action must be one integer (shape ()), got shape {shape}; "
                             "for a batch of games use jax.vmap(env.step)")
        dtype = jnp.result_type(action)
        if not jnp.issubdtype(dtype, jnp.integer):
            raise ValueError(f"action must be an integer id of 0 .. {self.layout.n_actions - 1}, got dtype {dtype}")

    # --- reading ----------------------------------------------------------------------------------

    def engine_state(self, state: State) -> np.ndarray:
        """The engine's flat ``int8`` state (a batch gives ``(N, state_size)``): the layout of ``variant.spec``,
        so ``core``, ``Game`` and ``state.to_json`` read it as it is."""
        return np.asarray(state.board)


def make(env_id: str, **kwargs: Any) -> Env:
    """The JAX env of a registered id (``"RankAndFile-v0"``, ``"NumberTen-v0"``, ``"Rainbow-v0"``) with the
    Gymnasium env's defaults. ``kwargs``: ``max_episode_steps`` (default the registered limit) and the
    reward coefficients ``illegal_penalty``, ``win_bonus``, ``step_penalty``, ``reveal_bonus``."""
    if not isinstance(env_id, str) or env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; known ids: {', '.join(ENV_IDS)}")
    return Env(ENV_IDS[env_id][1], **kwargs)
