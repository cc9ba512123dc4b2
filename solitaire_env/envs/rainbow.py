"""``Rainbow-v0``: Rainbow, one deck, a reserve, four piles, wrapping builds and two redeals."""

from __future__ import annotations

from solitaire_env.engine.games import RAINBOW
from solitaire_env.envs.base import SolitaireEnv


class RainbowEnv(SolitaireEnv):
    """Rainbow: build four foundations up in suit from the base rank, wrapping King to Ace.

    Rules: ``docs/rules.md`` and :mod:`solitaire_env.engine.games.rainbow`. The first card dealt starts
    the first foundation and fixes the base rank. Piles build down in alternating colours, wrapping;
    only whole piles move between piles; an emptied pile is refilled from the reserve at once, and
    once the reserve is gone only by choice from the waste. Two redeals.

    ## Action space

    ``Discrete(29)``. Piles are numbered 0-3; foundation slot and empty pile are the canonical ones.

    | id            | move                                                      |
    |---------------|-----------------------------------------------------------|
    | 0             | draw: stock -> waste                                      |
    | 1             | redeal: waste turned over -> stock                        |
    | 2             | waste -> foundation                                       |
    | 3 + j         | waste -> tableau pile j (j = 0..3, not empty)             |
    | 7             | waste -> lowest empty pile (only once the reserve is out) |
    | 8             | reserve -> foundation                                     |
    | 9 + j         | reserve -> tableau pile j                                 |
    | 13 + i        | top of tableau pile i -> foundation                       |
    | 17 + 3i + jj  | whole pile i -> onto pile j (jj = j, or j - 1 if j > i)  |

    ## Observation

    Default ``obs_mode="codes"``: ``MultiDiscrete`` of 296 ``int16`` entries; card codes as in
    :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv` (1..52 a card, 53 unseen, 0 nothing).

    | entries  | field        | values                                                          |
    |----------|--------------|-----------------------------------------------------------------|
    | 0-207    | tableau      | pile p, position k (bottom first) at 52p + k                    |
    | 208-241  | waste        | the whole waste, bottom first                                   |
    | 242-245  | foundations  | top card of each slot, 0 if empty                               |
    | 246      | stock_size   | 0-34                                                            |
    | 247-280  | stock        | bottom first: 53 while unseen; after a redeal the stock is the  |
    |          |              | turned waste, which the player has seen, so its cards are shown |
    | 281      | redeals_left | 0-2                                                             |
    | 282-294  | reserve      | bottom first: 53 face down, the face-up top card, 0 nothing     |
    | 295      | base_rank    | 0-12 (Ace = 0)                                                  |

    ``obs_mode="dict"``, ``"onehot"`` and ``"piles"``, and ``action_features``, as in Rank and File
    (the one-hot has 15,835 values; ``"piles"`` has ``cards`` of ``(289, 10)``: 208 tableau, 34 waste,
    34 stock and 13 reserve slots, ``piles`` ``(4, 5)``, ``foundations`` ``(4, 3)``; the action
    features are ``(29, 11)``; ``info["action_mask"]`` is ``(29,)``).

    ## Rewards, episode end, info, arguments, deals, version history

    As in :class:`~solitaire_env.envs.rank_and_file.RankAndFileEnv`; the cards to win are the 51
    not dealt to the foundation (the return of a won episode is 1.0); ``terminated`` when all 52
    cards are on the foundations or no legal move (redeals included) is left; registered
    ``max_episode_steps`` 1000. ``track_revisits`` and ``no_revisit`` work as there, but in Rainbow no
    legal move leads back to a seen position (a move between piles leaves one pile fewer for good), so
    the no-revisit mask never removes a move and only an illegal action is a revisit.
    """

    variant = RAINBOW
