"""Klondike: one deck, seven piles of 0-6 face-down cards under one face-up card, a stock turned one or
three cards at a time.

Rules (``docs/rules.md``): four foundations build up in suit from Ace to King, and a foundation's top
card may come back onto the tableau. Piles build down in alternating colours; any face-up card with the
run on it moves as a unit; an empty pile takes only a King, or a run headed by one. The stock turns one
card (draw 1) or three (draw 3; fewer when fewer are left) onto the waste, whose top card alone is
playable; the waste may be turned over into a new stock without limit (``redeals``: a number limits it).
Face-down cards turn up as soon as they are uncovered. Won with all 52 cards on the foundations.

The default game is draw 1 with unlimited redeals; :func:`klondike_variant` makes the others, each a
variant of its own with its own JSON name (``klondike_draw3``, ``klondike_redeals2``,
``klondike_draw3_redeals0``), made once.
"""

from dataclasses import replace

from solitaire_env.engine.variant import Variant

DRAWS = (1, 3)
REDEAL_COUNTS = range(0, 10)  # limited redeals Klondike-v0 offers besides unlimited (None)

KLONDIKE = Variant(
    name="klondike",
    title="Klondike",
    decks=1,
    piles=7,
    deal_down=(0, 1, 2, 3, 4, 5, 6),
    deal_up=1,
    foundations=4,
    redeals=None,
    draw=1,
    kings_to_empty=True,
    foundation_to_tableau=True,
    pile_capacity=19,  # 6 face down, then a King down to an Ace
    max_episode_steps=1000,
)


def _name(draw: int, redeals: int | None) -> str:
    return "klondike" + (f"_draw{draw}" if draw != 1 else "") + ("" if redeals is None else f"_redeals{redeals}")


def _title(draw: int, redeals: int | None) -> str:
    passes = "unlimited redeals" if redeals is None else f"{redeals} redeal{'s' if redeals != 1 else ''}"
    return f"Klondike (draw {draw}, {passes})"


# Every rule set of the options, made once (an env checks a state's variant by identity).
OTHER_RULE_SETS = {
    (draw, redeals): replace(KLONDIKE, name=_name(draw, redeals), title=_title(draw, redeals), draw=draw,
                             redeals=redeals)
    for draw in DRAWS for redeals in (None, *REDEAL_COUNTS) if (draw, redeals) != (1, None)
}


def klondike_variant(draw: int = 1, redeals: int | None = None) -> Variant:
    """Klondike turning ``draw`` cards (1 or 3) with ``redeals`` redeals (``None``: unlimited, or 0-9);
    ``ValueError`` otherwise."""
    if isinstance(draw, bool) or draw not in DRAWS:
        raise ValueError(f"draw must be 1 or 3, got {draw!r}")
    if redeals is not None and (isinstance(redeals, bool) or not isinstance(redeals, int)
                                or redeals not in REDEAL_COUNTS):
        raise ValueError(f"redeals must be None (unlimited) or an integer from {REDEAL_COUNTS[0]} to "
                         f"{REDEAL_COUNTS[-1]}, got {redeals!r}")
    return KLONDIKE if (draw, redeals) == (1, None) else OTHER_RULE_SETS[(draw, redeals)]
