"""Reading a position: the card and pile helpers the rules in :mod:`solitaire_env.engine.core` are
written with (a pile's top card and run, the lowest empty pile or free cell, the foundation a card
goes to, how many cards a move may carry). Compiled with numba; nothing here changes a position.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    O_BASE,
    O_CELLS,
    O_DOWN,
    O_FCNT,
    O_FSUIT,
    O_LEN,
    O_NRES,
    O_NWASTE,
    O_RES,
    O_RESDOWN,
    O_TAB,
    O_WASTE,
    SP_CAP,
    SP_CELLS,
    SP_FOUND,
    SP_PILES,
    SP_RUN_LIMIT,
    SP_WHOLE,
    SP_WRAP,
)

_jit = njit(cache=True, nogil=True)


# --- card helpers --------------------------------------------------------------------------------


# Cards are 0..51, so these compute in unsigned integers: cheaper than Python's floor division and
# modulo of signed ones, which the rank and colour tests of the mask spend much of their time on.
_13 = np.uint32(13)
KING = 12  # a card's rank (card % 13) for the King: the one card an empty pile takes where kings_to_empty


@_jit
def is_red(card: int) -> bool:
    suit = np.uint32(card) // _13
    return suit == 1 or suit == 2


@_jit
def builds_on(card: int, onto: int, wrap: bool) -> bool:
    """Tableau building: one rank lower, other colour; with ``wrap`` a King goes on an Ace."""
    if is_red(card) == is_red(onto):
        return False
    r, t = np.uint32(card) % _13, np.uint32(onto) % _13
    if wrap:
        return r == (t + np.uint32(12)) % _13
    return r + np.uint32(1) == t


# --- reading a position --------------------------------------------------------------------------


@_jit
def pile_card(s, sp, p: int, k: int) -> int:
    """The ``k``-th card of pile ``p`` counting from the bottom."""
    return s[sp[O_TAB] + p * sp[SP_CAP] + k]


@_jit
def top_card(s, sp, p: int) -> int:
    """The pile's top card if it is face up, else -1."""
    n = s[sp[O_LEN] + p]
    if n == 0 or s[sp[O_DOWN] + p] >= n:
        return -1
    return pile_card(s, sp, p, n - 1)


# builds_on of every pair of cards (card, onto), without and with wrap: a walk down a run costs one load
# a card instead of two colour and two rank computations (the run lengths of the ``piles``
# observation were 40% of its time). Made from builds_on itself, so the rule is still written once.
BUILDS = np.zeros((2, 64, 64), dtype=np.uint8)  # 64 wide: an index is a shift, not a multiplication
for _w in (0, 1):
    for _c in range(52):
        for _o in range(52):
            BUILDS[_w, _c, _o] = builds_on.py_func(_c, _o, bool(_w))


@njit(cache=True, nogil=True, inline="always")
def run_on(s, start: int, n: int, down: int, wrap: int) -> int:
    """Cards in the packed run on top of the pile of ``n`` cards (``down`` face down, fewer than ``n``)
    whose bottom card is ``s[start]``; ``wrap``: the variant's, as 0 or 1."""
    k = 1
    while k < n - down and BUILDS[wrap, s[start + n - k], s[start + n - k - 1]]:
        k += 1
    return k


@_jit
def run_length(s, sp, p: int) -> int:
    """Cards in the packed run on top of pile ``p`` (0 for an empty pile or a face-down top)."""
    n = s[sp[O_LEN] + p]
    down = s[sp[O_DOWN] + p]
    if n == 0 or down >= n:
        return 0
    return run_on(s, sp[O_TAB] + p * sp[SP_CAP], n, down, np.int64(sp[SP_WRAP] != 0))


@_jit
def lowest_empty_pile(s, sp) -> int:
    for p in range(sp[SP_PILES]):
        if s[sp[O_LEN] + p] == 0:
            return p
    return -1


@njit(cache=True, nogil=True, inline="always")
def empty_piles(s, sp) -> int:
    total = 0
    for p in range(sp[SP_PILES]):
        total += s[sp[O_LEN] + p] == 0
    return total


@_jit
def lowest_free_cell(s, sp) -> int:
    for c in range(sp[SP_CELLS]):
        if s[sp[O_CELLS] + c] < 0:
            return c
    return -1


@njit(cache=True, nogil=True, inline="always")
def free_cells(s, sp) -> int:
    total = 0
    for c in range(sp[SP_CELLS]):
        total += s[sp[O_CELLS] + c] < 0
    return total


NO_LIMIT = 1 << 30  # the run limit of a game without one: more than any pile holds


@njit(cache=True, nogil=True, inline="always")
def move_limit(s, sp, to_empty: bool) -> int:
    """The most cards one tableau move may carry: (free cells + 1) * 2 ** (empty piles other than the
    target) where the game has a run limit (FreeCell's "supermove": the same cards moved one at a time
    through the cells and empty piles), else no limit."""
    if sp[SP_RUN_LIMIT] == 0:
        return NO_LIMIT
    spare = empty_piles(s, sp) - (1 if to_empty else 0)
    return (free_cells(s, sp) + 1) << max(spare, 0)


@_jit
def foundation_for(s, sp, card: int) -> int:
    """The lowest-numbered foundation slot that accepts ``card``, or -1."""
    base = s[sp[O_BASE]]
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        if n == 0:
            if card % 13 == base:
                return f
        elif n < 13 and s[sp[O_FSUIT] + f] == card // 13 and card % 13 == (base + n) % 13:
            return f
    return -1


@_jit
def foundation_top(s, sp, f: int) -> int:
    """The top card of foundation slot ``f``, or -1 for an empty slot."""
    n = s[sp[O_FCNT] + f]
    if n == 0:
        return -1
    return s[sp[O_FSUIT] + f] * 13 + (s[sp[O_BASE]] + n - 1) % 13


@_jit
def foundation_cards(s, sp) -> int:
    total = 0
    for f in range(sp[SP_FOUND]):
        total += s[sp[O_FCNT] + f]
    return total


@_jit
def hidden_cards(s, sp) -> int:
    """Face-down cards on the table (tableau and reserve); the stock is not counted."""
    total = s[sp[O_RESDOWN]]
    for p in range(sp[SP_PILES]):
        total += s[sp[O_DOWN] + p]
    return total


@_jit
def waste_top(s, sp) -> int:
    n = s[sp[O_NWASTE]]
    return s[sp[O_WASTE] + n - 1] if n > 0 else -1


@_jit
def reserve_top(s, sp) -> int:
    n = s[sp[O_NRES]]
    if n == 0 or s[sp[O_RESDOWN]] >= n:
        return -1
    return s[sp[O_RES] + n - 1]


@_jit
def fitting_count(s, sp, src: int, dst: int) -> int:
    """The cards a legal move from tableau pile ``src`` onto the face-up top of pile ``dst`` takes: the
    whole pile where only whole piles move, else the part of the run ending one rank below that top."""
    n = s[sp[O_LEN] + src]
    if sp[SP_WHOLE] != 0:
        return np.int64(n)
    return np.int64(np.uint32(top_card(s, sp, dst)) % _13) - np.int64(np.uint32(pile_card(s, sp, src, n - 1)) % _13)


# The compiled functions hold variant.py's constants: a cache built from other sources is dropped here.
drop_stale_cache(__name__)
