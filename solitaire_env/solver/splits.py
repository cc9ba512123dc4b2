"""Klondike's split moves: searched only with the card they uncover going home (docs/solver.md, "Klondike:
face-up runs left out of the key, and a split only with its card going home").

A *split* moves part of a pile's face-up run onto another pile: run ``R`` headed by card ``x`` leaves
card ``u`` (face up) for card ``y`` of the same rank and colour as ``u``. Nothing is turned up and no pile
empties; the position before and the one after differ only in which of the twins ``u``, ``y`` the run lies
on, and such positions win alike (the solver's key leaves that out). So a split is searched only where
``u`` can go home at once, as one move with ``u`` going home.
"""

from __future__ import annotations

from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    A_FIRST,
    O_DOWN,
    O_LEN,
    SP_CELLS,
    SP_KINGS_ONLY,
    SP_N_ACTIONS,
    SP_NCARDS,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
)

_jit = njit(cache=True, nogil=True)


@_jit
def splits_pruned(sp) -> bool:
    """Whether the game's rules are those the proof reads: one deck, only Kings into empty piles, any
    face-up run moving as a unit, no free cells (Klondike)."""
    return sp[SP_KINGS_ONLY] != 0 and sp[SP_NCARDS] == 52 and sp[SP_CELLS] == 0


@_jit
def uncovered(s, sp, actions, m: int) -> int:
    """The card search move ``m`` uncovers if it is a split, else -1 (``m`` legal; macros are no splits)."""
    if m >= sp[SP_N_ACTIONS] or actions[m, 0] != TABLEAU_TO_TABLEAU:
        return -1
    src = actions[m, 1]
    count = core.resolve(s, sp, actions, m)[1]
    n, down = s[sp[O_LEN] + src], s[sp[O_DOWN] + src]
    if count >= n - down:
        return -1  # the whole face-up part moves: a card turns up, or the pile empties
    return core.pile_card(s, sp, src, n - count - 1)


@_jit
def useless_split(s, sp, actions, a: int) -> bool:
    """Whether legal action ``a`` is a split whose uncovered card cannot go home at once."""
    u = uncovered(s, sp, actions, a)
    return u >= 0 and core.foundation_for(s, sp, u) < 0


@_jit
def split_home(s, sp, actions, m: int) -> int:
    """The action that sends home the card split ``m`` uncovers, played with it as one search move; -1 if
    ``m`` is no split (or the game's splits are searched as they are)."""
    if not splits_pruned(sp) or uncovered(s, sp, actions, m) < 0:
        return -1
    return sp[A_FIRST + TABLEAU_TO_FOUNDATION] + actions[m, 1]


# Compiled code here holds the core's code and variant.py's constants: a cache built from other sources is
# dropped.
drop_stale_cache(__name__)

__all__ = ["split_home", "splits_pruned", "uncovered", "useless_split"]
