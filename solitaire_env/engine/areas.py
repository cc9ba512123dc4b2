"""The legal moves of the areas only some games have, for :func:`solitaire_env.engine.core.legal_mask`:
free cells (FreeCell) and foundation cards coming back to the tableau (Klondike).

Each helper marks its moves in the mask from the pile facts the core's mask has already gathered, and
is compiled into the mask itself (``inline="always"``): as calls, never made in the seed games, such
helpers slowed the seed games' mask by 10-30% (measured; the cause lies in the compiler).
"""

from __future__ import annotations

from numba import njit

from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.position import KING, builds_on, foundation_top
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    O_CELLS,
    SP_CELLS,
    SP_FOUND,
    SP_KINGS_ONLY,
    SP_PILES,
    SP_WRAP,
    TABLEAU_TO_CELL,
)


@njit(cache=True, nogil=True, inline="always")
def cell_moves(s, sp, mask, tops, empty: int, accepts: int) -> int:
    """The mask's part for free cells: their cards to a foundation, onto a pile, into the lowest empty
    pile, and the tableau's face-up tops into the lowest free cell. ``tops`` (each pile's face-up top,
    -1 for none), ``empty`` (the lowest empty pile, -1 for none) and ``accepts`` (a bit per card a
    foundation takes) come from the core's mask; returns the legal moves it marked."""
    piles, wrap, count, free = sp[SP_PILES], sp[SP_WRAP] != 0, 0, 0
    first_f, first_t, first_e = sp[A_FIRST + CELL_TO_FOUNDATION], sp[A_FIRST + CELL_TO_TABLEAU], \
        sp[A_FIRST + CELL_TO_EMPTY]
    for c in range(sp[SP_CELLS]):
        card = s[sp[O_CELLS] + c]
        if card < 0:
            free += 1
            continue
        if (accepts >> card) & 1:
            mask[first_f + c] = 1
            count += 1
        for j in range(piles):
            onto = tops[j]
            if onto >= 0 and builds_on(card, onto, wrap):
                mask[first_t + c * piles + j] = 1
                count += 1
        if empty >= 0:
            mask[first_e + c] = 1
            count += 1
    if free > 0:
        first = sp[A_FIRST + TABLEAU_TO_CELL]
        for i in range(piles):
            if tops[i] >= 0:
                mask[first + i] = 1
                count += 1
    return count


@njit(cache=True, nogil=True, inline="always")
def foundation_moves(s, sp, mask, tops, empty: int) -> int:
    """The mask's part for foundation cards coming back (Klondike): each slot's top card onto a pile it
    builds on, or into the lowest empty pile (a King, where only Kings go there); ``tops`` and
    ``empty`` as in :func:`cell_moves`; returns the legal moves it marked."""
    piles, wrap, count = sp[SP_PILES], sp[SP_WRAP] != 0, 0
    first_t, first_e = sp[A_FIRST + FOUNDATION_TO_TABLEAU], sp[A_FIRST + FOUNDATION_TO_EMPTY]
    for f in range(sp[SP_FOUND]):
        card = foundation_top(s, sp, f)
        if card < 0:
            continue
        for j in range(piles):
            onto = tops[j]
            if onto >= 0 and builds_on(card, onto, wrap):
                mask[first_t + f * piles + j] = 1
                count += 1
        if empty >= 0 and (sp[SP_KINGS_ONLY] == 0 or card % 13 == KING):
            mask[first_e + f] = 1
            count += 1
    return count


# The compiled functions hold variant.py's constants: a cache built from other sources is dropped here.
drop_stale_cache(__name__)
