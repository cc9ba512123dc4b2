"""The games, each a :class:`~solitaire_env.engine.variant.Variant` in a module of its own."""

from solitaire_env.engine.games.freecell import FREECELL, OTHER_CELL_COUNTS, freecell_variant
from solitaire_env.engine.games.number_ten import NUMBER_TEN
from solitaire_env.engine.games.rainbow import RAINBOW
from solitaire_env.engine.games.rank_and_file import RANK_AND_FILE
from solitaire_env.engine.variant import Variant

VARIANTS: dict[str, Variant] = {v.name: v for v in (RANK_AND_FILE, NUMBER_TEN, RAINBOW, FREECELL)}
# Variants of the games above by an env option (FreeCell-v0's cells), known by name to the state JSON.
OPTION_VARIANTS: dict[str, Variant] = {v.name: v for v in OTHER_CELL_COUNTS.values()}


def game_options(variant: Variant) -> tuple[Variant, dict]:
    """The game a variant is played in and the env options that make it: ``(FREECELL, {"cells": 3})``
    for ``freecell_3cells``, ``(variant, {})`` for one of :data:`VARIANTS`."""
    if variant.name in OPTION_VARIANTS:
        return FREECELL, {"cells": variant.cells}
    return variant, {}


def get_variant(name: str | Variant) -> Variant:
    """Look a variant up by its state-JSON name (a game's, or one of :data:`OPTION_VARIANTS`); raises
    ``ValueError`` listing the games."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name] if name in VARIANTS else OPTION_VARIANTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown variant {name!r}; known variants: {', '.join(VARIANTS)} "
                         f"(and FreeCell's other cell counts, freecell_1cells .. freecell_8cells)") from None


__all__ = [
    "FREECELL", "NUMBER_TEN", "OPTION_VARIANTS", "RAINBOW", "RANK_AND_FILE", "VARIANTS", "freecell_variant",
    "game_options", "get_variant",
]
