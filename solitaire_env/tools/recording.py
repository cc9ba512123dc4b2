"""Episode recordings: a small JSON file that replays an episode exactly (``docs/recordings.md``).

>>> rec = Recorder()
>>> obs, info = env.reset(seed=7)
>>> rec.start("Rainbow-v0", env.unwrapped.get_state(), seed=7, agent="random")
>>> obs, reward, terminated, truncated, info = env.step(action)
>>> rec.add(action, reward)
>>> rec.save("episode.json")
>>> states = replay_states(load_recording("episode.json"))   # one state dict per step, start first

A recording holds the start position (hidden cards included), the action ids and the rewards the env
gave; replaying the actions from the start position through a fresh env must give the same rewards,
so a file that does not belong to its env is caught (:func:`replay_states` raises ``ValueError``).
"""

from __future__ import annotations

import json
import math
import operator
import os
from typing import Any

from solitaire_env.engine.game import Game
from solitaire_env.engine.games import OPTION_VARIANTS, game_options
from solitaire_env.envs.registration import ENV_IDS

FORMAT = "solitaire-env-recording"
VERSION = 1
# The env arguments that change rewards; a recording keeps those it was made with (default: none).
REWARD_KWARGS = ("win_bonus", "step_penalty", "reveal_bonus", "illegal_penalty")
_KEYS = ("format", "version", "env_id", "variant", "seed", "start_state", "actions", "rewards", "agent",
         "final_foundation_cards")


def _variant_of(env_id: Any):
    if not isinstance(env_id, str) or env_id not in ENV_IDS:
        raise ValueError(f"unknown env_id {env_id!r}; known: {', '.join(ENV_IDS)}")
    return ENV_IDS[env_id][1]


def _start_game(env_id: str, start_state: Any) -> Game:
    variant = _variant_of(env_id)
    try:
        game = Game.from_state(start_state)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"start_state is not a valid position: {exc}") from None
    if game_options(game.variant)[0] is not variant:  # (FreeCell-v0 plays every cell count)
        raise ValueError(f"start_state is a {game.variant.title} position, but {env_id} plays {variant.title}")
    return game


def _check_reward_kwargs(kwargs: Any) -> dict:
    if kwargs is None:
        return {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"env_kwargs must be an object, got {type(kwargs).__name__}")
    unknown = set(kwargs) - set(REWARD_KWARGS)
    if unknown:
        raise ValueError(f"env_kwargs may only hold {', '.join(REWARD_KWARGS)}; got {sorted(unknown)}")
    for key, value in kwargs.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"env_kwargs[{key!r}] must be a finite number, got {value!r}")
    return {k: float(v) for k, v in kwargs.items()}


class Recorder:
    """Records one episode from any loop: :meth:`start`, then :meth:`add` after every step, then :meth:`save`.

    ``add`` checks each action against the position (a recording holds legal moves only), so a wrong
    action is reported where it happens, not when the file is replayed.
    """

    def __init__(self) -> None:
        self._data: dict | None = None
        self._game: Game | None = None

    def start(self, env_id: str, start_state: dict, seed: int | None = None, agent: str | None = None,
              env_kwargs: dict | None = None) -> None:
        """Begin a recording (and forget any earlier one).

        ``start_state``: the position at the start (``env.unwrapped.get_state()`` right after
        ``reset``). ``seed``: the deal number, or None if the episode started from a saved position.
        ``agent``: who played (a name), or None. ``env_kwargs``: the env's reward arguments
        (``win_bonus``, ``step_penalty``, ``reveal_bonus``, ``illegal_penalty``) when not the defaults;
        other env arguments do not change what happens and are left out.
        """
        game = _start_game(env_id, start_state)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        if agent is not None and not isinstance(agent, str):
            agent = getattr(agent, "name", None) or type(agent).__name__
        kwargs = {k: v for k, v in (env_kwargs or {}).items() if k in REWARD_KWARGS}
        self._game = game
        self._data = {
            "format": FORMAT,
            "version": VERSION,
            "env_id": env_id,
            "variant": game.variant.name,
            "seed": seed,
            "start_state": game.get_state(),
            "actions": [],
            "rewards": [],
            "agent": agent,
            "final_foundation_cards": game.foundation_cards,
        }
        kwargs = _check_reward_kwargs(kwargs)
        if kwargs:
            self._data["env_kwargs"] = kwargs

    def _require(self) -> dict:
        if self._data is None:
            raise RuntimeError("call Recorder.start(...) first")
        return self._data

    def add(self, action: Any, reward: float) -> None:
        """Record one step: the action id played and the reward the env returned for it."""
        data = self._require()
        if hasattr(action, "item") and getattr(action, "shape", None) == ():
            action = action.item()
        try:
            a = operator.index(action)
        except TypeError:
            raise ValueError(f"action must be an int action id, got {action!r}") from None
        if isinstance(action, bool):
            raise ValueError(f"action must be an int action id, got {action!r}")
        if not 0 <= a < self._game.variant.n_actions or not self._game.is_legal(a):
            step = len(data["actions"])
            raise ValueError(f"action {a} is not legal at step {step}; a recording holds legal moves only")
        reward = float(reward)
        if not math.isfinite(reward):
            raise ValueError(f"reward must be finite, got {reward!r}")
        self._game.play(a)
        data["actions"].append(a)
        data["rewards"].append(reward)
        data["final_foundation_cards"] = self._game.foundation_cards

    @property
    def steps(self) -> int:
        return len(self._require()["actions"])

    def to_dict(self) -> dict:
        """The recording as a JSON-ready dict (a copy)."""
        return json.loads(json.dumps(self._require()))

    def save(self, path: str | os.PathLike) -> dict:
        """Write the recording to ``path`` as JSON; returns it as a dict."""
        data = self.to_dict()
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")
        return data


def validate_recording(data: Any) -> dict:
    """Check a recording's structure (not yet its moves: :func:`replay_states` does that); returns it."""
    if not isinstance(data, dict):
        raise ValueError(f"a recording is a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ValueError(f"not a solitaire-env recording: 'format' must be {FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise ValueError(f"unsupported recording version {data.get('version')!r}; this reader knows {VERSION}")
    missing = [k for k in _KEYS if k not in data]
    if missing:
        raise ValueError(f"recording lacks {', '.join(missing)}")
    variant = _variant_of(data["env_id"])
    named = OPTION_VARIANTS.get(data["variant"]) if isinstance(data["variant"], str) else None
    if data["variant"] != variant.name and (named is None or game_options(named)[0] is not variant):
        raise ValueError(f"variant {data['variant']!r} does not match env_id {data['env_id']} ({variant.name})")
    seed = data["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or null, got {seed!r}")
    if _start_game(data["env_id"], data["start_state"]).variant.name != data["variant"]:
        raise ValueError(f"variant {data['variant']!r} is not the start_state's")
    actions, rewards = data["actions"], data["rewards"]
    if not isinstance(actions, list) or not isinstance(rewards, list):
        raise ValueError("actions and rewards must be lists")
    if len(actions) != len(rewards):
        raise ValueError(f"{len(actions)} actions but {len(rewards)} rewards: there must be one reward per action")
    for i, a in enumerate(actions):
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < variant.n_actions:
            raise ValueError(f"actions[{i}] = {a!r} is not an action id of {data['env_id']} "
                             f"(0..{variant.n_actions - 1})")
    for i, r in enumerate(rewards):
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r):
            raise ValueError(f"rewards[{i}] = {r!r} is not a finite number")
    if data["agent"] is not None and not isinstance(data["agent"], str):
        raise ValueError(f"agent must be a string or null, got {data['agent']!r}")
    final = data["final_foundation_cards"]
    if isinstance(final, bool) or not isinstance(final, int) or not 0 <= final <= variant.n_cards:
        raise ValueError(f"final_foundation_cards must be an integer 0..{variant.n_cards}, got {final!r}")
    _check_reward_kwargs(data.get("env_kwargs"))
    return data


def load_recording(path: str | os.PathLike) -> dict:
    """Read and check a recording file. ``ValueError`` if it is not a valid recording (missing file:
    ``FileNotFoundError``)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{os.fspath(path)} is not JSON: {exc}") from None
    try:
        return validate_recording(data)
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)}: {exc}") from None


def as_recording(recording: dict | str | os.PathLike) -> dict:
    """A checked recording from a dict or a file path."""
    if isinstance(recording, dict):
        return validate_recording(recording)
    return load_recording(recording)


def make_env(recording: dict):
    """A fresh (unwrapped, no time limit) env of the recording's game (its cell count too, for FreeCell)
    and reward settings."""
    import gymnasium as gym

    _, options = game_options(Game.from_state(recording["start_state"]).variant)
    return gym.make(recording["env_id"], **options, **recording.get("env_kwargs", {})).unwrapped


def replay(recording: dict | str | os.PathLike) -> tuple[list[dict], list]:
    """Replay a recording: (states, moves). ``states[0]`` is the start, ``states[i + 1]`` follows
    ``moves[i]`` (a :class:`~solitaire_env.engine.moves.Move`). ``ValueError`` if the file does not match."""
    rec = as_recording(recording)
    env = make_env(rec)
    _, info = env.reset(options={"state": rec["start_state"]})
    states, moves = [env.get_state()], []
    terminated = False
    for i, (action, recorded) in enumerate(zip(rec["actions"], rec["rewards"], strict=True)):
        if not info["action_mask"][action]:
            if terminated:
                why = "the game was already over"
            else:
                why = f"it is not legal in that position ({env.decode_action(action)})"
            raise ValueError(f"the recording does not match its start: action {action} at step {i}: {why}")
        moves.append(env.decode_action(action))
        _, reward, terminated, _, info = env.step(action)
        if not math.isclose(reward, recorded, rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"the recording does not match its env: step {i} (action {action}) gives reward "
                             f"{reward!r}, the recording says {recorded!r}")
        states.append(env.get_state())
    final = env.game.foundation_cards
    if final != rec["final_foundation_cards"]:
        raise ValueError(f"the replay ends with {final} cards on the foundations, the recording says "
                         f"{rec['final_foundation_cards']}")
    return states, moves


def replay_states(recording: dict | str | os.PathLike) -> list[dict]:
    """The position (``docs/state_format.md``) before the first action and after each one (``len(actions) + 1``)."""
    return replay(recording)[0]


def record_episode(env_id: str, agent: Any = None, seed: int | None = None, start_state: dict | None = None,
                   max_steps: int | None = None, env_kwargs: dict | None = None) -> dict:
    """Play one episode and return its recording (a dict; :func:`save_recording` writes it).

    ``agent``: anything with ``reset(seed)`` and ``act(observation, info)`` (e.g. from ``agents``), or
    None for uniformly random legal moves (seeded by ``seed``). The episode starts from deal ``seed``
    (random if None), or from ``start_state``; it ends when the game does, or after ``max_steps``
    (default: the env's registered limit).
    """
    import gymnasium as gym
    import numpy as np

    wrapped = gym.make(env_id, **(env_kwargs or {}))
    limit = max_steps if max_steps is not None else (wrapped.spec.max_episode_steps or 10**9)
    env = wrapped.unwrapped  # the step limit is ours
    if start_state is not None:
        obs, info = env.reset(options={"state": start_state})
        deal = None
    else:
        obs, info = env.reset(seed=seed)
        deal = info["deal_seed"]
    rec = Recorder()
    name = None if agent is None else (getattr(agent, "name", None) or type(agent).__name__)
    rec.start(env_id, env.unwrapped.get_state(), seed=deal, agent=name or "random", env_kwargs=env_kwargs)
    rng = np.random.default_rng(seed)
    if agent is not None:
        agent.reset(seed=seed)
    for _ in range(limit):
        legal = np.flatnonzero(info["action_mask"])
        if legal.size == 0:
            break
        action = int(agent.act(obs, info)) if agent is not None else int(legal[rng.integers(legal.size)])
        obs, reward, terminated, truncated, info = env.step(action)
        rec.add(action, reward)
        if terminated:
            break
    return rec.to_dict()


def save_recording(recording: dict, path: str | os.PathLike) -> None:
    """Write a recording dict (checked first) to ``path`` as JSON."""
    validate_recording(recording)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(recording, f, separators=(",", ":"))
        f.write("\n")


__all__ = ["FORMAT", "REWARD_KWARGS", "VERSION", "Recorder", "as_recording", "load_recording", "make_env",
           "record_episode", "replay", "replay_states", "save_recording", "validate_recording"]
