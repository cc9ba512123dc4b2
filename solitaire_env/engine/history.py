"""The positions an episode has seen: a position key, a table of keys per episode, the no-revisit mask.

**The key** is a 64-bit hash of the observation (:func:`solitaire_env.engine.core.observe`), so it holds
exactly what a player at the table sees and never a hidden card. Two positions get the same key when
they differ only by which of the piles *without* face-down cards holds which cards, by which
foundation slot holds which suit's cards, or by which free cell holds which card: none changes what
any move can do. A pile with face-down
cards keeps its number, because what lies under it differs from pile to pile.

Within one episode a key names one true position, hidden cards included: face-down cards only ever
leave their pile by turning up, and the unseen stock is dealt from its top in a fixed order, so two
positions of an episode with the same face-down counts and stock size have the same cards under
them. Keys are 64-bit hashes and a table holds at most :data:`LIMIT` of them at a time, so the chance
that two different positions of an episode share a key is around ``LIMIT**2 / 2**64`` per stretch
(below) at worst: far too small to matter in practice, so equal keys are taken as equal positions.

**Stretches.** Every move either leaves a position's *progress* unchanged or changes it for good:
cards on the foundations only grow, face-down cards only turn up, the stock only shrinks within a
pass and redeals are used up, the reserve only shrinks, and the waste only shrinks between draws. So
once the progress (:func:`~solitaire_env.engine.keys.progress`) changes, no earlier position can come
back: the table keeps only the positions of the current stretch of equal progress, all that a revisit
can reach. Those positions differ in their tableau alone (the free cells hold the cards that are
neither on the tableau nor anywhere else, as in every position of the stretch), so the table keeps
the tableau's part of the key (:func:`~solitaire_env.engine.keys.tableau_key`). It also follows that
only a move from one tableau pile to another (or into an empty pile), or between a free cell and the
tableau, can lead back to a seen position: every other kind of move changes the progress.

**The table** of each env is an open-addressing hash table of :data:`~solitaire_env.engine.table.SLOTS`
64-bit slots (32 KiB), one row of the arrays of :class:`~solitaire_env.engine.table.Tables`
(:mod:`solitaire_env.engine.table`). At most :data:`~solitaire_env.engine.table.LIMIT` positions of
one stretch are kept; once a stretch has that many, further positions are not recorded (moves to them
are not masked, and ``revisit`` is ``False`` for them) until the progress changes, and the env then
relies on its time limit to end the episode. In random play a stretch rarely reaches a few hundred
positions.

**The mask** needs the key of a legal move's result only where that result could have been seen. In
Rank and File and Number Ten, a filter kept with each stretch's keys says on which piles each card
has lain in the stretch; a move that puts a run onto a pile its bottom card has never lain on leads
to an unseen position, and its key is never computed (:func:`~solitaire_env.engine.pair_filter.keys_back_filtered`).

**The batched step** (:func:`step_batch`) runs the default batched step's per-game step
(:func:`solitaire_env.engine.batched.step_row`), then records each game's position. It keeps each
env's pile hashes between steps (:attr:`Tables.hashes <solitaire_env.engine.table.Tables>`) and hashes
again only the piles the move played changed (every pile after a reset); :func:`record`, which is not
told the move, hashes every pile.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from solitaire_env.engine import batched, core, features, keys
from solitaire_env.engine.batched import (
    PARALLEL_MIN_BATCH,
    SKIP,
    Batch,
    borrowed,
    borrowed_batch,
    keep_alive,
    rows,
    step_row,
)
from solitaire_env.engine.hashing import nonzero
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.pair_filter import keys_back_filtered, pair_bit, record_pairs
from solitaire_env.engine.table import (
    M_HASHED,
    M_PROGRESS,
    M_SIZE,
    SLOTS,
    Tables,
    has,
    insert,
    ix,
    new_tables,
    prefetch,
    prefetch_slot,
)
from solitaire_env.engine.table import clear as clear_stretch
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    O_DOWN,
    O_LEN,
    O_RESDOWN,
    OB_CELLS,
    OB_SIZE,
    SP_AUTOFILL,
    SP_CELLS,
    SP_N_ACTIONS,
    SP_PILES,
    SP_STATE_SIZE,
    SP_WHOLE,
    SP_WRAP,
    TABLEAU_TO_CELL,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    WASTE_TO_EMPTY,
    Variant,
)

_jit = njit(cache=True, nogil=True)
# Helpers called per move or per env are inlined into their callers: a call passing arrays cost more
# than the work of most of them.
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
    """:func:`_scan_tableau`'s findings about a position, which the keys of its moves' results need."""

    total: np.uint64  # the sum of the mixed pile hashes: the position's table key, but for 0
    empty: int  # the lowest empty pile, -1 if none
    progress: int  # keys.progress


class Work(NamedTuple):
    """:func:`record`'s work space (:func:`work_space`)."""

    facts: np.ndarray  # core._pile_facts of the position
    hashes: np.ndarray  # uint64 of 2 * piles: pile hashes
    state: np.ndarray  # a state and an observation to play moves on
    codes: np.ndarray
    candidates: np.ndarray  # int64 of n_actions: the legal moves between piles
    spare: np.ndarray  # uint64 of SLOTS // 2: room to move a table's keys when it grows
    pending: np.ndarray  # uint64 of 2 * n_actions: keys to probe, with their moves


class Recording(NamedTuple):
    """What the batched step with the history reads and writes besides its :class:`Batch`, row ``i`` for env ``i``."""

    clear: np.ndarray  # (N,) bool: env i's episode starts here
    revisit: np.ndarray  # (N,) bool: whether its position had been seen
    n_rules: np.ndarray  # (N,) int64: legal moves by the rules alone
    seen: np.ndarray  # (N, n_actions) int8 for record's flags, or (N, 0)
    act_out: np.ndarray  # (N, n_actions, 11) for the action features (features module), or (N, 0, 0)


# --- where a move leads ---------------------------------------------------------------------------
# Arrays are indexed through views starting at their field (as in _pile_sums), or with ix: an index
# numba cannot prove non-negative gets a wraparound test, which also kept the hash loops from vectorizing.


@_inline
def _scan_tableau(pos, sp, hw, moved) -> Scan:
    """:func:`_pile_sums` into ``hw`` (uint64 of ``2 * piles``) and what the child keys need besides.
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
    return Scan(total, empty, keys.progress_with(s, sp, hidden))


@_jit
def _played_key(s, sp, actions, a, prog, w) -> np.uint64:
    """:func:`_child_key` for a move that empties a pile the reserve may refill: played on a copy."""
    for k in range(s.shape[0]):  # a loop: numba's slice assignment took ten times as long
        w.state[k] = s[k]
    core.apply_action(w.state, sp, actions, a)
    if keys.progress(w.state, sp) != prog:
        return np.uint64(0)
    core.observe(w.state, sp, w.codes)
    return keys.tableau_key(w.codes, sp)


@_inline
def _child_key(pos, sp, actions, a, hw, scan, w):
    """The table key of the position legal action ``a`` leads to, or 0 when that position's progress
    differs from this one's (so it cannot have been seen). ``hw``, ``scan``: from :func:`_scan_tableau`."""
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
    elif kind == TABLEAU_TO_CELL:
        dst, count = -1, 1
    else:
        return np.uint64(0)  # from the stock, waste or reserve, or to a foundation: progress changes
    n, d = np.int64(s[sp[O_LEN] + src]), np.int64(s[sp[O_DOWN] + src])
    if n - count == d and d > 0:
        return np.uint64(0)  # no pile has a face-down top: the card under the moved ones turns up
    if n - count == 0 and sp[SP_AUTOFILL] != 0:
        return _played_key(s, sp, actions, a, scan.progress, w)  # the reserve may refill the pile
    if dst < 0:
        return keys.lifted_key(s, pos.codes, sp, src, hw, scan.total)
    return keys.moved_key(pos.s, pos.codes, sp, src, dst, count, hw, scan.total)


@_inline
def _list_tableau_moves(pos, sp, candidates, empty) -> int:
    """List the legal moves between piles and into an empty pile in ``candidates``; return how many.
    Their kinds follow each other in the table, moves into an empty pile last (but for the moves into a
    free cell). Listed without a branch per action: which actions are legal is unpredictable, and
    mispredictions cost more than the list."""
    first, first_te, to_cell = sp[A_FIRST + TABLEAU_TO_TABLEAU], sp[A_FIRST + TABLEAU_TO_EMPTY], \
        sp[A_FIRST + TABLEAU_TO_CELL]
    last = to_cell if to_cell >= 0 else sp[SP_N_ACTIONS]
    if empty < 0 and first_te >= 0:
        last = first_te  # with no empty pile, no move into one
    found = 0
    for a in range(first, last):
        candidates[ix(found)] = a
        found += pos.mask[ix(a)] != 0
    return found


@_inline
def _list_cell_moves(pos, sp, candidates, found) -> int:
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
def _keys_back_cells(pos, sp, actions, t, i, w, start, end, scan, n_pending, filtered) -> int:
    """The keys of the moves between a cell and the tableau that :func:`_list_cell_moves` listed in
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
        child = _child_key(pos, sp, actions, a, hw, scan, w)
        if child != 0:
            w.pending[ix(2 * n_pending)], w.pending[ix(2 * n_pending + 1)] = child, np.uint64(a)
            n_pending += 1
    return n_pending


@_inline
def _keys_back_played(pos, sp, actions, hw, w, found, scan) -> int:
    """The keys of the ``found`` listed moves' results (0 where the progress changes) into
    ``w.pending`` with their moves; returns how many."""
    for c in range(found):
        a = w.candidates[c]
        w.pending[2 * c], w.pending[2 * c + 1] = _child_key(pos, sp, actions, a, hw, scan, w), np.uint64(a)
    return found


@_inline
def _mark(t, i, a, child, pos, no_revisit) -> int:
    """Flag (``pos.seen``) and mask out legal move ``a`` when its ``child`` key is kept; returns the moves
    it took out of the mask (0 or 1)."""
    if child != 0 and has(t, i, child):
        if pos.seen.shape[0] > 0:
            pos.seen[ix(a)] = 1
        if no_revisit:
            pos.mask[ix(a)] = 0
            return 1
    return 0


# --- recording a position -------------------------------------------------------------------------


@_inline
def _record(pos, sp, actions, t, i, w, no_revisit, moved):
    """:func:`record`, inlined into the batched kernel. ``w.facts``: :func:`core._pile_facts` of
    ``pos.s``, which :func:`core._legal_mask` leaves in its work space. ``t.hashes[i]``: env ``i``'s pile
    hashes; where ``moved`` is known (and the row was hashed and no episode starts), those of the last
    position recorded, from which only the piles it names may differ. Returns (whether ``pos.s`` had
    been seen, moves left in ``pos.mask``, the lowest empty pile, and how many moves ``w.candidates``
    lists: the legal moves between piles and into an empty pile, or -1 when none were listed)."""
    if pos.new_episode or t.meta[i, M_HASHED] == 0:
        moved = Moved(False, np.int64(-1), np.int64(-1), np.int64(0))
    hw = t.hashes[ix(i)]
    scan = _scan_tableau(pos, sp, hw, moved)
    t.meta[i, M_HASHED] = 1
    key = nonzero(scan.total)
    new_stretch = pos.new_episode or t.meta[i, M_SIZE] == 0 or scan.progress != t.meta[i, M_PROGRESS]
    if new_stretch:
        clear_stretch(t, i)
        t.meta[i, M_PROGRESS] = scan.progress
        moved = Moved(False, np.int64(-1), np.int64(-1), np.int64(0))  # every pile's pairs are new
    prefetch_slot(t, i, key)  # probed below, after the pairs and the moves' keys
    for a in range(pos.seen.shape[0]):
        pos.seen[a] = 0
    listed, n_pending = -1, 0
    if no_revisit or pos.seen.shape[0] > 0:
        listed = 0
        if pos.n_legal > 0:
            between_piles = _list_tableau_moves(pos, sp, w.candidates, scan.empty)
            listed = between_piles
            if sp[SP_CELLS] > 0:
                listed = _list_cell_moves(pos, sp, w.candidates, between_piles)
            filtered = sp[SP_WHOLE] == 0 and sp[SP_AUTOFILL] == 0 and sp[SP_WRAP] == 0  # the pair filter holds
            if filtered:
                record_pairs(pos, sp, w.facts, t, i, moved)
                n_pending = keys_back_filtered(pos, sp, actions, t, i, w, between_piles, scan)
            else:
                n_pending = _keys_back_played(pos, sp, actions, hw, w, between_piles, scan)
            if listed > between_piles:
                n_pending = _keys_back_cells(pos, sp, actions, t, i, w, between_piles, listed, scan, n_pending,
                                             filtered)
    was_seen = has(t, i, key)
    if not was_seen:
        insert(t, i, key, w.spare)
    left = pos.n_legal
    for c in range(n_pending):
        left -= _mark(t, i, np.int64(w.pending[ix(2 * c + 1)]), w.pending[ix(2 * c)], pos, no_revisit)
    return was_seen, left, scan.empty, listed


@_jit
def record(pos, sp, actions, t, i, no_revisit):
    """Record position ``pos`` (a :class:`Position`) in the table of env ``i`` (row ``i`` of the
    :class:`~solitaire_env.engine.table.Tables` ``t``) and, with ``no_revisit``, take out of ``pos.mask``
    every legal move to a position the table holds. Every pile is hashed into ``t.hashes[i]``, as no
    move is known. Returns (whether the position had been seen, moves left in ``pos.mask``). Its work
    space is allocated here: numba types a named tuple of arrays passed from Python element by element
    on every call, which cost more than allocating them."""
    w = work_space(sp)
    core._pile_facts(pos.s, sp, w.facts)
    was_seen, left, _, _ = _record(pos, sp, actions, t, i, w, no_revisit,
                                   Moved(False, np.int64(-1), np.int64(-1), np.int64(0)))
    return was_seen, left


@_jit
def record_arrays(s, codes, mask, seen, n_legal, new_episode, sp, actions, small, slots, meta, filt, hashes, i,
                  no_revisit):
    """:func:`record` with the fields of its :class:`Position` and :class:`Tables` passed one by one and
    packed here, for calls from Python: numba types a tuple passed from Python element by element on
    every call, but an array argument on a fast path (a call with the tuples cost twice as long)."""
    return record(Position(s, codes, mask, seen, n_legal, new_episode), sp, actions,
                  Tables(small, slots, meta, filt, hashes), i, no_revisit)


@_jit
def work_space(sp) -> Work:
    """A :class:`Work` for a game of spec ``sp``."""
    return Work(core._scratch(sp), np.empty(2 * sp[SP_PILES], dtype=np.uint64),
                np.empty(sp[SP_STATE_SIZE], dtype=np.int8), np.empty(sp[OB_SIZE], dtype=np.int16),
                np.empty(sp[SP_N_ACTIONS], dtype=np.int64), np.empty(SLOTS // 2, dtype=np.uint64),
                np.empty(2 * sp[SP_N_ACTIONS], dtype=np.uint64))


@_jit
def child_keys(s, codes, sp, actions, mask, out) -> None:
    """``out[a]``: what :func:`record` compares for each legal action ``a``: the tableau key of
    the position it leads to, or 0 where that position's progress differs (for tests)."""
    w = work_space(sp)
    pos = Position(s, codes, mask, np.empty(0, dtype=np.int8), np.int64(0), False)
    scan = _scan_tableau(pos, sp, w.hashes, Moved(False, np.int64(-1), np.int64(-1), np.int64(0)))
    for a in range(sp[SP_N_ACTIONS]):
        out[a] = np.uint64(0)
        if mask[a] != 0:
            out[a] = _child_key(pos, sp, actions, a, w.hashes, scan, w)


# --- many games at once ---------------------------------------------------------------------------


@_inline
def _piles_moved(s, sp, actions, a):
    """The tableau piles action ``a`` may change, as (source, target), -1 for none: read before the move
    (a move into an empty pile goes to the lowest one). A refill from the reserve lands on the source."""
    if a < 0:
        return -1, -1
    kind, src, dst = actions[ix(a), 0], actions[ix(a), 1], actions[ix(a), 2]
    if kind == CELL_TO_FOUNDATION or kind == CELL_TO_TABLEAU or kind == CELL_TO_EMPTY:
        src = -1  # (the source is a free cell)
    if kind == TABLEAU_TO_EMPTY or kind == WASTE_TO_EMPTY or kind == CELL_TO_EMPTY:
        dst = -1
        for p in range(sp[SP_PILES]):
            if s[ix(sp[O_LEN] + p)] == 0:
                dst = p
                break
    return src, dst


@_inline
def _prefetch_rows(t, j) -> None:
    """Start loading env ``j``'s rows of the tables, to be in cache when its turn comes."""
    prefetch(t.meta, j, 0)
    prefetch(t.filt, j, 0)
    prefetch(t.filt, j, 8)
    prefetch(t.hashes, j, 0)
    prefetch(t.hashes, j, t.hashes.shape[1] - 1)
    for k in range(0, t.small.shape[1], 8):
        prefetch(t.small, j, k)


@_jit
def step_batch_serial(batch, sp, actions, acts, t, rec, no_revisit) -> None:
    """The default batched step's per-game step (:func:`solitaire_env.engine.batched.step_row`; ``acts[i]``
    at or below ``SKIP``: game ``i`` is left alone), then :func:`record` for each game (``rec.clear[i]``:
    its episode starts here), and its action features into ``rec.act_out[i]`` when that has rows (one
    pass over the envs: their arrays are still in cache). The pile hashes of ``t.hashes[i]`` are kept
    from step to step: only the piles the move changed are hashed again."""
    work = work_space(sp)
    want_actions = rec.act_out.shape[1] > 0
    b = borrowed  # no reference counting in the loop (see there): the helpers take many arrays
    batch = borrowed_batch(batch)
    sp, actions = b(sp), b(actions)
    t = Tables(b(t.small), b(t.keys), b(t.meta), b(t.filt), b(t.hashes))
    rec = Recording(b(rec.clear), b(rec.revisit), b(rec.n_rules), b(rec.seen), b(rec.act_out))
    w = Work(b(work.facts), b(work.hashes), b(work.state), b(work.codes), b(work.candidates), b(work.spare),
             b(work.pending))
    n_envs = batch.states.shape[0]
    for i in range(n_envs):
        a = acts[i]
        if a <= SKIP:  # (reset_envs: only the games dealt anew)
            continue
        if i + 2 < n_envs:
            _prefetch_rows(t, i + 2)
        s = batch.states[i]
        src, dst = _piles_moved(s, sp, actions, a)
        had = np.int64(s[ix(sp[O_LEN] + dst)]) if dst >= 0 else 0
        n_rules = step_row(batch, sp, actions, i, a, w.facts)
        landed = np.int64(s[ix(sp[O_LEN] + dst)]) - had if dst >= 0 else 0
        pos = Position(s, batch.codes[i], batch.masks[i], rec.seen[i], n_rules, rec.clear[i])
        was_seen, left, empty, listed = _record(pos, sp, actions, t, i, w, no_revisit,
                                                Moved(True, np.int64(src), np.int64(dst), np.int64(landed)))
        rec.revisit[i], rec.n_rules[i], batch.n_legal[i] = was_seen, n_rules, left
        if want_actions:  # (the moves between piles _record listed are not listed again)
            features._action_rows(s, sp, actions, pos.codes, pos.mask, pos.seen, rec.act_out[i], w.facts, empty,
                                  w.candidates, listed, w.state)
    keep_alive(work)


def step_batch_parallel(batch: Batch, sp: np.ndarray, actions: np.ndarray, acts: np.ndarray, t: Tables,
                        rec: Recording, no_revisit: bool) -> None:
    """:func:`step_batch_serial` in threads, a chunk of envs each."""
    batched.in_chunks(step_batch_serial, len(acts), lambda lo, hi: (rows(batch, lo, hi), sp, actions, acts[lo:hi],
                                                                    rows(t, lo, hi), rows(rec, lo, hi), no_revisit))


def step_batch(batch: Batch, sp: np.ndarray, actions: np.ndarray, acts: np.ndarray, t: Tables, rec: Recording,
               no_revisit: bool) -> None:
    """Step every game (``acts[i] < 0``: no move), then record its position: the default batched step
    with the history, in threads for large batches. ``t``: :attr:`History.tables`."""
    kernel = step_batch_parallel if len(acts) >= PARALLEL_MIN_BATCH else step_batch_serial
    kernel(batch, sp, actions, acts, t, rec, no_revisit)


class History:
    """The tables of ``n`` envs, for :func:`step_batch` or one env at a time (:meth:`record`).

    Memory: ``8 * (SLOTS + FIRST_SIZE)`` bytes an env (32.5 KiB) and ``8 * (META + FILTER_WORDS)
    + 16 * piles`` more (344 for Rank and File), allocated zeroed, so the pages of big rows no stretch
    grew into cost nothing until used (:func:`~solitaire_env.engine.table.new_tables`).
    """

    def __init__(self, variant: Variant, n: int) -> None:
        keys.check_fits(variant)
        self.variant = variant
        self.tables = new_tables(n, variant.piles)
        self._no_seen = np.zeros(0, dtype=np.int8)

    def record(self, i: int, state: np.ndarray, codes: np.ndarray, mask: np.ndarray, n_legal: int, clear: bool,
               no_revisit: bool, seen: np.ndarray | None = None) -> tuple[bool, int]:
        """:func:`record` for env ``i``: (whether ``state`` had been seen, legal moves left in ``mask``)."""
        v, t = self.variant, self.tables
        was_seen, left = record_arrays(state, codes, mask, self._no_seen if seen is None else seen, int(n_legal),
                                       bool(clear), v.spec, v.actions, t.small, t.keys, t.meta, t.filt, t.hashes,
                                       i, bool(no_revisit))
        return bool(was_seen), int(left)

    @property
    def nbytes(self) -> int:
        return sum(x.nbytes for x in self.tables)


drop_stale_cache(__name__)

__all__ = ["History", "Position", "Recording", "child_keys", "record", "step_batch"]
