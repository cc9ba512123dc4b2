"""Position keys and the transposition table (docs/solver.md, "Canonical keys and collisions").

A key is 64 bits; the table is open addressing over a ``uint64`` array whose empty slots hold 0 (no
key is 0). Tableau piles and foundations are hashed one by one and their hashes *added*, so positions
that differ only in the order of piles share a key. In Klondike a pile is hashed by its face-down cards
and its first face-up card only: where the other face-up cards lie changes nothing a search can win
(docs/solver.md, "Klondike: face-up runs left out of the key, ...").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.hashing import mix
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    O_DOWN,
    O_FCNT,
    O_FSUIT,
    O_LEN,
    O_NRES,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RESDOWN,
    O_STOCK,
    O_TAB,
    O_WASTE,
    SP_CAP,
    SP_FOUND,
    SP_PILES,
    SP_REDEALS,
    UNLIMITED,
)
from solitaire_env.solver.splits import splits_pruned

_jit = njit(cache=True, nogil=True)

PRIME = np.uint64(0x100000001B3)


@_jit
def state_key(s, sp) -> np.uint64:
    """The position's canonical 64-bit key: piles and foundations hashed as sets (never 0). Free cells are
    left out: the piles and foundations fix which cards they hold (docs/solver.md, "FreeCell: keys...");
    so is the stock-seen mark of unlimited redeals (:func:`redeals_key`)."""
    total, h = key_parts(s, sp)
    return with_redeals(total, h, redeals_key(s, sp))


@_jit
def redeals_key(s, sp) -> int:
    """The redeals left, as the key counts them: 0 where redeals are unlimited, whose state slot records
    only whether the stock has been seen, which no rule reads (and the solver knows every card)."""
    return 0 if sp[SP_REDEALS] == UNLIMITED else s[sp[O_REDEALS]]


@_jit
def with_redeals(total, h, redeals: int) -> np.uint64:
    """The key from its parts (see :func:`state_key`) and the redeals left, which come last."""
    key = mix(total ^ mix(h * PRIME + np.uint64(redeals + 1)))
    return key if key != 0 else np.uint64(1)


@_jit
def key_parts(s, sp):
    """``state_key`` without the redeals: (pile and foundation sum, the rest), to try other counts cheaply."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    bases_only = splits_pruned(sp)
    total = np.uint64(0)
    for p in range(piles):
        n, down = s[sp[O_LEN] + p], s[sp[O_DOWN] + p]
        if bases_only:
            n = min(n, down + 1)  # Klondike: the face-up cards above the first are left out (see the doc)
        h = np.uint64(n * 64 + down + 1)
        base = sp[O_TAB] + p * cap
        for k in range(n):
            h = h * PRIME + np.uint64(s[base + k] + 1)
        total += mix(h)
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        suit = s[sp[O_FSUIT] + f] if n > 0 else 0
        total += mix(np.uint64(0x5000 + suit * 16 + n))
    # Stock, waste and reserve: positional.
    h = np.uint64(s[sp[O_NSTOCK]] + 1)
    for k in range(s[sp[O_NSTOCK]]):
        h = h * PRIME + np.uint64(s[sp[O_STOCK] + k] + 1)
    h = h * PRIME + np.uint64(s[sp[O_NWASTE]] + 7)
    for k in range(s[sp[O_NWASTE]]):
        h = h * PRIME + np.uint64(s[sp[O_WASTE] + k] + 1)
    h = h * PRIME + np.uint64(s[sp[O_NRES]] * 64 + s[sp[O_RESDOWN]] + 1)
    return total, h


@_jit
def table_insert(table, key) -> int:
    """1 if ``key`` was new (now stored), 0 if it was there already."""
    mask = np.uint64(table.shape[0] - 1)
    i = key & mask
    while table[i] != 0:
        if table[i] == key:
            return 0
        i = (i + np.uint64(1)) & mask
    table[i] = key
    return 1


@_jit
def table_has(table, key) -> bool:
    """Whether ``key`` is stored."""
    mask = np.uint64(table.shape[0] - 1)
    i = key & mask
    while table[i] != 0:
        if table[i] == key:
            return True
        i = (i + np.uint64(1)) & mask
    return False


# Compiled code here holds variant.py's constants: a cache built from other sources is dropped.
drop_stale_cache(__name__)

__all__ = ["PRIME", "key_parts", "mix", "redeals_key", "state_key", "table_has", "table_insert", "with_redeals"]
