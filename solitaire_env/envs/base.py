"""What the Gymnasium envs share: :class:`SolitaireEnv`.

Each game's env (``rank_and_file.py``, ``number_ten.py``, ``rainbow.py``, ``freecell.py``, ``klondike.py``)
is this class with a variant and a docstring of its own; the rules are in
:mod:`solitaire_env.engine.core`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from solitaire_env.engine import batched, core, features
from solitaire_env.engine.deals import DealSchedule, DealSet, deal_set
from solitaire_env.engine.game import Game
from solitaire_env.engine.history import History
from solitaire_env.engine.moves import Move
from solitaire_env.engine.state import check_seed
from solitaire_env.engine.variant import Variant, observation_fields
from solitaire_env.envs.reward import Reward

OBS_MODES = ("codes", "dict", "onehot", "piles")
DICT_MODES = ("dict", "piles")  # the observations that are a Dict, and so hold the action features
RESET_OPTIONS = ("state",)
# int16, not int8: Gymnasium stores MultiDiscrete.nvec in the space dtype and SB3 sums it.
OBS_DTYPE = np.int16
ILLEGAL_MODES = ("penalize", "raise")


def observation_nvec(variant: Variant) -> np.ndarray:
    """Number of values of each entry of the flat ``codes`` observation."""
    nvec = np.zeros(variant.obs_size, dtype=np.int64)
    for field, n in observation_fields(variant).values():
        nvec[field] = n
    return nvec


def observation_space(variant: Variant, obs_mode: str, action_features: bool = False) -> spaces.Space:
    nvec = observation_nvec(variant)
    if obs_mode == "codes":
        return spaces.MultiDiscrete(nvec, dtype=OBS_DTYPE)
    if obs_mode == "onehot":
        return spaces.Box(0.0, 1.0, shape=(int(nvec.sum()),), dtype=np.float32)
    fields: dict[str, spaces.Space]
    if obs_mode == "piles":
        highs = features.highs(variant)
        fields = {key: spaces.Box(0, highs[key], dtype=np.int16 if key == "summary" else np.int8)
                  for key in features.PILES_KEYS}
    else:
        fields = {name: spaces.MultiDiscrete(nvec[field], dtype=OBS_DTYPE)
                  for name, (field, _) in observation_fields(variant).items()}
    fields["action_mask"] = spaces.Box(0, 1, shape=(variant.n_actions,), dtype=np.int8)
    if action_features:
        fields["action_features"] = action_features_space(variant)
    return spaces.Dict(fields)


def action_features_space(variant: Variant) -> spaces.Box:
    high = np.broadcast_to(features.action_highs(variant), (variant.n_actions, len(features.ACTION_FEATURES)))
    return spaces.Box(0, high.copy(), dtype=np.int8)


class ObservationEncoder:
    """Turns the engine's flat code vector (and the mask) into the chosen observation convention."""

    def __init__(self, variant: Variant, obs_mode: str) -> None:
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {', '.join(OBS_MODES)}, got {obs_mode!r}")
        self.mode = obs_mode
        self.fields = observation_fields(variant)
        nvec = observation_nvec(variant)
        self.onehot_offsets = np.concatenate(([0], np.cumsum(nvec)[:-1]))
        self.onehot_size = int(nvec.sum())

    def __call__(self, codes: np.ndarray, mask: np.ndarray, computed: dict | None = None) -> Any:
        """``codes`` and ``mask`` may carry a leading batch dimension. ``computed``: the arrays of
        :class:`~solitaire_env.engine.features.FeatureArrays`, owned by the caller from here on (the ``piles``
        arrays, and the action features, which a ``Dict`` observation holds)."""
        if self.mode == "codes":
            return codes
        if self.mode == "onehot":
            out = np.zeros(codes.shape[:-1] + (self.onehot_size,), dtype=np.float32)
            np.put_along_axis(out, self.onehot_offsets + codes.astype(np.int64), 1.0, axis=-1)
            return out
        if self.mode == "piles":
            obs = {key: computed[key] for key in features.PILES_KEYS}
        else:
            obs = {name: codes[..., field].copy() for name, (field, _) in self.fields.items()}
        obs["action_mask"] = mask.copy()
        if computed is not None and "action_features" in computed:
            obs["action_features"] = computed["action_features"]
        return obs


def check_action(action: Any, n: int) -> int:
    """``action`` as an ``int`` in ``0 .. n-1``; ``ValueError`` naming what is wrong with it.

    Takes what Gymnasium's ``Discrete`` takes (a Python or numpy integer, a 0-d integer array) and a
    0-d integer tensor of any array library with ``.item()`` (torch, jax).
    """
    shape = getattr(action, "shape", None)
    if shape is not None and not isinstance(action, np.generic):
        if tuple(shape) != ():
            raise ValueError(f"action must be one integer, got an array of shape {tuple(shape)}")
        dtype = getattr(action, "dtype", None)
        action = action.item()
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"action must be an integer, got a 0-d array of dtype {dtype}")
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        got = "None" if action is None else f"a {type(action).__name__} ({action!r})"
        raise ValueError(f"action must be an integer of Discrete({n}), got {got}")
    if not 0 <= action < n:
        raise ValueError(f"action {action} is outside the action space Discrete({n}): ids are 0 .. {n - 1}")
    return int(action)


def set_env_options(env: Any, render_mode: str | None, obs_mode: str, illegal_action: str, illegal_penalty: float,
                    win_bonus: float, step_penalty: float, reveal_bonus: float, ansi_color: bool,
                    track_revisits: bool = False, no_revisit: bool = False, action_features: bool = False) -> None:
    """Check the arguments the single and the vector env share, and set them on ``env``."""
    for name, value in (("track_revisits", track_revisits), ("no_revisit", no_revisit),
                        ("action_features", action_features)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    modes = env.metadata["render_modes"]
    if render_mode is not None and render_mode not in modes:
        window = ": there is no window; 'ansi' gives text, 'rgb_array' frames to show" if render_mode == "human" else ""
        raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}{window}")
    if illegal_action not in ILLEGAL_MODES:
        raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_MODES)}, got {illegal_action!r}")
    env.reward_fn = Reward(illegal_penalty=illegal_penalty, win_bonus=win_bonus, step_penalty=step_penalty,
                           reveal_bonus=reveal_bonus)
    env._encoder = ObservationEncoder(env.variant, obs_mode)  # checks obs_mode
    env.render_mode, env.obs_mode, env.illegal_action = render_mode, obs_mode, illegal_action
    env.ansi_color = bool(ansi_color)
    env.no_revisit = bool(no_revisit)
    env.action_features = bool(action_features)
    # The mask and the action features' "seen" column need the positions seen.
    env.track_revisits = bool(track_revisits or no_revisit or action_features)


class SolitaireEnv(gym.Env):
    """Shared implementation; see the per-game subclasses for the documentation tables."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    variant: Variant

    def __init__(
        self,
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
    ) -> None:
        set_env_options(self, render_mode=render_mode, obs_mode=obs_mode, illegal_action=illegal_action,
                        illegal_penalty=illegal_penalty, win_bonus=win_bonus, step_penalty=step_penalty,
                        reveal_bonus=reveal_bonus, ansi_color=ansi_color, track_revisits=track_revisits,
                        no_revisit=no_revisit, action_features=action_features)
        self.deals: DealSet | None = deal_set(deals, self.variant.deal_limit)
        self._schedule = DealSchedule(self.deals, limit=self.variant.deal_limit)
        v = self.variant
        self.observation_space = observation_space(v, obs_mode, action_features and obs_mode in DICT_MODES)
        self.action_space = spaces.Discrete(v.n_actions)
        self.game = Game(v, seed=0)
        self.deal_seed = 0  # -1 for a position given by set_state or reset(options={"state": ...})
        self._codes = np.zeros(v.obs_size, dtype=OBS_DTYPE)
        self._mask = np.zeros(v.n_actions, dtype=np.int8)
        self._work = core._scratch(v.spec)  # the legal mask's work space, kept: reset and step share one kernel
        self._n_legal = 0
        self._n_rules = 0  # legal moves by the rules alone (the mask may hold fewer with no_revisit)
        self._revisit = False
        self._history = History(v, 1) if self.track_revisits else None
        self._seen = np.zeros((1, v.n_actions if action_features else 0), dtype=np.int8)
        self._features = (features.FeatureArrays(v, 1, obs_mode == "piles", self.action_features)
                          if obs_mode == "piles" or self.action_features else None)
        self._to_win = v.n_cards
        self._computed: dict | None = None  # the last observation's feature arrays
        self._started = False  # the game above is a placeholder until the first reset or set_state

    # --- Gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        game = self.check_reset_options(options)  # before anything changes
        if seed is not None and self.deals is None:
            check_seed(seed, self.variant)  # the deal number: FreeCell's stop at Microsoft's last
        super().reset(seed=seed)
        if game is not None:
            self.game, self.deal_seed = game, -1
            return self._start()
        self.deal_seed = self._schedule.next(seed, self.np_random)
        self.game = Game(self.variant, seed=self.deal_seed)
        return self._start()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._check_action(action)
        game, v = self.game, self.variant
        illegal = not self._mask[a]
        gained = revealed = 0
        if illegal:
            if self.illegal_action == "raise":
                raise ValueError(f"action {a} is not legal here: {game.decode(a)}")
        else:
            gained, revealed, self._n_legal, _ = batched.step_one(
                game.state, v.spec, v.actions, a, self._mask, self._codes, self._work
            )
            self._n_rules = self._n_legal
        if self._history is not None:
            if illegal:  # the mask again as the rules give it, to record the unchanged position as seen again
                self._n_legal = self._n_rules = core.legal_mask(game.state, v.spec, v.actions, self._mask)
            self._record(clear=False)
        won = game.foundation_cards == v.n_cards
        reward = self.reward_fn(gained, self._to_win, revealed, illegal, won)
        terminated = won or self._n_legal == 0
        obs = self._observation()  # (before the info, which may hold the action features)
        return obs, float(reward), bool(terminated), False, self._info(illegal, -1 if illegal else a)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return self.game.render_text(color=self.ansi_color)
        if self.render_mode == "rgb_array":
            from solitaire_env.envs.render import render_rgb

            return render_rgb(self.game.get_state())
        return None

    # --- engine access ------------------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """Legal actions as ``bool``: the method sb3-contrib's MaskablePPO calls."""
        return self._mask.astype(bool)

    def decode_action(self, action: int) -> Move:
        return self.game.decode(action)

    def encode_action(self, move: Move) -> int:
        return self.game.encode(move)

    def get_state(self) -> dict:
        """The full position as the JSON of ``docs/state_format.md`` (hidden cards included: not an observation)."""
        return self.game.get_state()

    def set_state(self, state: dict) -> tuple[Any, dict]:
        """Continue from a JSON position; returns ``(obs, info)``. Invalid: ``ValueError``, nothing changes."""
        self.game, self.deal_seed = self.check_state(state), -1
        return self._start()

    def check_state(self, state: dict) -> Game:
        """The :class:`Game` of a JSON position of this env's game; ``ValueError`` naming the problem."""
        game = Game.from_state(state)
        if game.variant is not self.variant:
            raise ValueError(f"state is a {game.variant.title} position, but this env plays {self.variant.title}")
        return game

    def check_reset_options(self, options: dict | None) -> Game | None:
        """Validate ``reset``'s options without changing anything: the game of ``options["state"]``, if any.

        ``reset`` calls this before it changes anything, so a bad option leaves the game as it was. But
        ``gym.make``'s ``TimeLimit`` zeroes its step count before it passes ``reset`` on, so under it a
        failed reset still restarts the time limit. Call ``env.unwrapped.check_reset_options(options)``
        (or ``check_state``) first to validate without touching anything.
        """
        if options is None:
            return None
        if not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; the only option is 'state'")
        return self.check_state(options["state"]) if "state" in options else None

    # --- internals ----------------------------------------------------------------------------

    def _start(self) -> tuple[Any, dict]:
        self._started = True
        v, s = self.variant, self.game.state
        # The step's kernel with no move: a fresh process then compiles one kernel for reset and step
        # (a cold first use spent about a second more compiling separate ones).
        _, _, self._n_legal, _ = batched.step_one(s, v.spec, v.actions, -1, self._mask, self._codes, self._work)
        self._n_rules = self._n_legal
        if self._history is not None:
            self._record(clear=True)
        self._to_win = max(v.n_cards - self.game.foundation_cards, 1)
        obs = self._observation()
        return obs, self._info(False, -1)

    def _check_action(self, action: Any) -> int:
        return check_action(action, self.variant.n_actions)

    def _observation(self) -> Any:
        self._computed = None
        if self._features is not None:
            computed = self._features.compute(self.game.state[None], self._codes[None], self._mask[None], self._seen)
            self._computed = {key: array[0] for key, array in computed.items()}
        return self._encoder(self._codes.copy(), self._mask, self._computed)

    def _record(self, clear: bool) -> None:
        """Record the position in the episode's history; with ``no_revisit`` also mask moves back."""
        self._revisit, self._n_legal = self._history.record(0, self.game.state, self._codes, self._mask,
                                                            self._n_legal, clear, self.no_revisit, self._seen[0])

    def _info(self, illegal: bool, move: int) -> dict:
        """The info of every reset and step: the same keys and types each time (the env docstring's table)."""
        n = self.game.foundation_cards
        info = {"action_mask": self._mask.copy(), "foundation_cards": int(n), "is_won": bool(n == self.variant.n_cards),
                "illegal_action": bool(illegal), "move": int(move), "deal_seed": int(self.deal_seed)}
        if self.action_features and self.obs_mode not in DICT_MODES:
            info["action_features"] = self._computed["action_features"]
        if self.track_revisits:
            info["revisit"] = bool(self._revisit)
        if self.no_revisit:
            info["stuck"] = bool(self._n_legal == 0 < self._n_rules)
        return info

