"""``Klondike-v0``: Klondike, one deck, seven piles of 0-6 face-down cards under one face-up card, draw 1 or 3."""

from __future__ import annotations

from typing import Any

from solitaire_env.engine.games import KLONDIKE, klondike_variant
from solitaire_env.envs.base import SolitaireEnv


class KlondikeEnv(SolitaireEnv):
    """Klondike: build four foundations up in suit from Ace to King.

    Rules: ``docs/rules.md`` and :mod:`solitaire_env.engine.games.klondike`. Seven piles are dealt 1 to 7
    cards, all face down but the top one; the other 24 cards are the stock. Piles build down in
    alternating colours; any face-up card moves with the run on it; an empty pile takes only a King, or
    a run headed by one. The stock turns one card (``draw=1``) or three (``draw=3``; fewer when fewer are
    left) onto the waste, whose top card alone is playable; the waste turns over into a new stock without
    limit (``redeals=None``) or ``redeals`` times. A foundation's top card may come back onto the tableau.
    Face-down cards turn up as soon as they are uncovered.

    ## Deals

    ``reset(seed=n)`` deals deal ``n`` of the project's own shuffle (as for Rank and File; the same deal
    in every rule set). The splits (``deals=``) are those of every game: test deals 0-9,999, validation
    10,000-19,999, train 20,000 and up.

    ## Action space

    ``Discrete(183)`` (``Discrete(182)`` with ``redeals=0``: no redeal id, and every later id one lower).
    Piles are numbered 0-6, foundation slots 0-3; which foundation slot, which empty pile and how many
    cards a tableau-to-tableau move takes are decided by the position (the canonical move of
    ``docs/rules.md``); ``env.unwrapped.decode_action(a)`` shows an id's move.

    | id              | move                                                            |
    |-----------------|-----------------------------------------------------------------|
    | 0               | draw: stock -> waste (1 card, or up to 3 with ``draw=3``)       |
    | 1               | redeal: waste -> stock (once the stock is empty)                |
    | 2               | waste -> foundation (lowest accepting slot)                     |
    | 3 + j           | waste -> tableau pile j (j = 0..6, not empty)                   |
    | 10              | waste -> lowest empty pile (a King)                             |
    | 11 + i          | top of tableau pile i -> foundation                             |
    | 18 + 6i + jj    | tableau pile i -> pile j: the one run that fits there           |
    | 60 + 13i + k-1  | top k cards (k = 1..13) of pile i -> lowest empty pile (a run   |
    |                 | headed by a King, not the whole pile)                           |
    | 151 + 7f + j    | top card of foundation slot f -> tableau pile j (not empty)     |
    | 179 + f         | top card of foundation slot f -> lowest empty pile (a King)     |

    (``jj`` is ``j``, or ``j - 1`` when ``j > i``.) Only one ``k`` of a pile can be legal at a time (a
    packed run holds at most one King); the ids keep the layout every game shares.

    ## Observation

    Default ``obs_mode="codes"``: ``MultiDiscrete`` of 186 ``int16`` entries. A card code is
    ``suit*13 + rank + 1`` (1..52; suits c d h s, rank 0 = Ace), 53 is a card the player cannot see,
    0 is nothing.

    | entries  | field       | values                                                           |
    |----------|-------------|------------------------------------------------------------------|
    | 0-132    | tableau     | pile p, position k (bottom first) at 19p + k: 0 / card / 53      |
    | 133-156  | waste       | the whole waste, bottom first (every card was seen): 0 / card    |
    | 157-160  | foundations | top card of each slot, 0 if empty                                |
    | 161      | stock_size  | cards in the stock, 0-24                                         |
    | 162-185  | stock       | the stock, bottom first: 53 each until the waste has been turned |
    |          |             | over once, then the cards (the player has seen them all)         |

    With counted redeals (``redeals`` 1-9) one more entry, ``redeals_left``, follows (0 .. ``redeals``).
    With draw 3 the three cards of a draw are laid out fanned, so the player sees each card turned: after
    a pass the whole stock is known. ``obs_mode="dict"`` (these fields and ``action_mask``),
    ``"onehot"`` and ``"piles"``, and ``action_features``, are as in
    :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`; the features give a foundation's card
    coming back the ``from`` code of a foundation (:mod:`solitaire_env.engine.features`).

    ## Rewards

    As in :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`, over 52 cards: a card moved to a
    foundation earns 1/52 of the cards not home at the start, and a card taken back from a foundation
    costs the same, so a won episode still returns 1.0.

    ## Episode end

    ``terminated``: all 52 cards on the foundations, or no legal move left (with ``no_revisit``: no move
    left that the mask allows, ``info["stuck"]``). With unlimited redeals the stock can always be turned
    over again, so a lost game rarely runs out of moves: ``truncated`` after ``max_episode_steps``
    (registered default 1000) ends it, as ``no_revisit`` can.

    ## Info, positions seen

    As in :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv` (``info`` keys and types,
    ``track_revisits`` and ``no_revisit``).

    ## Arguments

    ``draw=1``: cards a draw turns, 1 or 3. ``redeals=None``: times the waste may be turned over into a
    new stock, ``None`` for no limit, or 0-9. Each rule set is a variant of its own (the JSON name of a
    position says it: ``klondike``, ``klondike_draw3``, ``klondike_redeals2``, ``klondike_draw3_redeals0``;
    a game with unlimited redeals writes ``"redeals_left": null`` and ``"stock_seen"``). Every other
    argument is as in :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`.

    ## Version History

    * v0: first version (draw 1 or 3, unlimited or counted redeals, Kings only into empty piles,
      foundation cards may come back).
    """

    variant = KLONDIKE

    def __init__(self, draw: int = 1, redeals: int | None = None, **kwargs: Any) -> None:
        self.variant = klondike_variant(draw, redeals)  # checked before anything is built
        super().__init__(**kwargs)
