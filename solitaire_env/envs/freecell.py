"""``FreeCell-v0``: FreeCell, one deck dealt face up to eight piles, four free cells, Microsoft's deals."""

from __future__ import annotations

from typing import Any

from solitaire_env.engine.games import FREECELL, freecell_variant
from solitaire_env.envs.base import SolitaireEnv


class FreeCellEnv(SolitaireEnv):
    """FreeCell: build four foundations up in suit from Ace to King, with four free cells to help.

    Rules: ``docs/rules.md`` and :mod:`solitaire_env.engine.games.freecell`. All 52 cards are dealt face
    up to eight piles (7, 7, 7, 7, 6, 6, 6, 6); there is no stock. Piles build down in alternating
    colours; an empty pile takes any card or run. A free cell holds one card. A run moves as a unit when
    the free cells and empty piles would let it move card by card: at most (free cells + 1) * 2 ** (empty
    piles other than the target) cards.

    ## Deals

    ``reset(seed=n)`` deals Microsoft FreeCell's deal ``n`` (0 .. 2**31 - 1; a larger seed is refused),
    the numbering FreeCell players and solvers publish results by. The splits (``deals=``) are those of
    every game, on Microsoft's numbers: test deals 0-9,999, validation 10,000-19,999, train
    20,000 .. 2**31 - 1. A ``reset()`` without a seed or set draws a deal from 0 .. 2**31 - 1.

    ## Action space

    ``Discrete(216)``. Piles are numbered 0-7, cells 0-3; foundation slot, empty pile and free cell are
    the canonical ones (the lowest that takes the card).

    | id              | move                                                            |
    |-----------------|-----------------------------------------------------------------|
    | c               | cell c -> foundation (c = 0..3)                                 |
    | 4 + 8c + j      | cell c -> tableau pile j (not empty)                            |
    | 36 + c          | cell c -> lowest empty pile                                     |
    | 40 + i          | top of tableau pile i -> foundation                             |
    | 48 + 7i + jj    | run from pile i -> onto pile j (jj = j, or j - 1 if j > i); the |
    |                 | count is the one that fits                                      |
    | 104 + 13i + k-1 | top k cards of pile i -> lowest empty pile (k = 1..13, not the  |
    |                 | whole pile)                                                     |
    | 208 + i         | top of tableau pile i -> lowest free cell                       |

    ## Observation

    Default ``obs_mode="codes"``: ``MultiDiscrete`` of 168 ``int16`` entries; card codes as in
    :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv` (1..52 a card, 0 nothing; no card is ever
    hidden in FreeCell).

    | entries  | field       | values                                         |
    |----------|-------------|------------------------------------------------|
    | 0-159    | tableau     | pile p, position k (bottom first) at 20p + k   |
    | 160-163  | foundations | top card of each slot, 0 if empty              |
    | 164-167  | cells       | the card in each free cell, 0 if free          |

    ``obs_mode="dict"`` (the three fields, and ``action_mask``), ``"onehot"`` and ``"piles"``, and
    ``action_features``, as in Rank and File.

    ## Rewards, episode end, info

    As in :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`; the cards to win are all 52 (the
    return of a won episode is 1.0); ``terminated`` when all 52 cards are on the foundations or no
    legal move is left; registered ``max_episode_steps`` 1000. ``track_revisits`` flags a return to a
    seen position; ``no_revisit`` masks every move back to one: between piles, into an empty pile, and
    between a free cell and the tableau. Which free cell holds which card does not matter to a position.

    ## Arguments

    ``cells=4``: the number of free cells, 1-8 (Microsoft's deals in every case). The action kinds keep
    their order with ``cells`` ids for each per-cell kind (``Discrete(10 * cells + 176)``), the
    observation has ``cells`` cell entries, and the run limit counts the cells there are. The JSON name
    of a position says the count (``freecell_3cells``; ``freecell`` for four). Every other argument is
    as in :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`.

    ## Version History

    * v0: first version (Microsoft deals, 1-8 free cells, four by default).
    """

    variant = FREECELL

    def __init__(self, cells: int = 4, **kwargs: Any) -> None:
        self.variant = freecell_variant(cells)  # checked before anything is built
        super().__init__(**kwargs)
