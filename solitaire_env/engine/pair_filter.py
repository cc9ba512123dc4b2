"""The no-revisit mask's pair filter: which card has lain on which pile in the current stretch, so that
the keys of most moves that cannot lead back are never computed (:mod:`solitaire_env.engine.history`
uses it; ``docs/design.md`` says why it holds)."""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine import core, keys
from solitaire_env.engine.hashing import M1, M2, nonzero
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.table import KEY_WORDS, filter_bit, ix, prefetch_slot
from solitaire_env.engine.variant import A_FIRST, O_DOWN, O_LEN, O_TAB, OB_TAB, SP_CAP, SP_PILES, TABLEAU_TO_EMPTY

_inline = njit(cache=True, nogil=True, inline="always")


# --- which card has lain on which pile -------------------------------------------------------------
# A move between piles (or into an empty one) puts the run's bottom card x onto the whole of the target
# pile B (or an empty pile): in the position it leads to, x lies on B within the target's top run. So
# if that position was recorded in this stretch, a card of x's code lay directly on a pile with B's
# cards (B's linear hash, its face-down number included) in the top run of a recorded position. The
# filter's last words keep those pairs, hashed, for every top-run card of every position recorded in
# the stretch; a move whose pair is not there cannot lead back, so its key is never computed. Random
# play under no_revisit then keys four moves a position instead of ten. Within a stretch a move changes
# two piles at most, and the pairs of the others are already there: only the changed piles' new pairs
# are added (_new_pairs; all piles' at a stretch's first position), which keeps the same set. (Games
# where runs wrap, only whole piles move or emptied piles refill take the general path.)


@_inline
def pair_bit(x, under):
    """(word, bit) of "code ``x`` lay on the pile whose linear hash is ``under``" in the filter."""
    h = (under + np.uint64(x) * M1) * M2
    return KEY_WORDS + np.int64(h >> np.uint64(61)), np.uint64(1) << ((h >> np.uint64(55)) & np.uint64(63))


@_inline
def _add_pairs(pos, sp, facts, t, i, p, new) -> None:
    """The pairs of pile ``p``'s top ``new`` cards (at most its run's): each lies on the rest of its pile."""
    pile = sp[OB_TAB] + p * sp[SP_CAP]
    n, part = np.int64(pos.s[ix(sp[O_LEN] + p)]), np.uint64(0)
    for k in range(1, min(new, facts[ix(sp[SP_PILES] + p)]) + 1):
        x = pos.codes[ix(pile + n - k)]
        part += np.uint64(x) * keys.DEPTH[ix(n - k)]
        word, bit = pair_bit(x, t.hashes[ix(i), ix(p)] - part)
        t.filt[ix(i), ix(word)] |= bit


@_inline
def _new_pairs(s, sp, facts, moved):
    """How many of the top cards of piles ``moved.src`` and ``moved.dst`` make pairs the filter lacks,
    after a move within the stretch put ``moved.landed`` cards from ``src`` onto ``dst`` (0 or less:
    not known; then every top-run card of both). The filter holds the pairs of the position before the
    move: the cards under the moved ones in ``dst`` lie where they lay, and so do those left in ``src``
    when they were part of the run that moved (the moved cards built on them); only if the whole run
    left does ``src`` show a new run, whose pairs are all new."""
    piles, src, dst, landed = sp[SP_PILES], moved.src, moved.dst, moved.landed
    if landed <= 0 or src < 0 or dst < 0:
        return facts[piles + src] if src >= 0 else 0, facts[piles + dst] if dst >= 0 else 0
    ns = np.int64(s[ix(sp[O_LEN] + src)])
    if ns == 0:
        return 0, landed
    cap, tab = sp[SP_CAP], sp[O_TAB]
    bottom = s[ix(tab + dst * cap + s[ix(sp[O_LEN] + dst)] - landed)]  # the moved run's bottom card
    below = s[ix(tab + src * cap + ns - 1)]  # what it lay on
    return (0 if core.BUILDS[0, ix(bottom), ix(below)] else facts[ix(piles + src)]), landed


@_inline
def record_pairs(pos, sp, facts, t, i, moved) -> None:
    """Add this position's pairs to the filter: all piles' where ``moved`` is not known, else those of
    the piles it changed."""
    piles = sp[SP_PILES]
    if not moved.known:
        for p in range(piles):
            _add_pairs(pos, sp, facts, t, i, p, facts[piles + p])
        return
    new_src, new_dst = _new_pairs(pos.s, sp, facts, moved)
    if moved.src >= 0:
        _add_pairs(pos, sp, facts, t, i, moved.src, new_src)
    if moved.dst >= 0:
        _add_pairs(pos, sp, facts, t, i, moved.dst, new_dst)


@_inline
def keys_back_filtered(pos, sp, actions, t, i, w, found, scan) -> int:
    """:func:`_keys_back_played` for the moves the pair filter lets through, in Rank and File and Number
    Ten (no wrap, no refill, runs move): into ``w.pending``, their slots prefetched so that the probes'
    misses overlap instead of following each other. A key the key filter rejects is left out too
    (unless it is this position's own, kept before the probes): the probe would find nothing."""
    s, codes, hw = pos.s, pos.codes, t.hashes[ix(i)]
    cap, tab, first_te = sp[SP_CAP], sp[OB_TAB], sp[A_FIRST + TABLEAU_TO_EMPTY]
    ranks = w.facts[2 * sp[SP_PILES] : 3 * sp[SP_PILES]]
    # Which of them may lead back, listed without a branch per move as well (whether a move passes the
    # pair test is as unpredictable as whether it is legal): a move that turns a card up changes the
    # progress, and one whose pair the filter lacks leads to a position not kept.
    passed = 0
    for c in range(found):
        a = w.candidates[ix(c)]
        fro = actions[ix(a), 1]
        if first_te >= 0 and a >= first_te:
            to, k = scan.empty, actions[ix(a), 3]
        else:
            to = actions[ix(a), 2]
            k = ranks[ix(to)] - ranks[ix(fro)]  # core.fitting_count
        n, d = np.int64(s[ix(sp[O_LEN] + fro)]), np.int64(s[ix(sp[O_DOWN] + fro)])
        # (an empty pile's hash is 0)
        word, bit = pair_bit(codes[ix(tab + fro * cap + n - k)], hw[ix(to)])
        w.spare[ix(2 * passed)], w.spare[ix(2 * passed + 1)] = a, k  # (spare is free until insert)
        passed += ((t.filt[ix(i), ix(word)] & bit) != 0) & ((n - k != d) | (d == 0))
    key = nonzero(scan.total)
    n_pending = 0
    for c in range(passed):
        a, k = np.int64(w.spare[ix(2 * c)]), np.int64(w.spare[ix(2 * c + 1)])
        fro = actions[ix(a), 1]
        to = scan.empty if first_te >= 0 and a >= first_te else actions[ix(a), 2]
        child = keys.moved_key(s, codes, sp, fro, to, k, hw, scan.total)
        word, bit = filter_bit(child)
        prefetch_slot(t, i, child)
        w.pending[ix(2 * n_pending)], w.pending[ix(2 * n_pending + 1)] = child, np.uint64(a)
        n_pending += ((t.filt[ix(i), ix(word)] & bit) != 0) | (child == key)
    return n_pending


drop_stale_cache(__name__)

__all__ = ["keys_back_filtered", "pair_bit", "record_pairs"]
