"""The reward, one function for the single and the batched env: :class:`Reward`.

A step's reward is the share of the cards still to win that it moved to the foundations, plus the
optional shaping terms below. The same function serves one step (numbers) and N steps (arrays), so
the two envs cannot drift apart.

| term            | added when                                   |
|-----------------|----------------------------------------------|
| cards / to_win  | always (``to_win``: cards off the foundations at the episode's start; a won episode sums to 1.0) |
| reveal_bonus    | per face-down card the move turned up        |
| -step_penalty   | every step                                   |
| -illegal_penalty| the action was not legal (nothing moved)     |
| win_bonus       | the step won the game                        |
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Reward:
    """The reward's coefficients; calling it computes a step's reward (``ValueError`` on a bad coefficient)."""

    illegal_penalty: float = 0.01
    win_bonus: float = 0.0
    step_penalty: float = 0.0
    reveal_bonus: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
                    or not np.isfinite(value):
                raise ValueError(f"{f.name} must be a finite number, got {value!r}")
            object.__setattr__(self, f.name, float(value))

    def __call__(self, gained: Any, to_win: Any, revealed: Any, illegal: Any, won: Any) -> Any:
        """The reward of one step (numbers) or of N steps (arrays): ``gained`` cards moved to the
        foundations, ``revealed`` cards turned up, ``illegal`` / ``won`` as bools."""
        reward = gained / to_win
        # Terms whose coefficient is 0 are left out: adding 0.0 changes no value, and it saves time.
        if self.reveal_bonus:
            reward = reward + self.reveal_bonus * revealed
        if self.step_penalty:
            reward = reward - self.step_penalty
        if self.illegal_penalty:
            reward = reward - self.illegal_penalty * illegal
        if self.win_bonus:
            reward = reward + self.win_bonus * np.logical_and(won, np.logical_not(illegal))
        return reward
