"""Moves played without branching, and positions given up without searching.

A *safe* foundation move (nothing could ever be built on the card in the tableau) is played at once:
docs/solver.md, "A safe move can never hurt" (and, where foundation cards may come back,
"Klondike: safe moves when foundation cards come back"). A *deadlocked* Rainbow position (a card
under a card of its own suit that its foundation needs later) can never be won (docs/solver.md, "Rainbow: dead ends").
"""

from __future__ import annotations

from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_FOUNDATION,
    FOUNDATION_TO_TABLEAU,
    O_BASE,
    O_CELLS,
    O_FCNT,
    O_FSUIT,
    O_LEN,
    O_TAB,
    RESERVE_TO_FOUNDATION,
    SP_CAP,
    SP_CELLS,
    SP_FOUND,
    SP_NCARDS,
    SP_PILES,
    SP_WHOLE,
    SP_WRAP,
    TABLEAU_TO_FOUNDATION,
    WASTE_TO_FOUNDATION,
)

_jit = njit(cache=True, nogil=True)


@_jit
def is_safe(s, sp, card: int) -> bool:
    """True if ``card`` can go to the foundations and nothing could ever be built on it in the tableau.

    Its foundation position ``p`` (its rank counted from the base rank) is 0 in a game that does not
    wrap (nothing goes on the lowest card), or every copy of position ``p - 1`` in the other colour is
    already on the foundations (only those could be built on it, and foundation cards never come back).
    Where foundation cards may come back (Klondike), position ``p >= 2`` also needs every copy of
    position ``p - 2`` in its own colour home: then every card that could ever lie on ``c`` in the
    tableau, and on those in turn, is of a position and colour whose cards are all home (docs/solver.md,
    "Klondike: safe moves when foundation cards come back").
    """
    if core.foundation_for(s, sp, card) < 0:
        return False
    base = s[sp[O_BASE]]
    p = (card % 13 - base) % 13
    if p == 0:
        return sp[SP_WRAP] == 0
    decks = sp[SP_NCARDS] // 52
    red = core.is_red(card)
    below = 0  # copies of position p - 1 in the other colour already on the foundations
    for f in range(sp[SP_FOUND]):
        suit = s[sp[O_FSUIT] + f]
        n = s[sp[O_FCNT] + f]
        if n >= p and core.is_red(suit * 13) != red:
            below += 1
    if below < 2 * decks:
        return False
    if p < 2 or sp[A_FIRST + FOUNDATION_TO_TABLEAU] < 0:
        return True
    same = 0  # copies of position p - 2 in its own colour on the foundations (its own suit's among them)
    for f in range(sp[SP_FOUND]):
        if s[sp[O_FCNT] + f] >= p - 1 and core.is_red(s[sp[O_FSUIT] + f] * 13) == red:
            same += 1
    return same >= 2 * decks


@_jit
def safe_action(s, sp, waste) -> int:
    """The first safe foundation move here, looking at the waste (if ``waste``), the reserve, the free
    cells and the piles in that order; -1 if there is none."""
    card = core.waste_top(s, sp) if waste else -1
    if card >= 0 and is_safe(s, sp, card):
        return sp[A_FIRST + WASTE_TO_FOUNDATION]
    if sp[A_FIRST + RESERVE_TO_FOUNDATION] >= 0:
        card = core.reserve_top(s, sp)
        if card >= 0 and is_safe(s, sp, card):
            return sp[A_FIRST + RESERVE_TO_FOUNDATION]
    for c in range(sp[SP_CELLS]):
        card = s[sp[O_CELLS] + c]
        if card >= 0 and is_safe(s, sp, card):
            return sp[A_FIRST + CELL_TO_FOUNDATION] + c
    for p in range(sp[SP_PILES]):
        card = core.top_card(s, sp, p)
        if card >= 0 and is_safe(s, sp, card):
            return sp[A_FIRST + TABLEAU_TO_FOUNDATION] + p
    return -1


@_jit
def play_safe_moves(s, sp, actions, record, n_record, waste) -> int:
    """Play safe foundation moves (:func:`is_safe`: from the waste, reserve, free cells and piles) in ``s``
    until none is left; return the new ``n_record``.

    Their action ids are written to ``record`` from index ``n_record`` on (it needs room for one per
    card of the game). ``waste``: consider the waste's top card too (the solver leaves it to the search
    under stock dominance, see :func:`~solitaire_env.solver.dominance.insert_dominant`, and with several
    cards a draw, where taking it out would change what later draws turn up). Which moves are
    safe depends only on cards a player sees, so an agent can use this on any guess of the hidden cards.
    """
    a = safe_action(s, sp, waste)
    while a >= 0:
        core.apply_action(s, sp, actions, a)
        record[n_record] = a
        n_record += 1
        a = safe_action(s, sp, waste)
    return n_record


@_jit
def deadlocked(s, sp) -> bool:
    """A pile that can never be cleared, in games where piles never split (Rainbow).

    There a tableau card leaves its pile only from the top, to a foundation (moving the whole pile
    onto another keeps the order, and tableau cards never go into an empty pile). So a card lying
    under a card of its own suit that the foundation needs *later* can never get out in time: the
    position is lost, whatever else happens. (A general cycle test over "must come first" relations
    across piles was tried: it cut few more positions and cost more than it saved.)
    """
    if sp[SP_WHOLE] == 0:
        return False
    base, cap = s[sp[O_BASE]], sp[SP_CAP]
    for p in range(sp[SP_PILES]):
        n = s[sp[O_LEN] + p]
        start = sp[O_TAB] + p * cap
        for i in range(n - 2):
            low = s[start + i]
            pos = (low % 13 - base) % 13
            for j in range(i + 2, n, 2):  # runs alternate colours: same suit only at even distance
                high = s[start + j]
                if high // 13 == low // 13 and (high % 13 - base) % 13 > pos:
                    return True
    return False


# Compiled code here holds the core's code and variant.py's constants: a cache built from other sources
# is dropped.
drop_stale_cache(__name__)

__all__ = ["deadlocked", "is_safe", "play_safe_moves", "safe_action"]
