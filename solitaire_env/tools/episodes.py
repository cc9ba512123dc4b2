"""One batched episode runner: every deal of an ordered list played once, ``n_envs`` games at a time.

:class:`EpisodeRunner` serves everything that plays whole games in the batched env
(:class:`~solitaire_env.envs.vector.SolitaireVectorEnv`): :func:`solitaire_env.tools.evaluation.evaluate`'s
greedy policies, :func:`solitaire_env.tools.imitation.play` (teacher and student games, for cloning,
DAgger and the validation of a policy) and the model selection at the end of a training run. Sub-env
``i`` starts at deal ``i`` of the list, then plays deal ``i + n_envs``, and so on, so which game a
sub-env plays never depends on how fast the others finish; sub-envs left without a deal keep
stepping with any legal move until the last game ends. The caller only chooses the moves (one call
per step, for all sub-envs at once) and takes the finished games as they come.

Needs nothing but the envs: whoever chooses the moves brings its own agents or torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from solitaire_env.envs.registration import ENV_IDS


@dataclass
class Turn:
    """What a move chooser sees at one step of the batch."""

    obs: Any  # the batch's observations (an array, or a dict of arrays)
    masks: np.ndarray  # (n_envs, n_actions) bool: the legal moves of each sub-env
    active: np.ndarray  # the sub-envs playing one of the deals (the others are idle)
    game: np.ndarray  # per sub-env: the place in the deal list of the game it plays (>= len(deals): idle)
    step: np.ndarray  # per sub-env: the moves made so far in its game
    venv: Any  # the batched env (for what else it exposes, e.g. its ``codes``)


@dataclass
class Episode:
    """One finished game."""

    index: int  # its place in the deal list
    deal: int
    won: bool
    foundation_cards: int
    length: int
    truncated: bool  # cut by the time limit, not ended by the game
    total_return: float
    rewards: list[float] | None = None  # each step's reward, when the runner keeps them


class EpisodeRunner:
    """The batched env of ``env_id`` (with ``env_kwargs``) over ``deals``, ``n_envs`` sub-envs (at most one
    per deal). :meth:`run` plays the games."""

    def __init__(self, env_id: str, deals: Sequence[int], env_kwargs: dict | None = None, n_envs: int = 64) -> None:
        if env_id not in ENV_IDS:
            raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
        if "deals" in (env_kwargs or {}):
            raise ValueError("env_kwargs cannot set 'deals': the runner plays the deals it is given")
        self.deals = deals
        self.n_envs = max(1, min(int(n_envs), len(deals)))
        self.env = gym.make_vec(env_id, num_envs=self.n_envs, deals=deals, **(env_kwargs or {}))
        self.venv = self.env.unwrapped if hasattr(self.env, "unwrapped") else self.env
        self.n_actions = int(self.venv.single_action_space.n)

    def run(self, choose: Callable[[Turn], np.ndarray], on_start: Callable[[int, int], None] | None = None,
            keep_rewards: bool = False, name: str = "agent") -> Iterator[Episode]:
        """Play every deal once, yielding each game as it ends (in the order they end), then close the env.

        ``choose(turn)`` returns one move per sub-env; those of idle sub-envs are replaced by a legal move,
        an illegal one of an active sub-env that has a legal move is a ``RuntimeError`` naming ``name``,
        the deal and the step.
        ``on_start(i, g)``: sub-env ``i`` starts game ``g`` (``g >= len(deals)``: it goes idle), called
        for every sub-env before the first move and after each game. ``keep_rewards``: each
        :class:`Episode` carries its rewards.
        """
        venv, n, deals = self.venv, self.n_envs, self.deals
        try:
            obs, _ = venv.reset(seed=list(range(n)))  # positions 0 .. n-1 of the ordered deal set
            game = np.arange(n)
            if on_start is not None:
                for i in range(n):
                    on_start(i, i)
            length = np.zeros(n, np.int64)
            total = np.zeros(n)
            rewards: list[list[float]] = [[] for _ in range(n)]
            while True:
                active = np.flatnonzero(game < len(deals))
                if not len(active):
                    break
                masks = venv.masks.astype(bool)
                acts = np.asarray(choose(Turn(obs, masks, active, game, length, venv)), dtype=np.int64)
                is_active = game < len(deals)
                for i in np.flatnonzero(~masks[np.arange(n), acts] | ~is_active):
                    if is_active[i] and masks[i].any():
                        raise RuntimeError(f"agent {name!r} played illegal action {acts[i]} on deal "
                                           f"{deals[game[i]]}, step {length[i]}")
                    if not is_active[i]:  # an idle sub-env: any legal move
                        legal = np.flatnonzero(masks[i])
                        acts[i] = legal[0] if len(legal) else 0
                obs, reward, terminated, truncated, info = venv.step(acts)
                length += 1
                total += reward
                if keep_rewards:
                    for i in active:
                        rewards[i].append(float(reward[i]))
                done = np.flatnonzero(terminated | truncated)
                for i in done:
                    g = int(game[i])
                    if g < len(deals):
                        yield Episode(g, int(deals[g]), bool(info["is_won"][i]), int(info["foundation_cards"][i]),
                                      int(length[i]), bool(truncated[i] and not terminated[i]), float(total[i]),
                                      rewards[i] if keep_rewards else None)
                    game[i] += n
                    length[i], total[i], rewards[i] = 0, 0.0, []
                    if on_start is not None:
                        on_start(int(i), int(game[i]))
                if len(done):
                    obs = venv.reset_envs(done)
        finally:
            self.env.close()


__all__ = ["Episode", "EpisodeRunner", "Turn"]
