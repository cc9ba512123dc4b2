"""Rank and File (also Dress Parade, Ten Little Indians): two decks, ten piles of 3 down and 1 up.

Rules (``docs/rules.md``): eight foundations built up in suit from Ace to King, either pile of a suit
taking the next card; tableau built down in alternating colours without wrapping; the top card or any
packed run (or its top part) moves as a unit; an empty pile takes any card or run and is never filled
automatically; the stock deals one card at a time to the waste, with no redeal; face-down cards turn
up as soon as they are uncovered. Won with all 104 cards on the foundations, lost when no move is left.
"""

from solitaire_env.engine.variant import Variant

RANK_AND_FILE = Variant(
    name="rank_and_file",
    title="Rank and File",
    decks=2,
    piles=10,
    deal_down=3,
    deal_up=1,
    foundations=8,
    pile_capacity=16,  # 3 face down + a King-to-Ace run
    max_episode_steps=2000,
)
