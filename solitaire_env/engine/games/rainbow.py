"""Rainbow: one deck, a 13-card reserve, four piles, wrapping builds and two redeals.

Rules (``docs/rules.md``): the first card dealt goes to the first foundation and fixes the base rank;
four foundations start from the base rank (any suit, which then belongs to the pile) and build up in
suit, wrapping King to Ace, to 13 cards. The reserve has 12 cards face down under one face up; four
piles of one card each. Piles build down in alternating colours, wrapping (a black King on a red Ace);
between piles only whole piles move. An emptied pile is refilled at once from the reserve; with the
reserve gone, only the waste's top card may fill it, and only by choice. The stock deals one card at a
time; the waste may be turned over into a new stock twice.
"""

from solitaire_env.engine.variant import Variant

RAINBOW = Variant(
    name="rainbow",
    title="Rainbow",
    decks=1,
    piles=4,
    deal_down=0,
    deal_up=1,
    foundations=4,
    reserve=13,
    base_from_deal=True,
    wrap=True,
    whole_pile_moves=True,
    tableau_to_empty=False,
    auto_fill=True,
    redeals=2,
    pile_capacity=52,  # a wrapping run has no natural bound short of the deck
    max_episode_steps=1000,
)
