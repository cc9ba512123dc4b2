"""The games, each a :class:`~solitaire_env.engine.variant.Variant` in a module of its own."""

from solitaire_env.engine.games.freecell import FREECELL
from solitaire_env.engine.games.number_ten import NUMBER_TEN
from solitaire_env.engine.games.rainbow import RAINBOW
from solitaire_env.engine.games.rank_and_file import RANK_AND_FILE
from solitaire_env.engine.variant import Variant

VARIANTS: dict[str, Variant] = {v.name: v for v in (RANK_AND_FILE, NUMBER_TEN, RAINBOW, FREECELL)}


def get_variant(name: str | Variant) -> Variant:
    """Look a variant up by its state-JSON name; raises ``ValueError`` listing the known ones."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown variant {name!r}; known variants: {', '.join(VARIANTS)}") from None


__all__ = ["FREECELL", "NUMBER_TEN", "RAINBOW", "RANK_AND_FILE", "VARIANTS", "get_variant"]
