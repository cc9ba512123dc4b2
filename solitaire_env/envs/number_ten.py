"""``NumberTen-v0``: Number Ten, Rank and File dealt two down and two up."""

from __future__ import annotations

from solitaire_env.engine.games import NUMBER_TEN
from solitaire_env.envs.base import SolitaireEnv


class NumberTenEnv(SolitaireEnv):
    """Number Ten: Rank and File with each pile dealt two cards face down and two face up.

    Rules: ``docs/rules.md`` and :mod:`solitaire_env.engine.games.number_ten`. The two face-up cards are
    dealt as they come, so a fresh pile's movable run may be a single card.

    Everything else, the action space ``Discrete(243)``, the 233-entry observation, the rewards,
    the episode end (registered ``max_episode_steps`` 2000) and the arguments, is exactly as in
    :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`, whose docstring has the tables.
    """

    variant = NUMBER_TEN
