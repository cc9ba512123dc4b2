"""Position keys: 64-bit hashes of what a player sees (:mod:`solitaire_env.engine.history` says what a
key identifies and how the no-revisit mask uses them), and a position's progress.

A key sums one mixed hash per tableau pile (:func:`pile_sums`), so a pile's part can be taken out and
put back when a move changes it (:func:`moved_key`) without hashing the other piles again. Where the
stock cycles (unlimited redeals, Klondike) the table's key adds one more term, the stock's
(:func:`stock_term`): its size, and whether its cards are shown.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.hashing import mix, nonzero
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.table import ix
from solitaire_env.engine.variant import (
    A_FIRST,
    FOUNDATION_TO_TABLEAU,
    HIDDEN,
    O_DOWN,
    O_FCNT,
    O_LEN,
    O_NRES,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RESDOWN,
    OB_CELLS,
    OB_FOUND,
    OB_SIZE,
    OB_TAB,
    OB_WASTE,
    SP_CAP,
    SP_CELLS,
    SP_FOUND,
    SP_PILES,
    SP_REDEALS,
    UNLIMITED,
    Variant,
)

_jit = njit(cache=True, nogil=True)
_inline = njit(cache=True, nogil=True, inline="always")  # per pile or per move: a call costs more

MAX_PILES, MAX_DEPTH, MAX_OBS = 16, 64, 512
# Fixed random numbers (PCG64's raw stream is the same in every numpy version), so keys are the same
# in every process: an odd multiplier per depth in a pile and per other observation entry, and a
# number per pile for the piles that keep their identity.
_RAW = np.random.PCG64(0x51EE9).random_raw(MAX_DEPTH + MAX_OBS + MAX_PILES).astype(np.uint64)
DEPTH = _RAW[:MAX_DEPTH] | np.uint64(1)
ENTRY = _RAW[MAX_DEPTH : MAX_DEPTH + MAX_OBS] | np.uint64(1)
PILE_SALT = _RAW[MAX_DEPTH + MAX_OBS :]
_TAG_FOUND, _TAG_CELL, _TAG_KEY = np.uint64(0xF0 << 56), np.uint64(0xCE << 56), np.uint64(0x4B << 56)
_TAG_STOCK = np.uint64(0x57 << 56)


def check_fits(variant: Variant) -> None:
    """``ValueError`` if ``variant`` has more piles, deeper piles or a longer observation than the key's
    tables, or both free cells and foundation cards that come back (the table's key would not fix which
    of the cards off the tableau lie in the cells and which on the foundations: see the history's doc)."""
    if variant.piles > MAX_PILES or variant.pile_capacity > MAX_DEPTH or variant.obs_size > MAX_OBS:
        raise ValueError(f"{variant.title} is too large for the position key's tables")
    if variant.cells and variant.foundation_to_tableau:
        raise ValueError(f"{variant.title} has free cells and foundation cards that come back: the position "
                         f"history does not support that")


# --- keys -----------------------------------------------------------------------------------------


@_inline
def rehash_pile(codes, sp, hw, p) -> None:
    """:func:`pile_sums`' two hashes of pile ``p`` alone."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    tab = codes[ix(sp[OB_TAB] + p * cap) : ix(sp[OB_TAB] + (p + 1) * cap)]
    h = np.uint64(0)
    for k in range(cap):
        h += np.uint64(tab[k]) * DEPTH[k]
    if tab[0] == HIDDEN:
        h += PILE_SALT[ix(p)]
    hw[ix(p)] = h
    hw[ix(piles + p)] = mix(h)


@_inline
def pile_sums(codes, sp, hw):
    """Hash each pile's observation codes (``hw[p]``: a linear form, one odd multiplier per depth, so
    it changes by a known amount when a card moves; a pile with face-down cards adds its own number)
    and mix it (``hw[piles + p]``); return the sum of the mixed hashes, whose order does not matter."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    tab = codes[sp[OB_TAB] : sp[OB_TAB] + piles * cap]
    total = np.uint64(0)
    for p in range(piles):
        h = np.uint64(0)
        for k in range(cap):  # every slot, empty ones (code 0) too: no branch, and it vectorizes
            h += np.uint64(tab[p * cap + k]) * DEPTH[k]
        if tab[p * cap] == HIDDEN:
            h += PILE_SALT[p]
        hw[p] = h
        hw[piles + p] = mix(h)
        total += hw[piles + p]
    return total


@_jit
def tableau_key(codes, sp) -> np.uint64:
    """The tableau's part of :func:`position_key` (never 0): the key the table keeps in every game whose
    stock does not cycle (:func:`table_key`). ``codes``: the observation."""
    return nonzero(pile_sums(codes, sp, np.empty(2 * sp[SP_PILES], dtype=np.uint64)))


@_inline
def stock_term(sp, ns, seen):
    """The stock's part of the table key where the stock cycles (unlimited redeals; 0 elsewhere): its
    size ``ns`` and whether its cards are shown (``seen``: the waste has been turned over; an empty
    stock shows nothing either way), all the observation tells of the stock."""
    if sp[SP_REDEALS] != UNLIMITED:
        return np.uint64(0)
    shown = np.int64(1) if seen and ns > 0 else np.int64(0)
    return mix(np.uint64(2 * ns + shown) ^ _TAG_STOCK)


@_inline
def stock_term_of(s, sp):
    """:func:`stock_term` of position ``s``."""
    return stock_term(sp, np.int64(s[sp[O_NSTOCK]]), s[sp[O_REDEALS]] != 0)


@_jit
def table_key(s, codes, sp) -> np.uint64:
    """The key the table keeps (never 0): all that differs between the positions of one stretch. The
    tableau's part of :func:`position_key`, and where the stock cycles the stock's (:func:`stock_term`).
    ``codes``: the observation of ``s``."""
    total = pile_sums(codes, sp, np.empty(2 * sp[SP_PILES], dtype=np.uint64))
    return nonzero(total + stock_term_of(s, sp))


@_jit
def position_key(codes, sp) -> np.uint64:
    """The key of the position whose observation is ``codes`` (see the module doc); never 0."""
    total = pile_sums(codes, sp, np.empty(2 * sp[SP_PILES], dtype=np.uint64))
    found, cells = sp[OB_FOUND], sp[OB_CELLS]
    # Multisets: which slot holds which foundation pile, or which free cell which card, never matters.
    for f in range(found, found + sp[SP_FOUND]):
        total += mix(np.uint64(codes[f]) ^ _TAG_FOUND)
    for c in range(cells, cells + sp[SP_CELLS]):
        total += mix(np.uint64(codes[c]) ^ _TAG_CELL)
    for k in range(sp[OB_WASTE], sp[OB_SIZE]):
        if (k < found or k >= found + sp[SP_FOUND]) and (k < cells or k >= cells + sp[SP_CELLS]):
            total += np.uint64(codes[k]) * ENTRY[k]
    return nonzero(mix(total ^ _TAG_KEY))


@_inline
def progress_with(s, sp, hidden) -> int:
    """:func:`progress`, given the face-down cards on the table (tableau and reserve)."""
    found = np.int64(0)
    if sp[A_FIRST + FOUNDATION_TO_TABLEAU] < 0:  # (where foundation cards come back they are not counted)
        for f in range(sp[SP_FOUND]):
            found += s[sp[O_FCNT] + f]
    stock, redeals, waste = np.int64(s[sp[O_NSTOCK]]), np.int64(s[sp[O_REDEALS]]), np.int64(s[sp[O_NWASTE]])
    if sp[SP_REDEALS] == UNLIMITED:  # the stock cycles: only the stock and waste together shrink for good
        stock, redeals, waste = stock + waste, np.int64(0), np.int64(0)
    return (found | np.int64(hidden) << 8 | stock << 16 | redeals << 24 | waste << 32
            | np.int64(s[sp[O_NRES]]) << 40)


@_inline
def progress(s, sp) -> int:
    """What only ever changes one way in an episode, packed for comparison: cards on the foundations,
    face-down cards, stock size and redeals left, waste size and reserve size. Where foundation cards
    can come back (Klondike) they are left out; where the waste may be turned over without limit, the
    stock and waste count as one (cards leave them for good, but a redeal turns the one into the other
    and the stock-seen flag changes nothing that counts: see the history's doc)."""
    hidden = s[sp[O_RESDOWN]]
    for p in range(sp[SP_PILES]):
        hidden += s[sp[O_DOWN] + p]
    return progress_with(s, sp, hidden)


@_inline
def moved_key(s, codes, sp, src, dst, count, hw, total):
    """The table key after the top ``count`` cards of pile ``src`` go onto pile ``dst``, in order, when
    nothing turns up and nothing refills an emptied pile: only the two piles change."""
    piles, cap, o_len = sp[SP_PILES], sp[SP_CAP], sp[O_LEN]
    m, nj = np.int64(s[ix(o_len + src)]) - count, np.int64(s[ix(o_len + dst)])
    first = sp[OB_TAB] + src * cap + m  # the moved cards' codes, as the observation has them
    hs, hd = hw[ix(src)], hw[ix(dst)]
    for t in range(count):
        code = np.uint64(codes[ix(first + t)])
        hs -= code * DEPTH[ix(m + t)]
        hd += code * DEPTH[ix(nj + t)]
    return nonzero(total - hw[ix(piles + src)] - hw[ix(piles + dst)] + mix(hs) + mix(hd))


@_inline
def placed_key(s, sp, p, code, hw, total):
    """The table key after a card of observation code ``code`` from a free cell goes onto pile ``p``."""
    n = np.int64(s[ix(sp[O_LEN] + p)])
    return nonzero(total - hw[ix(sp[SP_PILES] + p)] + mix(hw[ix(p)] + np.uint64(code) * DEPTH[ix(n)]))


@_inline
def lifted_key(s, codes, sp, p, hw, total):
    """The table key after pile ``p``'s top card goes into a free cell, when nothing turns up and
    nothing refills the pile."""
    n = np.int64(s[ix(sp[O_LEN] + p)])
    code = np.uint64(codes[ix(sp[OB_TAB] + p * sp[SP_CAP] + n - 1)])
    return nonzero(total - hw[ix(sp[SP_PILES] + p)] + mix(hw[ix(p)] - code * DEPTH[ix(n - 1)]))


drop_stale_cache(__name__)

__all__ = [
    "DEPTH", "check_fits", "lifted_key", "moved_key", "pile_sums", "placed_key", "position_key", "progress",
    "stock_term", "stock_term_of", "table_key", "tableau_key",
]
