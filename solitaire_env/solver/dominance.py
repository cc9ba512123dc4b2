"""Positions that cover others: more redeals left, or the stock dealt less far (docs/solver.md, "Stock
dominance").

:func:`insert_undominated` skips a position when the same one with more redeals left is stored (used
with stock macros); :func:`insert_dominant` ranks positions that differ only in where the stock has got
to (stock dominance), keeping the best rank stored for each layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    O_NRES,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RESDOWN,
    O_STOCK,
    O_WASTE,
    SP_DRAW,
    SP_REDEALS,
)
from solitaire_env.solver.hashing import PRIME, key_parts, mix, redeals_key, table_has, table_insert, with_redeals

_jit = njit(cache=True, nogil=True)


@_jit
def insert_undominated(table, s, sp) -> bool:
    """Store the position and return True, unless it or the same position with more redeals left is stored.

    More redeals left is never worse (a redeal is never forced), so a stored position with more of them
    covers this one: whatever wins from here wins from there by the same moves.
    """
    total, h = key_parts(s, sp)
    r = redeals_key(s, sp)  # unlimited redeals: 0, and no count above it
    for more in range(r + 1, sp[SP_REDEALS] + 1):
        if table_has(table, with_redeals(total, h, more)):
            return False
    return table_insert(table, with_redeals(total, h, r)) == 1


@_jit
def layout_key(s, sp) -> np.uint64:
    """The key of everything but where the stock has got to: the stock and waste as one sequence
    (waste from its bottom, then the stock from its top), without the redeals left (never 0)."""
    total, _ = key_parts(s, sp)
    n, w = s[sp[O_NSTOCK]], s[sp[O_NWASTE]]
    h = np.uint64(n + w + 1)
    for k in range(w):
        h = h * PRIME + np.uint64(s[sp[O_WASTE] + k] + 1)
    for k in range(n - 1, -1, -1):
        h = h * PRIME + np.uint64(s[sp[O_STOCK] + k] + 1)
    h = h * PRIME + np.uint64(s[sp[O_NRES]] * 64 + s[sp[O_RESDOWN]] + 1)
    key = mix(total ^ mix(h))
    return key if key != 0 else np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _insert_ranked(table, best, key, rank: int) -> int:
    """Store ``key`` with ``rank`` unless it is stored with a rank at least as good: 0 (covered), 1 (new),
    2 (a better rank replaces the stored one). ``best`` holds the rank stored beside each key."""
    mask = np.uint64(table.shape[0] - 1)
    i = key & mask
    while table[i] != 0:
        if table[i] == key:
            if best[i] >= rank:
                return 0
            best[i] = rank
            return 2
        i = (i + np.uint64(1)) & mask
    table[i] = key
    best[i] = rank
    return 1


@_jit
def insert_dominant(table, best, s, sp) -> int:
    """Stock dominance: 0 if a position at least as good is stored, else store this one (1: new, 2: better).

    Positions that differ only in where the stock has got to are ranked: more redeals left is better,
    and with as many, fewer cards dealt to the waste (the one can deal on to where the other is, or
    redeal and deal to anywhere). ``best`` holds the best rank stored for each layout key.
    """
    rank = s[sp[O_REDEALS]] * 128 + 127 - s[sp[O_NWASTE]]
    key = layout_key(s, sp)
    return _insert_ranked(table, best, key, rank)


@_jit
def insert_cycle_dominant(table, best, s, sp) -> int:
    """Stock dominance with unlimited redeals (Klondike): :func:`insert_dominant`'s answers, on another order.

    The stock and waste are one sequence with a cut where the waste ends (``draw`` cards a step). A cut
    that is a multiple of ``draw``, or the end, is reached from every cut (deal to the end, redeal, deal
    on): those are one class, all equal, and covered by a stored position of any other class. Any other
    cut is reached only by dealing on from a smaller cut of the same remainder in this pass: one class per
    remainder, the smaller cut better. The table keeps a key per layout and class, and the best rank
    stored for it (docs/solver.md, "Klondike: the stock").
    """
    draw, cut = sp[SP_DRAW], s[sp[O_NWASTE]]
    total = cut + s[sp[O_NSTOCK]]
    layout = layout_key(s, sp)
    if cut % draw == 0 or cut == total:
        for other in range(1, draw):
            if table_has(table, _class_key(layout, other)):
                return 0  # a position of another class reaches every cut of this one
        cls, rank = 0, 127
    else:
        cls, rank = cut % draw, 127 - cut
    return _insert_ranked(table, best, _class_key(layout, cls), rank)


@njit(cache=True, nogil=True, inline="always")
def _class_key(layout, cls: int) -> np.uint64:
    """The table key of a layout's stock class (:func:`insert_cycle_dominant`); never 0."""
    key = mix(layout + np.uint64(cls) * PRIME)
    return key if key != 0 else np.uint64(1)


# Compiled code here holds the hashing module's code and variant.py's constants: a cache built from
# other sources is dropped.
drop_stale_cache(__name__)

__all__ = ["insert_cycle_dominant", "insert_dominant", "insert_undominated", "layout_key"]
