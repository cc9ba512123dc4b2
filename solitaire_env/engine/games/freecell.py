"""FreeCell: one deck dealt face up to eight piles, four free cells, no stock.

Rules (``docs/rules.md``): the deal is Microsoft FreeCell's of the same number
(:mod:`~solitaire_env.engine.ms_deals`): 7, 7, 7, 7, 6, 6, 6, 6 cards, all face up. Four foundations
build up in suit from Ace to King. Piles build down in alternating colours; an empty pile takes any
card or run. Each free cell holds one card, which may go to a foundation or a pile. A run moves as a
unit when it could be moved card by card through the free cells and empty piles: at most
(free cells + 1) * 2 ** (empty piles other than the target) cards. Won with all 52 cards on the
foundations; lost when no move is left.
"""

from solitaire_env.engine.ms_deals import COLUMNS, DEAL_LIMIT
from solitaire_env.engine.variant import Variant

FREECELL = Variant(
    name="freecell",
    title="FreeCell",
    decks=1,
    piles=COLUMNS,
    deal_down=0,
    deal_up=(7, 7, 7, 7, 6, 6, 6, 6),
    foundations=4,
    cells=4,
    run_limit=True,
    shuffle="microsoft",
    deal_limit=DEAL_LIMIT,
    pile_capacity=20,  # 7 dealt cards, the top one a King, and a Queen-to-Ace run on it: 19
    max_episode_steps=1000,
)
