"""The one interface every agent implements: :class:`Agent`.

An agent plays one env through its observations: :meth:`Agent.reset` at the start of every episode,
then :meth:`Agent.act` once per step with the observation and the ``info`` dict the env returned
(``info["action_mask"]`` is the ``int8`` mask of legal actions). Agents only ever see what the env
shows a player; none reads the engine's hidden state.
"""

from __future__ import annotations

from typing import Any


class Agent:
    """Base class of all agents. Subclasses set :attr:`name` and implement :meth:`act`."""

    name: str = "agent"
    # The env options the agent plays with, beyond the caller's (its observation, say: {"obs_mode": "piles",
    # "action_features": True}); solitaire_env.tools.evaluation builds its env with them. Empty: any env.
    env_kwargs: dict = {}

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; ``seed`` seeds any randomness the agent uses (``None``: leave it as it is)."""

    def act(self, observation: Any, info: dict) -> int:
        """The action id to play in this position; always one with ``info["action_mask"][id] == 1``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


__all__ = ["Agent"]
