"""Where each legal move leads, for the position history (:mod:`solitaire_env.engine.history`): the
table key of a move's result, most of them without playing the move, and the lists of the moves that
may lead back to a position of the stretch.

A key changes by known amounts when a move takes known cards from one place to another
(:mod:`solitaire_env.engine.keys`): a move between piles changes two pile hashes, one between a pile and
a free cell or a foundation changes one, and a draw or a redeal of a stock that cycles changes only the
stock's term. Only a move that empties a pile in a game that refills piles (Rainbow) is played on a copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from solitaire_env.engine import core, keys
from solitaire_env.engine.hashing import nonzero
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.pair_filter import pair_bit
from solitaire_env.engine.table import ix
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_EMPTY,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    O_DOWN,
    O_LEN,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RESDOWN,
    OB_CELLS,
    OB_FOUND,
    REDEAL,
    SP_AUTOFILL,
    SP_DRAW,
    SP_N_ACTIONS,
    SP_PILES,
    SP_REDEALS,
    TABLEAU_TO_CELL,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    UNLIMITED,
)

_jit = njit(cache=True, nogil=True)
# Helpers called per move are inlined into their callers: a call passing arrays cost more than the
# work of most of them.
_inline = njit(cache=True, nogil=True, inline="always")


class Position(NamedTuple):
    """One env's position as the history reads it: views of its rows, and two facts of the step."""

    s: np.ndarray  # the state
    codes: np.ndarray  # its observation
    mask: np.ndarray  # the rules' legal moves; the moves back are taken out with no_revisit
    seen: np.ndarray  # int8 of n_actions: 1 for each legal move back (masked or not); or an empty array
    n_legal: int  # legal moves in ``mask``
    new_episode: bool  # an episode starts here: the table starts anew


class Moved(NamedTuple):
    """What the move that led to a position changed, as far as the history needs it."""

    known: bool  # False: not known (every pile is hashed again)
    src: int  # the tableau piles the move may have changed, -1 for none
    dst: int
    landed: int  # cards the move put onto ``dst`` (0 or less: not known)


class Scan(NamedTuple):
    """:func:`scan_tableau`'s findings about a position, which the keys of its moves' results need."""

    total: np.uint64  # the sum of the mixed pile hashes and the stock's term: the position's table key, but for 0
    empty: int  # the lowest empty pile, -1 if none
    progress: int  # keys.progress


class Work(NamedTuple):
    """The history's work space (:func:`solitaire_env.engine.history.work_space`)."""

    facts: np.ndarray  # core._pile_facts of the position
    hashes: np.ndarray  # uint64 of 2 * piles: pile hashes
    state: np.ndarray  # a state and an observation to play moves on
    codes: np.ndarray
    candidates: np.ndarray  # int64 of n_actions: the legal moves that may lead back, listed
    spare: np.ndarray  # uint64 of SLOTS // 2: room to move a table's keys when it grows
    pending: np.ndarray  # uint64 of 2 * n_actions: keys to probe, with their moves


# --- where a move leads ---------------------------------------------------------------------------
# Arrays are indexed through views starting at their field (as in keys.pile_sums), or with ix: an index
# numba cannot prove non-negative gets a wraparound test, which also kept the hash loops from vectorizing.


@_inline
def scan_tableau(pos, sp, hw, moved) -> Scan:
    """:func:`keys.pile_sums <solitaire_env.engine.keys.pile_sums>` into ``hw`` (uint64 of ``2 * piles``)
    and what the child keys need besides (the table key's stock term is added to its total).
    Where ``moved`` is known, ``hw`` holds the hashes of the position before that move, which differs
    from this one in piles ``moved.src`` and ``moved.dst`` at most, and only those are hashed again."""
    s, piles = pos.s, sp[SP_PILES]
    if not moved.known:
        total = keys.pile_sums(pos.codes, sp, hw)
    else:
        if moved.src >= 0:
            keys.rehash_pile(pos.codes, sp, hw, moved.src)
        if moved.dst >= 0:
            keys.rehash_pile(pos.codes, sp, hw, moved.dst)
        total = np.uint64(0)
        for p in range(piles):
            total += hw[ix(piles + p)]
    lens, downs = s[ix(sp[O_LEN]) : ix(sp[O_LEN] + piles)], s[ix(sp[O_DOWN]) : ix(sp[O_DOWN] + piles)]
    hidden = np.int64(s[sp[O_RESDOWN]])
    for p in range(piles):
        hidden += downs[p]
    empty = -1
    for p in range(piles):
        if lens[p] == 0:
            empty = p
            break
    total += keys.stock_term_of(s, sp)  # (0 but where the stock cycles)
    return Scan(total, empty, keys.progress_with(s, sp, hidden))


@_jit
def played_key(s, sp, actions, a, prog, w) -> np.uint64:
    """:func:`child_key` for a move that empties a pile the reserve may refill: played on a copy."""
    for k in range(s.shape[0]):  # a loop: numba's slice assignment took ten times as long
        w.state[k] = s[k]
    core.apply_action(w.state, sp, actions, a)
    if keys.progress(w.state, sp) != prog:
        return np.uint64(0)
    core.observe(w.state, sp, w.codes)
    return keys.table_key(w.state, w.codes, sp)


@_inline
def child_key(pos, sp, actions, a, hw, scan, w):
    """The table key of the position legal action ``a`` leads to, or 0 when that position's progress
    differs from this one's (so it cannot have been seen). ``hw``, ``scan``: from :func:`scan_tableau`."""
    s = pos.s
    kind, src = actions[a, 0], actions[a, 1]
    if kind == CELL_TO_TABLEAU or kind == CELL_TO_EMPTY:  # a card from a cell: nothing turns up
        dst = actions[a, 2] if kind == CELL_TO_TABLEAU else scan.empty
        return keys.placed_key(s, sp, dst, pos.codes[ix(sp[OB_CELLS] + src)], hw, scan.total)
    if kind == TABLEAU_TO_TABLEAU:
        dst = actions[a, 2]
        count = core.fitting_count(s, sp, src, dst)
    elif kind == TABLEAU_TO_EMPTY:
        dst, count = scan.empty, actions[a, 3]
    elif kind == TABLEAU_TO_CELL or (kind == TABLEAU_TO_FOUNDATION and sp[A_FIRST + FOUNDATION_TO_TABLEAU] >= 0):
        dst, count = -1, 1  # a card off the tableau: into a cell, or to a foundation whose cards come back
    else:
        return _other_child_key(pos, sp, actions, a, hw, scan)
    n, d = np.int64(s[sp[O_LEN] + src]), np.int64(s[sp[O_DOWN] + src])
    if n - count == d and d > 0:
        return np.uint64(0)  # no pile has a face-down top: the card under the moved ones turns up
    if n - count == 0 and sp[SP_AUTOFILL] != 0:
        return played_key(s, sp, actions, a, scan.progress, w)  # the reserve may refill the pile
    if dst < 0:
        return keys.lifted_key(s, pos.codes, sp, src, hw, scan.total)
    return keys.moved_key(pos.s, pos.codes, sp, src, dst, count, hw, scan.total)


@_jit
def _other_child_key(pos, sp, actions, a, hw, scan):
    """:func:`child_key` for the moves that keep the progress in some games only: a foundation's card
    back onto the tableau (placed as a free cell's card is; nothing turns up), and where the stock
    cycles a draw or a redeal (only the stock's term of the key changes). 0 for every other move: from
    the waste or the reserve, or to a foundation whose cards never come back (the progress changes)."""
    s, kind = pos.s, actions[a, 0]
    if kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
        dst = actions[a, 2] if kind == FOUNDATION_TO_TABLEAU else scan.empty
        return keys.placed_key(s, sp, dst, pos.codes[ix(sp[OB_FOUND] + actions[a, 1])], hw, scan.total)
    if sp[SP_REDEALS] == UNLIMITED and (kind == DRAW or kind == REDEAL):
        ns, seen = np.int64(s[sp[O_NSTOCK]]), s[sp[O_REDEALS]] != 0
        if kind == DRAW:  # (min(stock, draw) cards, as core.resolve has it)
            after, seen_after = ns - min(ns, sp[SP_DRAW]), seen
        else:  # the waste turned over: the stock is shown from now on
            after, seen_after = ns + np.int64(s[sp[O_NWASTE]]), True
        return nonzero(scan.total - keys.stock_term(sp, ns, seen) + keys.stock_term(sp, after, seen_after))
    return np.uint64(0)


@_inline
def list_tableau_moves(pos, sp, candidates, empty) -> int:
    """List the legal moves between piles and into an empty pile in ``candidates``; return how many.
    Their kinds follow each other in the table, moves into an empty pile last (but for the moves into a
    free cell, or of a foundation's card back to the tableau). Listed without a branch per action: which
    actions are legal is unpredictable, and mispredictions cost more than the list."""
    first, first_te, last = sp[A_FIRST + TABLEAU_TO_TABLEAU], sp[A_FIRST + TABLEAU_TO_EMPTY], \
        sp[A_FIRST + TABLEAU_TO_CELL]
    if last < 0:
        last = sp[A_FIRST + FOUNDATION_TO_TABLEAU]
    if last < 0:
        last = sp[SP_N_ACTIONS]
    if empty < 0 and first_te >= 0:
        last = first_te  # with no empty pile, no move into one
    found = 0
    for a in range(first, last):
        candidates[ix(found)] = a
        found += pos.mask[ix(a)] != 0
    return found


@_inline
def list_cell_moves(pos, sp, candidates, found) -> int:
    """After the ``found`` moves listed in ``candidates``, list the legal moves between a free cell and
    the tableau; return how many are listed in all. In the table, the moves from a cell onto a pile or
    into an empty pile come just before those to a foundation from the tableau, and the moves into a
    cell last of all."""
    for a in range(sp[A_FIRST + CELL_TO_TABLEAU], sp[A_FIRST + TABLEAU_TO_FOUNDATION]):
        candidates[ix(found)] = a
        found += pos.mask[ix(a)] != 0
    for a in range(sp[A_FIRST + TABLEAU_TO_CELL], sp[SP_N_ACTIONS]):
        candidates[ix(found)] = a
        found += pos.mask[ix(a)] != 0
    return found


@_inline
def keys_back_cells(pos, sp, actions, t, i, w, start, end, scan, n_pending, filtered) -> int:
    """The keys of the moves between a cell and the tableau that :func:`list_cell_moves` listed in
    ``w.candidates[start:end]``, added to ``w.pending`` after its ``n_pending``; returns how many it
    holds then. With the pair filter (``filtered``), a card from a cell is keyed only where it has lain
    on the target pile in this stretch (a move into a cell makes no new pair: it is always keyed)."""
    hw = t.hashes[ix(i)]
    for c in range(start, end):
        a = w.candidates[ix(c)]
        kind = actions[ix(a), 0]
        if filtered and kind != TABLEAU_TO_CELL:
            to = actions[ix(a), 2] if kind == CELL_TO_TABLEAU else scan.empty
            word, bit = pair_bit(pos.codes[ix(sp[OB_CELLS] + actions[ix(a), 1])], hw[ix(to)])
            if (t.filt[ix(i), ix(word)] & bit) == 0:
                continue
        child = child_key(pos, sp, actions, a, hw, scan, w)
        if child != 0:
            w.pending[ix(2 * n_pending)], w.pending[ix(2 * n_pending + 1)] = child, np.uint64(a)
            n_pending += 1
    return n_pending


@_jit
def keys_back_returns(pos, sp, actions, t, i, w, listed, scan, n_pending, filtered):
    """Where foundation cards come back or the stock cycles (Klondike), the keys of the other moves that
    keep the progress, added to ``w.pending`` after its ``n_pending``: a foundation's card back to the
    tableau (listed in ``w.candidates`` after its ``listed`` moves: at the table's end, they come last;
    with the pair filter keyed only where the card has lain on the target pile in this stretch, as a
    free cell's card), a card to a foundation, a draw and a redeal (not listed: the action features
    scan their part of the table). Returns (moves listed, keys pending)."""
    hw = t.hashes[ix(i)]
    first = sp[A_FIRST + FOUNDATION_TO_TABLEAU]
    if first >= 0:
        start = listed
        for a in range(first, sp[SP_N_ACTIONS]):
            w.candidates[ix(listed)] = a
            listed += pos.mask[ix(a)] != 0
        for c in range(start, listed):
            a = w.candidates[ix(c)]
            if filtered:
                to = actions[ix(a), 2] if actions[ix(a), 0] == FOUNDATION_TO_TABLEAU else scan.empty
                word, bit = pair_bit(pos.codes[ix(sp[OB_FOUND] + actions[ix(a), 1])], hw[ix(to)])
                if (t.filt[ix(i), ix(word)] & bit) == 0:
                    continue
            child = child_key(pos, sp, actions, a, hw, scan, w)
            w.pending[ix(2 * n_pending)], w.pending[ix(2 * n_pending + 1)] = child, np.uint64(a)
            n_pending += child != 0
        to_foundation = sp[A_FIRST + TABLEAU_TO_FOUNDATION]
        for a in range(to_foundation, to_foundation + sp[SP_PILES]):
            if pos.mask[ix(a)] != 0:
                child = child_key(pos, sp, actions, a, hw, scan, w)
                w.pending[ix(2 * n_pending)], w.pending[ix(2 * n_pending + 1)] = child, np.uint64(a)
                n_pending += child != 0
    if sp[SP_REDEALS] == UNLIMITED:
        for a in (sp[A_FIRST + DRAW], sp[A_FIRST + REDEAL]):
            if a >= 0 and pos.mask[ix(a)] != 0:
                w.pending[ix(2 * n_pending)] = child_key(pos, sp, actions, a, hw, scan, w)
                w.pending[ix(2 * n_pending + 1)] = np.uint64(a)
                n_pending += 1
    return listed, n_pending


@_inline
def keys_back_played(pos, sp, actions, hw, w, found, scan) -> int:
    """The keys of the ``found`` listed moves' results (0 where the progress changes) into
    ``w.pending`` with their moves; returns how many."""
    for c in range(found):
        a = w.candidates[c]
        w.pending[2 * c], w.pending[2 * c + 1] = child_key(pos, sp, actions, a, hw, scan, w), np.uint64(a)
    return found


drop_stale_cache(__name__)

__all__ = [
    "Moved", "Position", "Scan", "Work", "child_key", "keys_back_cells", "keys_back_played", "keys_back_returns",
    "list_cell_moves", "list_tableau_moves", "played_key", "scan_tableau",
]
