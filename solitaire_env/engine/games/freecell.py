"""FreeCell: one deck dealt face up to eight piles, four free cells, no stock.

Rules (``docs/rules.md``): the deal is Microsoft FreeCell's of the same number
(:mod:`~solitaire_env.engine.ms_deals`): 7, 7, 7, 7, 6, 6, 6, 6 cards, all face up. Four foundations
build up in suit from Ace to King. Piles build down in alternating colours; an empty pile takes any
card or run. Each free cell holds one card, which may go to a foundation or a pile. A run moves as a
unit when it could be moved card by card through the free cells and empty piles: at most
(free cells + 1) * 2 ** (empty piles other than the target) cards. Won with all 52 cards on the
foundations; lost when no move is left.
"""

from dataclasses import replace

from solitaire_env.engine.ms_deals import COLUMNS, DEAL_LIMIT
from solitaire_env.engine.variant import Variant

CELL_COUNTS = range(1, 9)  # FreeCell with fewer or more free cells than four (FreeCell-v0's ``cells``)

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

# One variant per cell count, made once (an env checks a state's variant by identity). The JSON name
# says the count, so a saved position names its game.
OTHER_CELL_COUNTS = {
    cells: replace(FREECELL, name=f"freecell_{cells}cells", title=f"FreeCell ({cells} cells)", cells=cells)
    for cells in CELL_COUNTS if cells != FREECELL.cells
}


def freecell_variant(cells: int = 4) -> Variant:
    """FreeCell with ``cells`` free cells (1-8; the standard game has 4); ``ValueError`` otherwise."""
    if isinstance(cells, bool) or not isinstance(cells, int) or cells not in CELL_COUNTS:
        raise ValueError(f"cells must be an integer from {CELL_COUNTS[0]} to {CELL_COUNTS[-1]}, got {cells!r}")
    return FREECELL if cells == FREECELL.cells else OTHER_CELL_COUNTS[cells]
