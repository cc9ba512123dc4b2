""":class:`RandomAgent`: uniform over the legal actions, seeded."""

from __future__ import annotations

from typing import Any

import numpy as np

from solitaire_env.agents.base import Agent


class RandomAgent(Agent):
    """Plays a legal action chosen uniformly at random.

    ``RandomAgent(seed)`` and ``reset(seed)`` seed its generator (numpy PCG64), so a seeded run repeats
    exactly; ``reset()`` without a seed keeps the generator's stream going.
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, observation: Any, info: dict) -> int:
        legal = np.flatnonzero(info["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in this position (the episode is over)")
        return int(legal[self._rng.integers(legal.size)])


__all__ = ["RandomAgent"]
