"""Klondike positions lost because some cards can never move (docs/solver.md, "Klondike: cards that can
never move").

A card leaves its place only at the head of a run: home, onto a card of the next rank and other colour
(its *parents*), or, a King, into an empty pile. A set of cards each of which has a lower card of its
own suit and both parents lying under cards of the set, and can be carried by no run from below (it is
face down, a pile's first face-up card, or lies on a card of the set), never moves: the position is lost.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.position import KING, builds_on
from solitaire_env.engine.variant import O_DOWN, O_LEN, O_TAB, SP_CAP, SP_PILES

_jit = njit(cache=True, nogil=True)


@_jit
def _buried(c: int, pile, index, highest) -> bool:
    """Card ``c`` lies in the tableau under a member of the set (``highest``: each pile's highest member)."""
    return pile[c] >= 0 and index[c] < highest[pile[c]]


@_jit
def stuck(s, sp) -> bool:
    """Whether some tableau cards can never move (Klondike's rules): the largest set of cards that meets
    the module doc's conditions, found by dropping cards that fail them until none does, is not empty."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    pile = np.full(52, -1, dtype=np.int8)
    index = np.zeros(52, dtype=np.int8)
    for p in range(piles):
        for k in range(s[sp[O_LEN] + p]):
            c = s[sp[O_TAB] + p * cap + k]
            pile[c], index[c] = p, k
    member = np.zeros(52, dtype=np.bool_)
    for c in range(52):
        member[c] = pile[c] >= 0 and c % 13 != KING
    highest = np.zeros(piles, dtype=np.int8)  # per pile, the highest member: what lies under it is buried
    changed = True
    while changed:
        changed = False
        highest[:] = -1
        for c in range(52):
            if member[c] and index[c] > highest[pile[c]]:
                highest[pile[c]] = index[c]
        for y in range(52):
            if not member[y]:
                continue
            p, i, rank, suit = pile[y], index[y], y % 13, y // 13
            keep = i <= s[sp[O_DOWN] + p] or member[s[sp[O_TAB] + p * cap + i - 1]]
            if keep:  # a lower card of its suit is buried: it cannot go home
                keep = False
                for r in range(rank):
                    if _buried(suit * 13 + r, pile, index, highest):
                        keep = True
                        break
            if keep:  # both parents are buried: it cannot go onto a pile
                for t in range(4):
                    q = t * 13 + rank + 1
                    if builds_on(y, q, False) and not _buried(q, pile, index, highest):
                        keep = False
            if not keep:
                member[y] = False
                changed = True
    return member.any()


# Compiled code here holds position.py's code and variant.py's constants: a cache built from other sources
# is dropped.
drop_stale_cache(__name__)

__all__ = ["stuck"]
