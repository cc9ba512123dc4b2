"""The games, each a :class:`~solitaire_env.engine.variant.Variant` in a module of its own."""

from solitaire_env.engine.games.freecell import FREECELL, OTHER_CELL_COUNTS, freecell_variant
from solitaire_env.engine.games.klondike import KLONDIKE, OTHER_RULE_SETS, klondike_variant
from solitaire_env.engine.games.number_ten import NUMBER_TEN
from solitaire_env.engine.games.rainbow import RAINBOW
from solitaire_env.engine.games.rank_and_file import RANK_AND_FILE
from solitaire_env.engine.variant import Variant

VARIANTS: dict[str, Variant] = {v.name: v for v in (RANK_AND_FILE, NUMBER_TEN, RAINBOW, FREECELL, KLONDIKE)}

# Variants of the games above by an env option (FreeCell-v0's cells, Klondike-v0's draw and redeals), known
# by name to the state JSON: name -> (the game, the env options that make it).
_OPTIONS: dict[str, tuple[Variant, dict]] = {
    **{v.name: (FREECELL, {"cells": cells}) for cells, v in OTHER_CELL_COUNTS.items()},
    **{v.name: (KLONDIKE, {"draw": draw, "redeals": redeals}) for (draw, redeals), v in OTHER_RULE_SETS.items()},
}
OPTION_VARIANTS: dict[str, Variant] = {
    **{v.name: v for v in OTHER_CELL_COUNTS.values()}, **{v.name: v for v in OTHER_RULE_SETS.values()},
}


def game_options(variant: Variant) -> tuple[Variant, dict]:
    """The game a variant is played in and the env options that make it: ``(FREECELL, {"cells": 3})``
    for ``freecell_3cells``, ``(KLONDIKE, {"draw": 3, "redeals": None})`` for ``klondike_draw3``,
    ``(variant, {})`` for one of :data:`VARIANTS`."""
    return _OPTIONS.get(variant.name, (variant, {}))


def get_variant(name: str | Variant) -> Variant:
    """Look a variant up by its state-JSON name (a game's, or one of :data:`OPTION_VARIANTS`); raises
    ``ValueError`` listing the games."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name] if name in VARIANTS else OPTION_VARIANTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown variant {name!r}; known variants: {', '.join(VARIANTS)} (and FreeCell's "
                         f"other cell counts, freecell_1cells .. freecell_8cells, and Klondike's other rules, "
                         f"klondike_draw3, klondike_redeals2, klondike_draw3_redeals0, ...)") from None


__all__ = [
    "FREECELL", "KLONDIKE", "NUMBER_TEN", "OPTION_VARIANTS", "RAINBOW", "RANK_AND_FILE", "VARIANTS",
    "freecell_variant", "game_options", "get_variant", "klondike_variant",
]
