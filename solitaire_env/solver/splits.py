"""Klondike's split moves that need not be searched (docs/design.md, "Klondike: a split move is searched
only when the card it uncovers is used at once").

A *split* moves part of a pile's face-up run onto another pile: run ``R`` headed by card ``x`` leaves
card ``u`` (face up) for card ``y`` of the same rank and colour as ``u``. Nothing is turned up and no pile
empties; the only new thing is that ``u`` is uncovered. Any winning line can play each split just before
``u`` is used (``u`` goes home, or ``x``'s twin, the other card of its rank and colour, goes onto ``u``),
so a split is searched only where one of the two could follow at once.
"""

from __future__ import annotations

from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    O_DOWN,
    O_FCNT,
    O_FSUIT,
    O_LEN,
    SP_CELLS,
    SP_FOUND,
    SP_KINGS_ONLY,
    SP_NCARDS,
    SP_PILES,
    TABLEAU_TO_TABLEAU,
)

_jit = njit(cache=True, nogil=True)


@_jit
def splits_pruned(sp) -> bool:
    """Whether the game's rules are those the proof reads: one deck, only Kings into empty piles, any
    face-up run moving as a unit, no free cells (Klondike)."""
    return sp[SP_KINGS_ONLY] != 0 and sp[SP_NCARDS] == 52 and sp[SP_CELLS] == 0


@_jit
def twin(card: int) -> int:
    """The other card of the same rank and colour (clubs and spades, diamonds and hearts)."""
    return (3 - card // 13) * 13 + card % 13


@_jit
def can_come(s, sp, card: int) -> bool:
    """Whether ``card`` could be played now or after stock steps: it is not face down in a pile, and if it
    is on a foundation it is the top card there."""
    for p in range(sp[SP_PILES]):
        for k in range(s[sp[O_DOWN] + p]):
            if core.pile_card(s, sp, p, k) == card:
                return False
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        if n > 0 and s[sp[O_FSUIT] + f] == card // 13:
            return n <= card % 13 + 1  # home and under the top card: it cannot come back
    return True


@_jit
def useless_split(s, sp, actions, a: int) -> bool:
    """Whether legal action ``a`` is a split whose uncovered card could not be used at once: it cannot go
    home, and the twin of the moved run's head cannot come onto it."""
    if actions[a, 0] != TABLEAU_TO_TABLEAU:
        return False
    src = actions[a, 1]
    count = core.resolve(s, sp, actions, a)[1]
    n, down = s[sp[O_LEN] + src], s[sp[O_DOWN] + src]
    if count >= n - down:
        return False  # the whole face-up part moves: a card turns up, or the pile empties
    under = core.pile_card(s, sp, src, n - count - 1)
    if core.foundation_for(s, sp, under) >= 0:
        return False
    return not can_come(s, sp, twin(core.pile_card(s, sp, src, n - count)))


# Compiled code here holds the core's code and variant.py's constants: a cache built from other sources is
# dropped.
drop_stale_cache(__name__)

__all__ = ["can_come", "splits_pruned", "twin", "useless_split"]
