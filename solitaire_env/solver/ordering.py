"""The solver's own move order: which legal move is tried first (:func:`move_score`).

Foundation moves, then moves that turn a face-down card up (from the pile with most face-down cards
first), moves that empty a pile, reserve and waste cards onto the tableau, drawing, and last the moves
that only rearrange face-up cards. The restarts search only the moves scoring at least
:data:`PROMISING`.
"""

from __future__ import annotations

from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    O_DOWN,
    O_LEN,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
)

_jit = njit(cache=True, nogil=True)

# The first phase searches only the promising moves (score at least this): it finds most wins
# fast, but proves nothing unless it happened to leave no move out.
PROMISING = 300
# A foundation card coming back to the tableau (Klondike): below the promising moves.
BACK = 50


@_jit
def move_score(s, sp, actions, a: int) -> int:
    """How promising action ``a`` looks (higher is tried first); it must be legal."""
    kind, src = actions[a, 0], actions[a, 1]
    if kind == WASTE_TO_FOUNDATION or kind == RESERVE_TO_FOUNDATION or kind == TABLEAU_TO_FOUNDATION:
        return 1000
    if kind == DRAW:
        return 400
    if kind == REDEAL:
        return 300
    if kind == RESERVE_TO_TABLEAU:
        return 700
    if kind == WASTE_TO_TABLEAU:
        return 600
    if kind == WASTE_TO_EMPTY:
        return 350
    if kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
        return BACK  # a foundation card back (Klondike): seldom needed, so last
    if kind >= CELL_TO_FOUNDATION:
        return cell_score(s, sp, kind, src)
    # A tableau run moving to another pile or into an empty pile.
    count = core.resolve(s, sp, actions, a)[1]
    n = s[sp[O_LEN] + src]
    down = s[sp[O_DOWN] + src]
    if count == n - down and down > 0:
        return 800 + down  # turns a card up: the pile with most face-down cards first
    if count == n:
        return 750  # empties a pile
    if count == core.run_length(s, sp, src):
        # The whole top run goes: a step towards a face-down card or an empty pile (in Number Ten,
        # the dealt face-up cards need not form a run).
        left = n - count - down  # face-up cards still above the face-down ones (or the pile's bottom)
        return run_score(left) if kind != TABLEAU_TO_EMPTY else max(310, 420 - 10 * left)
    return split_score(s, sp, kind, src, n - count)


@_jit
def run_score(left: int) -> int:
    """A whole top run moving onto another pile, leaving ``left`` face-up cards: fewer to shift is better."""
    return max(310, 480 - 10 * left)


@_jit
def split_score(s, sp, kind: int, src: int, stays: int) -> int:
    """Part of a run moving, ``stays`` cards left on pile ``src``: into an empty pile, hardly ever worth
    it; onto another pile, worth it when it frees a card for the foundations."""
    if kind == TABLEAU_TO_EMPTY:
        return 100
    exposed = core.pile_card(s, sp, src, stays - 1)
    if core.foundation_for(s, sp, exposed) >= 0:
        return 500
    return 200


@_jit
def cell_score(s, sp, kind: int, src: int) -> int:
    """A free cell's move (FreeCell): to a foundation first; out of a cell onto a pile, which frees the
    cell; a pile's top card into a cell, promising when the card it uncovers can go up; a cell's card
    into an empty pile, seldom worth an empty pile."""
    if kind == CELL_TO_FOUNDATION:
        return 1000
    if kind == CELL_TO_TABLEAU:
        return 700
    if kind == CELL_TO_EMPTY:
        return 150
    n = s[sp[O_LEN] + src]  # TABLEAU_TO_CELL
    if n > 1 and core.foundation_for(s, sp, core.pile_card(s, sp, src, n - 2)) >= 0:
        return 600
    return 320


@_jit
def insert_sorted(scores, out, k, sc, m) -> None:
    """Put move ``m`` with score ``sc`` into the first ``k`` entries, kept best first (stable)."""
    j = k
    while j > 0 and scores[j - 1] < sc:
        scores[j] = scores[j - 1]
        out[j] = out[j - 1]
        j -= 1
    scores[j] = sc
    out[j] = m


# Compiled code here holds the core's code and variant.py's constants: a cache built from other sources
# is dropped.
drop_stale_cache(__name__)

__all__ = ["BACK", "PROMISING", "insert_sorted", "move_score", "run_score", "split_score"]
