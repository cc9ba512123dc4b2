"""A natively batched vector env: ``gym.make_vec("RankAndFile-v0", num_envs=N)``.

All N games live in one ``(N, state_size)`` ``int8`` array and advance in one call to the compiled
core (:func:`solitaire_env.core.step_batch`), not in a Python loop over envs. It behaves exactly
like N single envs under Gymnasium's ``SyncVectorEnv`` (tested step for step):

* ``metadata["autoreset_mode"]`` is ``AutoresetMode.NEXT_STEP``: the step after a sub-env ends
  resets it, ignores its action, and returns its first observation with reward 0 and no end flags.
* ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i`` (it gets deal number ``s + i``); later
  deals come from each sub-env's own generator, as in the single env.
* ``info["action_mask"]`` is ``(N, n)`` ``int8``; ``info`` also holds ``foundation_cards``,
  ``is_won`` and ``illegal_action`` arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from solitaire_env import core
from solitaire_env.envs.base import OBS_DTYPE, observation_space, set_env_options
from solitaire_env.games import NUMBER_TEN, RAINBOW, RANK_AND_FILE
from solitaire_env.state import deal
from solitaire_env.variant import Variant


class SolitaireVectorEnv(VectorEnv):
    """N games of one variant, stepped together; arguments as the single env, plus ``num_envs``."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4, "autoreset_mode": AutoresetMode.NEXT_STEP}
    variant: Variant

    def __init__(
        self,
        num_envs: int = 1,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        obs_mode: str = "codes",
        illegal_action: str = "penalize",
        illegal_penalty: float = 0.01,
        win_bonus: float = 0.0,
        step_penalty: float = 0.0,
        reveal_bonus: float = 0.0,
        ansi_color: bool = False,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        set_env_options(self, render_mode=render_mode, obs_mode=obs_mode, illegal_action=illegal_action,
                        illegal_penalty=illegal_penalty, win_bonus=win_bonus, step_penalty=step_penalty,
                        reveal_bonus=reveal_bonus, ansi_color=ansi_color)
        v = self.variant
        n = self.num_envs = int(num_envs)
        self.max_episode_steps = int(max_episode_steps) if max_episode_steps else v.max_episode_steps
        self.single_observation_space = observation_space(v, obs_mode)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.single_action_space = spaces.Discrete(v.n_actions)
        self.action_space = batch_space(self.single_action_space, n)

        self.states = np.zeros((n, v.state_size), dtype=np.int8)
        self.masks = np.zeros((n, v.n_actions), dtype=np.int8)
        self.codes = np.zeros((n, v.obs_size), dtype=OBS_DTYPE)
        self.found = np.zeros(n, dtype=np.int64)
        self.n_legal = np.zeros(n, dtype=np.int64)
        self.gained = np.zeros(n, dtype=np.int64)
        self.revealed = np.zeros(n, dtype=np.int64)
        self.to_win = np.ones(n, dtype=np.int64)
        self.steps = np.zeros(n, dtype=np.int64)
        self.prev_done = np.zeros(n, dtype=bool)
        self.deal_seeds = np.zeros(n, dtype=np.int64)
        self._row_starts = np.arange(n, dtype=np.int64) * v.n_actions  # sub-env i's mask in masks.reshape(-1)
        self._rngs: list[np.random.Generator] | None = None
        self._ready = False

    # --- Gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)}: the vector env takes none")
        n = self.num_envs
        if seed is None:
            if self._rngs is None:
                self._rngs = [seeding.np_random()[0] for _ in range(n)]
            seeds: list[int | None] = [None] * n
        else:
            seeds = [seed + i for i in range(n)] if isinstance(seed, (int, np.integer)) else list(seed)
            if len(seeds) != n:
                raise ValueError(f"reset got {len(seeds)} seeds for {n} sub-envs")
            self._rngs = [seeding.np_random(int(s))[0] for s in seeds]
        for i in range(n):
            self._deal(i, seeds[i])
        self.steps[:] = 0
        self.prev_done = np.zeros(n, dtype=bool)
        self.codes, self.masks = np.empty_like(self.codes), np.empty_like(self.masks)  # the last step's: the caller's
        core.observe_batch(self.states, self.variant.spec, self.variant.actions, self.masks, self.codes,
                           self.found, self.n_legal)
        self.to_win[:] = np.maximum(self.variant.n_cards - self.found, 1)
        self._ready = True
        info = self._info(np.zeros(n, dtype=bool))
        info["deal_seed"] = self.deal_seeds.copy()
        return self._encoder(self.codes.copy(), self.masks), info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        v, n = self.variant, self.num_envs
        acts = np.asarray(actions)
        if acts.shape != (n,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {n} integers (shape ({n},)), got shape {acts.shape} {acts.dtype}")
        if acts.min() < 0 or acts.max() >= v.n_actions:
            bad = acts[(acts < 0) | (acts >= v.n_actions)][0]
            raise ValueError(f"action {bad} is outside the action space Discrete({v.n_actions})")
        acts = acts.astype(np.int64)  # a copy: the sub-envs that reset get -1 below
        resetting = self.prev_done
        any_reset = resetting.any()
        illegal = self.masks.reshape(-1)[self._row_starts + acts] == 0
        if any_reset:
            illegal &= ~resetting
        if self.illegal_action == "raise" and illegal.any():
            i = int(np.flatnonzero(illegal)[0])
            raise ValueError(f"action {acts[i]} of sub-env {i} is not legal here")
        if any_reset:
            for i in np.flatnonzero(resetting):
                self._deal(i, None)
            acts[resetting] = -1  # the reset sub-envs make no move this step
        # Fresh arrays each step, every row written by the kernel: the caller owns what we return.
        self.codes = np.empty_like(self.codes)
        self.masks = np.empty_like(self.masks)
        core.step_batch(self.states, v.spec, v.actions, acts, self.masks, self.codes,
                        self.gained, self.revealed, self.n_legal, self.found)
        if any_reset:
            self.to_win[resetting] = np.maximum(v.n_cards - self.found[resetting], 1)
        won = self.found == v.n_cards
        # Terms whose coefficient is 0 are left out: adding 0.0 changes no value.
        rewards = self.gained / self.to_win
        if self.reveal_bonus:
            rewards += self.reveal_bonus * self.revealed
        if self.step_penalty:
            rewards -= self.step_penalty
        if self.illegal_penalty and illegal.any():
            rewards -= self.illegal_penalty * illegal
        if self.win_bonus and won.any():
            rewards += self.win_bonus * (won & ~illegal)
        terminated = won | (self.n_legal == 0)
        self.steps += 1
        if any_reset:
            self.steps[resetting] = 0
        truncated = self.steps >= self.max_episode_steps
        if any_reset:
            rewards[resetting] = 0.0
            terminated[resetting] = False
            truncated[resetting] = False
        self.prev_done = terminated | truncated
        info = {"action_mask": self.masks, "foundation_cards": self.found.copy(), "is_won": won,
                "illegal_action": illegal}
        return self._encoder(self.codes, self.masks), rewards, terminated, truncated, info

    def render(self) -> tuple | None:
        from solitaire_env.render import render_rgb, render_text
        from solitaire_env.state import to_json

        if self.render_mode is None:
            return None
        states = [to_json(self.variant, s) for s in self.states]
        if self.render_mode == "ansi":
            return tuple(render_text(s, color=self.ansi_color) for s in states)
        return tuple(render_rgb(s) for s in states)

    # --- engine access ------------------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """``(N, n)`` ``bool``: legal actions of every sub-env."""
        return self.masks.astype(bool)

    def reset_envs(self, indices: np.ndarray) -> Any:
        """Deal new games to the given sub-envs now (same-step autoreset, as the SB3 adapter needs)."""
        v = self.variant
        self.codes, self.masks = self.codes.copy(), self.masks.copy()  # the last step's belong to the caller now
        for i in indices:
            self._deal(int(i), None)
            self.n_legal[i] = core.legal_mask(self.states[i], v.spec, v.actions, self.masks[i])
            core.observe(self.states[i], v.spec, self.codes[i])
            self.found[i] = core.foundation_cards(self.states[i], v.spec)
            self.to_win[i] = max(v.n_cards - self.found[i], 1)
        self.steps[indices] = 0
        self.prev_done[indices] = False
        return self._encoder(self.codes.copy(), self.masks)

    def get_state(self, i: int) -> dict:
        from solitaire_env.state import to_json

        return to_json(self.variant, self.states[i])

    # --- internals ----------------------------------------------------------------------------

    def _deal(self, i: int, seed: int | None) -> None:
        deal_seed = int(seed) if seed is not None else int(self._rngs[i].integers(2**62))
        self.deal_seeds[i] = deal_seed
        self.states[i] = deal(self.variant, deal_seed)

    def _info(self, illegal: np.ndarray) -> dict:
        return {
            "action_mask": self.masks.copy(),
            "foundation_cards": self.found.copy(),
            "is_won": self.found == self.variant.n_cards,
            "illegal_action": illegal,
        }


class RankAndFileVectorEnv(SolitaireVectorEnv):
    variant = RANK_AND_FILE


class NumberTenVectorEnv(SolitaireVectorEnv):
    variant = NUMBER_TEN


class RainbowVectorEnv(SolitaireVectorEnv):
    variant = RAINBOW
