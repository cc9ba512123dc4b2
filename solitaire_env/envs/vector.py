"""A natively batched vector env: ``gym.make_vec("RankAndFile-v0", num_envs=N)``.

All N games live in one ``(N, state_size)`` ``int8`` array and advance in one call to the compiled
core (:func:`solitaire_env.engine.batched.step_batch`), not in a Python loop over envs. It behaves exactly
like N single envs under Gymnasium's ``SyncVectorEnv`` (tested step for step):

* ``autoreset_mode=`` (an ``AutoresetMode`` or its string value; also the attribute
  ``autoreset_mode`` and ``metadata["autoreset_mode"]``), Gymnasium's three modes:

  - ``NEXT_STEP`` (default): the step after a sub-env ends resets it, ignores its action, and returns
    its first observation with reward 0 and no end flags.
  - ``SAME_STEP``: the step that ends a sub-env also resets it and returns the new game's first
    observation and info; the last observation and info are in ``info["final_obs"]`` (an object
    array of N rows, ``None`` for sub-envs that did not end) and ``info["final_info"]``, with the
    masks ``info["_final_obs"]`` and ``info["_final_info"]``, as ``SyncVectorEnv`` gives them.
  - ``DISABLED``: nothing resets by itself; the caller resets the sub-envs that ended with
    ``reset(options={"reset_mask": ended})`` before it steps them again (``ValueError`` otherwise).
* ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i`` (it gets deal number ``s + i``); later
  deals come from each sub-env's own generator, as in the single env. ``seed`` may also be a list
  of N seeds, where ``None`` leaves that sub-env's generator as it is (Gymnasium's convention).
* ``reset(options=...)`` takes ``"state"``: one JSON position (docs/state_format.md) for every sub-env, or a
  list of N positions where ``None`` deals as usual; and ``"reset_mask"``: an ``(N,)`` bool array,
  to reset only those sub-envs (the others keep their games and step counts). ``set_state(i, state)``
  sets one sub-env's position. A bad seed or option raises ``ValueError`` and changes nothing.
* ``deals=`` (as in the single env, :mod:`solitaire_env.engine.deals`): with an ordered set, sub-env ``i``
  plays positions ``i, i + N, i + 2N, ...`` of the set (from ``seed + i`` when seeded), so together
  the N sub-envs play each deal once; a sampled set (``"train"``) is drawn from by each sub-env's
  own generator (one :class:`~solitaire_env.engine.deals.DealSchedule` a sub-env, as the single env's).
* ``info`` holds every key of the single env's info for every sub-env on every reset and step, each
  an array with one row a sub-env (so no ``_key`` masks): ``action_mask`` ``(N, n)`` ``int8``,
  ``foundation_cards``, ``move`` and ``deal_seed`` ``int64``, ``is_won`` and ``illegal_action``
  ``bool``, and with ``track_revisits`` / ``no_revisit`` (see the single env) ``revisit`` / ``stuck``
  (``action_features`` too, when the observation is not a ``Dict``); each sub-env keeps its episode's
  positions in :class:`solitaire_env.engine.history.History`, recorded in the same compiled pass as the step (which
  also writes the action features).
* ``action_space`` is a ``MultiDiscrete`` whose ``sample(mask=info["action_mask"])`` takes the
  ``(N, n)`` mask as it comes (Gymnasium's own ``MultiDiscrete`` wants a tuple of rows).
* ``codes`` and ``masks`` (read them, do not write): the default ``codes`` observation and the action
  masks of every sub-env's current position, whatever ``obs_mode`` is; a teacher that reads the codes
  labels positions the student sees another way (:mod:`solitaire_env.tools.imitation`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from solitaire_env.engine import batched, features, history
from solitaire_env.engine.batched import Batch
from solitaire_env.engine.deals import DealSchedule, DealSet, deal_set
from solitaire_env.engine.games import (
    FREECELL,
    KLONDIKE,
    NUMBER_TEN,
    RAINBOW,
    RANK_AND_FILE,
    freecell_variant,
    klondike_variant,
)
from solitaire_env.engine.history import History, Recording
from solitaire_env.engine.state import check_seed, deal_into, from_json
from solitaire_env.engine.variant import Variant
from solitaire_env.envs.base import (
    DICT_MODES,
    OBS_DTYPE,
    RESET_OPTIONS,
    check_action,
    observation_space,
    set_env_options,
)

VECTOR_RESET_OPTIONS = (*RESET_OPTIONS, "reset_mask")


class BatchedDiscrete(spaces.MultiDiscrete):
    """N copies of ``Discrete(n)`` whose ``sample(mask=...)`` also takes the env's ``(N, n)`` mask array."""

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if isinstance(mask, np.ndarray) and mask.shape == tuple(self.nvec.shape) + (int(self.nvec.max()),):
            mask = tuple(mask.astype(np.int8))
        return super().sample(mask=mask, probability=probability)


def check_autoreset_mode(value: Any) -> AutoresetMode:
    """``value`` as an ``AutoresetMode`` (the enum or its string value); ``ValueError`` otherwise."""
    if isinstance(value, AutoresetMode):
        return value
    try:
        return AutoresetMode(value)
    except (ValueError, TypeError):
        names = ", ".join(f"{m.value!r}" for m in AutoresetMode)
        raise ValueError(f"autoreset_mode must be an AutoresetMode or one of {names}, got {value!r}") from None


def check_max_episode_steps(value: Any) -> int | None:
    """``None`` or a positive integer, as ``gym.make`` requires of a time limit; ``ValueError`` otherwise."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"max_episode_steps must be a positive integer or None, got {value!r}")
    return int(value)


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
        deals: Any = None,
        track_revisits: bool = False,
        no_revisit: bool = False,
        action_features: bool = False,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        set_env_options(self, render_mode=render_mode, obs_mode=obs_mode, illegal_action=illegal_action,
                        illegal_penalty=illegal_penalty, win_bonus=win_bonus, step_penalty=step_penalty,
                        reveal_bonus=reveal_bonus, ansi_color=ansi_color, track_revisits=track_revisits,
                        no_revisit=no_revisit, action_features=action_features)
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        v = self.variant
        n = self.num_envs = int(num_envs)
        self.max_episode_steps = check_max_episode_steps(max_episode_steps) or v.max_episode_steps
        self.deals: DealSet | None = deal_set(deals, self.variant.deal_limit)
        self.single_observation_space = observation_space(v, obs_mode, action_features and obs_mode in DICT_MODES)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.single_action_space = spaces.Discrete(v.n_actions)
        self.action_space = BatchedDiscrete(np.full(n, v.n_actions))

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
        # The positions each episode has seen (track_revisits / no_revisit): see solitaire_env.engine.history.
        self.history = History(v, n) if self.track_revisits else None
        self.revisit = np.zeros(n, dtype=bool)
        self.n_rules = np.zeros(n, dtype=np.int64)  # legal moves by the rules alone
        self.seen = np.zeros((n, v.n_actions if action_features else 0), dtype=np.int8)  # moves back, for features
        self._features = (features.FeatureArrays(v, n, obs_mode == "piles", self.action_features)
                          if obs_mode == "piles" or self.action_features else None)
        self._no_action_features = np.zeros((n, 0, 0), dtype=np.int8)
        self._action_features = self._no_action_features  # the last step's, written by the compiled step
        self._schedules = [DealSchedule(self.deals, i, n, self.variant.deal_limit) for i in range(n)]
        self._row_starts = np.arange(n, dtype=np.int64) * v.n_actions  # sub-env i's mask in masks.reshape(-1)
        self._rngs: list[np.random.Generator] | None = None
        self._ready = False

    # --- Gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        n = self.num_envs
        seeds = self._check_seeds(seed)
        states, which = self._check_options(options)  # everything checked before anything changes
        if self._rngs is None:
            self._rngs = [seeding.np_random()[0] for _ in range(n)]
        self.deal_seeds = self.deal_seeds.copy()  # the last info's belong to the caller
        for i in np.flatnonzero(which):
            if seeds[i] is not None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
            if states[i] is not None:
                self.states[i], self.deal_seeds[i] = states[i], -1
            else:
                self._deal(i, seeds[i])
        self.steps[which] = 0
        self.prev_done = self.prev_done & ~which if self._ready else np.zeros(n, dtype=bool)
        self.codes, self.masks = np.empty_like(self.codes), np.empty_like(self.masks)  # the last step's: the caller's
        if self.history is None:  # the step's kernel with no moves (one kernel to compile for reset and step)
            batched.step_batch(self._batch(), self.variant.spec, self.variant.actions, np.full(n, -1, dtype=np.int64))
        else:  # a step without moves: masks and observations, and the reset sub-envs' histories start anew
            kept = self.revisit.copy()
            self._step_history(np.full(n, -1, dtype=np.int64), which)
            self.revisit[~which] = kept[~which]
        self.to_win[which] = np.maximum(self.variant.n_cards - self.found[which], 1)
        self._ready = True
        info = self._info(np.zeros(n, dtype=bool), np.full(n, -1, dtype=np.int64))
        return self._observe(self.codes.copy(), info), info

    def set_state(self, i: int, state: dict) -> None:
        """Continue sub-env ``i`` from a JSON position (its step count restarts); ``ValueError`` if invalid."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise ValueError(f"sub-env index must be 0 .. {self.num_envs - 1}, got {i!r}")
        if not self._ready:
            raise RuntimeError("call reset() before set_state()")
        self.reset(options={"state": [state if j == i else None for j in range(self.num_envs)],
                            "reset_mask": np.arange(self.num_envs) == i})

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        v, n = self.variant, self.num_envs
        acts = np.asarray(actions)
        if acts.shape != (n,):
            raise ValueError(f"actions must be {n} integers (shape ({n},)), got shape {acts.shape}")
        if not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {acts.dtype}")
        if acts.min() < 0 or acts.max() >= v.n_actions:
            i = int(np.flatnonzero((acts < 0) | (acts >= v.n_actions))[0])
            check_action(int(acts[i]), v.n_actions)  # raises, naming the action
        acts = acts.astype(np.int64)  # a copy: the sub-envs that reset get -1 below
        resetting = self.prev_done
        any_reset = resetting.any()
        if any_reset and self.autoreset_mode is not AutoresetMode.NEXT_STEP:
            self._refuse_ended()  # SAME_STEP resets in the step that ends, so only DISABLED gets here
        illegal = self.masks.reshape(-1)[self._row_starts + acts] == 0
        if any_reset:
            illegal &= ~resetting
        if self.illegal_action == "raise" and illegal.any():
            i = int(np.flatnonzero(illegal)[0])
            raise ValueError(f"action {acts[i]} of sub-env {i} is not legal here")
        if any_reset:
            self.deal_seeds = self.deal_seeds.copy()  # the last info's belong to the caller
            for i in np.flatnonzero(resetting):
                self._deal(i, None)
            acts[resetting] = -1  # the reset sub-envs make no move this step
        # An illegal action changes nothing, as no move (-1) does; -1 is also what info["move"] says. And
        # a move the no-revisit mask forbids is legal to the core: not played.
        acts[illegal] = -1
        # Fresh arrays each step, every row written by the kernel: the caller owns what we return.
        self.codes = np.empty_like(self.codes)
        self.masks = np.empty_like(self.masks)
        if self.history is None:
            batched.step_batch(self._batch(), v.spec, v.actions, acts)
        else:
            self._step_history(acts, resetting)
        if any_reset:
            self.to_win[resetting] = np.maximum(v.n_cards - self.found[resetting], 1)
        won = self.found == v.n_cards
        rewards = self.reward_fn(self.gained, self.to_win, self.revealed, illegal, won)
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
                "illegal_action": illegal, "move": acts, "deal_seed": self.deal_seeds}
        self._history_info(info)
        obs = self._observe(self.codes, info)
        if self.autoreset_mode is AutoresetMode.SAME_STEP and self.prev_done.any():
            obs = self._reset_same_step(obs, info)
        return obs, rewards, terminated, truncated, info

    def render(self) -> tuple | None:
        from solitaire_env.engine.state import to_json
        from solitaire_env.envs.render import render_rgb, render_text

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
        return self._reset_rows(np.asarray(indices, dtype=np.int64).reshape(-1), {})

    # --- internals ----------------------------------------------------------------------------

    def _reset_rows(self, rows: np.ndarray, info: dict) -> Any:
        """Deal new games to sub-envs ``rows``; the observation of every sub-env (``info`` gets the
        action features when they go there)."""
        v, n = self.variant, self.num_envs
        self.codes, self.masks = self.codes.copy(), self.masks.copy()  # the last step's belong to the caller now
        self.deal_seeds = self.deal_seeds.copy()
        for i in rows:
            self._deal(int(i), None)
        # One compiled pass over the dealt games alone (the others' rows are left as they are), as the
        # step resets them: a call per game to each kernel cost more than the deal.
        acts = np.full(n, batched.SKIP, dtype=np.int64)
        acts[rows] = -1
        if self.history is None:
            batched.step_batch_serial(self._batch(), v.spec, v.actions, acts)
            self.n_rules[rows] = self.n_legal[rows]
        else:
            clear = np.zeros(n, dtype=bool)
            clear[rows] = True
            history.step_batch_serial(self._batch(), v.spec, v.actions, acts, self.history.tables,
                                      self._recording(clear, self._no_action_features), self.no_revisit)
        self.to_win[rows] = np.maximum(v.n_cards - self.found[rows], 1)
        self.steps[rows] = 0
        self.prev_done[rows] = False
        return self._observe(self.codes, info, stepped=False)  # (no copy: as the step's, it is never written again)

    def _reset_same_step(self, obs: Any, info: dict) -> Any:
        """SAME_STEP: the ended sub-envs' last observation and info into ``info["final_obs"]`` and
        ``info["final_info"]`` (built by Gymnasium's own ``_add_info``, as ``SyncVectorEnv`` builds
        them), then their new games' first observation and info in place of the last."""
        ended = np.flatnonzero(self.prev_done)
        final: dict = {}
        for i in ended:
            row_obs = {key: value[i] for key, value in obs.items()} if isinstance(obs, dict) else obs[i]
            row_info = {key: value[i].item() if value.ndim == 1 else value[i] for key, value in info.items()}
            final = self._add_info(final, {"final_obs": row_obs, "final_info": row_info}, i)
        obs = self._reset_rows(ended, info)
        info["action_mask"], info["deal_seed"] = self.masks, self.deal_seeds
        for key in ("foundation_cards", "is_won", "illegal_action", "move"):
            info[key] = info[key].copy()  # (``move`` and ``is_won`` may be arrays the step still holds)
        info["foundation_cards"][ended] = self.found[ended]
        info["is_won"][ended] = self.found[ended] == self.variant.n_cards
        info["illegal_action"][ended] = False
        info["move"][ended] = -1
        self._history_info(info)
        info.update(final)
        return obs

    def _refuse_ended(self) -> None:
        i = int(np.flatnonzero(self.prev_done)[0])
        raise ValueError(f"sub-env {i} has ended and autoreset_mode is DISABLED: reset it first with "
                         "reset(options={'reset_mask': ...}) (True for the sub-envs that ended)")

    def get_state(self, i: int) -> dict:
        from solitaire_env.engine.state import to_json

        return to_json(self.variant, self.states[i])

    def _deal(self, i: int, seed: int | None) -> None:
        """Deal sub-env ``i`` its next game (``seed``: given to this reset, already in its generator)."""
        deal_seed = self._schedules[i].next(seed, self._rngs[i])
        self.deal_seeds[i] = deal_seed
        deal_into(self.variant, deal_seed, self.states[i])

    def _check_seeds(self, seed: Any) -> list[int | None]:
        n = self.num_envs
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            seeds = [int(seed) + i for i in range(n)]
        elif isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
        else:
            raise ValueError(f"seed must be an integer, a list of {n} integers or None, or None; got {seed!r}")
        if len(seeds) != n:
            raise ValueError(f"reset got {len(seeds)} seeds for {n} sub-envs")
        numbered = self.variant if self.deals is None else None  # a seed names a deal, not a place in the set
        return [None if s is None else check_seed(s, numbered) for s in seeds]

    def _check_options(self, options: Any) -> tuple[list[np.ndarray | None], np.ndarray]:
        """The state array (or ``None``) and whether to reset, for each sub-env; ``ValueError`` if bad."""
        n = self.num_envs
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = set(options) - set(VECTOR_RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; the vector env takes "
                             f"{', '.join(VECTOR_RESET_OPTIONS)}")
        which = np.ones(n, dtype=bool)
        if "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.shape != (n,) or mask.dtype != np.bool_:
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({n},), "
                                 f"got {mask.dtype} of shape {mask.shape}")
            if not self._ready and not mask.all():
                raise ValueError("the first reset must reset every sub-env (reset_mask all True)")
            which = mask.copy()
        given = options.get("state")
        if given is None:
            given = [None] * n
        elif isinstance(given, dict):
            given = [given] * n  # one position for every sub-env, as SyncVectorEnv would pass it on
        elif not isinstance(given, (list, tuple)) or len(given) != n:
            raise ValueError(f"options['state'] must be one position (a dict) or a list of {n} positions or None")
        states: list[np.ndarray | None] = [None] * n
        for i, state in enumerate(given):
            if state is None or not which[i]:
                continue
            try:
                variant, states[i] = from_json(state)
            except ValueError as e:
                raise ValueError(f"options['state'][{i}]: {e}") from None
            if variant is not self.variant:
                raise ValueError(f"options['state'][{i}] is a {variant.title} position, but this env plays "
                                 f"{self.variant.title}")
        return states, which

    def _step_history(self, acts: np.ndarray, clear: np.ndarray) -> None:
        """The compiled step with each sub-env's history (``clear``: its episode starts here), which also
        writes the action features when they are wanted (fresh each step: the caller owns them)."""
        v = self.variant
        self._action_features = (self._features.new_action_features() if self.action_features
                                 else self._no_action_features)
        history.step_batch(self._batch(), v.spec, v.actions, acts, self.history.tables,
                           self._recording(clear, self._action_features), self.no_revisit)

    def _batch(self) -> Batch:
        """The arrays the compiled step writes, as they are now (``codes`` and ``masks`` are fresh each step)."""
        return Batch(self.states, self.masks, self.codes, self.gained, self.revealed, self.n_legal, self.found)

    def _recording(self, clear: np.ndarray, act_out: np.ndarray) -> Recording:
        return Recording(clear, self.revisit, self.n_rules, self.seen, act_out)

    def _observe(self, codes: np.ndarray, info: dict, stepped: bool = True) -> Any:
        """The observation of every sub-env (``codes``: the caller's copy); the action features go into
        it when it is a ``Dict``, else into ``info``. ``stepped``: the action features are those
        :meth:`_step_history` wrote for the current positions."""
        computed = None
        if self._features is not None:
            given = self._action_features if stepped and self.action_features else None
            computed = self._features.compute(self.states, self.codes, self.masks, self.seen, given)
            if self.action_features and self.obs_mode not in DICT_MODES:
                info["action_features"] = computed["action_features"]
        return self._encoder(codes, self.masks, computed)

    def _history_info(self, info: dict) -> None:
        if self.track_revisits:
            info["revisit"] = self.revisit.copy()
        if self.no_revisit:
            info["stuck"] = (self.n_legal == 0) & (self.n_rules > 0)

    def _info(self, illegal: np.ndarray, move: np.ndarray) -> dict:
        info = {
            "action_mask": self.masks.copy(),
            "foundation_cards": self.found.copy(),
            "is_won": self.found == self.variant.n_cards,
            "illegal_action": illegal,
            "move": move,
            "deal_seed": self.deal_seeds,  # -1 for a sub-env set to a given state
        }
        self._history_info(info)
        return info


class RankAndFileVectorEnv(SolitaireVectorEnv):
    variant = RANK_AND_FILE


class NumberTenVectorEnv(SolitaireVectorEnv):
    variant = NUMBER_TEN


class RainbowVectorEnv(SolitaireVectorEnv):
    variant = RAINBOW


class FreeCellVectorEnv(SolitaireVectorEnv):
    """``FreeCell-v0``'s batched env; ``cells`` as in :class:`~solitaire_env.envs.freecell.FreeCellEnv`."""

    variant = FREECELL

    def __init__(self, num_envs: int = 1, cells: int = 4, **kwargs: Any) -> None:
        self.variant = freecell_variant(cells)
        super().__init__(num_envs, **kwargs)


class KlondikeVectorEnv(SolitaireVectorEnv):
    """``Klondike-v0``'s batched env; ``draw`` and ``redeals`` as in
    :class:`~solitaire_env.envs.klondike.KlondikeEnv`."""

    variant = KLONDIKE

    def __init__(self, num_envs: int = 1, draw: int = 1, redeals: int | None = None, **kwargs: Any) -> None:
        self.variant = klondike_variant(draw, redeals)
        super().__init__(num_envs, **kwargs)
