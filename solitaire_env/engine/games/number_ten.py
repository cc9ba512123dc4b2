"""Number Ten: Rank and File with a different deal, two face-down and two face-up cards per pile.

The two face-up cards are dealt as they come and need not form a run, so a fresh pile's movable run
may be a single card. Everything else is :mod:`~solitaire_env.engine.games.rank_and_file`.
"""

from dataclasses import replace

from solitaire_env.engine.games.rank_and_file import RANK_AND_FILE

NUMBER_TEN = replace(
    RANK_AND_FILE,
    name="number_ten",
    title="Number Ten",
    deal_down=2,
    deal_up=2,
    pile_capacity=16,  # 2 face down + 1 stray face-up card + a King-to-Ace run
)
