"""The positions an episode has seen: a position key, a table of keys per episode, the no-revisit mask.

**The key** is a 64-bit hash of the observation (:func:`solitaire_env.engine.core.observe`), so it holds
exactly what a player at the table sees and never a hidden card. Two positions get the same key when
they differ only by which of the piles *without* face-down cards holds which cards, by which
foundation slot holds which suit's cards, or by which free cell holds which card: none changes what
any move can do. A pile with face-down cards keeps its number, because what lies under it differs
from pile to pile. Where the waste may be turned over without limit (Klondike's default) the state
also records whether it has been: the observation shows the stock's cards from then on, but an empty
stock looks the same either way, and so do the two positions, which allow the same moves.

Within one episode a key names one true position, hidden cards included: face-down cards only ever
leave their pile by turning up, and the unseen stock is the deal's stock less the cards drawn from its
top (nothing joins it until the waste is turned over into it, and from then on it is shown), so two
positions of an episode with the same face-down counts and unseen stock size have the same cards
under them. A card back from a foundation (Klondike) is face up, and changes none of this. Keys are
64-bit hashes and a table holds at most :data:`LIMIT` of them at a time, so the chance that two
different positions of an episode share a key is around ``LIMIT**2 / 2**64`` per stretch (below) at
worst: far too small to matter in practice, so equal keys are taken as equal positions.

**Stretches.** Every move either leaves a position's *progress* (:func:`~solitaire_env.engine.keys.progress`)
unchanged or changes it for good: face-down cards only turn up, the reserve only shrinks, cards leave
the stock and waste but never come back, and the redeals left, the stock size and the waste size,
compared in that order, only fall (a redeal uses one up, a draw shrinks the stock, a card played from
the waste shrinks it). Cards on the foundations only grow, but where they can come back (Klondike) they
are left out of the progress; and where the waste may be turned over without limit the stock cycles
(a redeal turns the waste back into the stock it was drawn from), so there the stock and waste count
only together, and the redeals entry (then only whether the waste has been turned over) not at all.
So once the progress changes no earlier position can come back: the table keeps only the positions
of the current stretch of equal progress, all that a revisit can reach.

Within a stretch the stock, the waste and the reserve hold the same cards (none has left, none comes
back), so the tableau fixes where the other cards lie: in FreeCell, whose foundations are fixed in a
stretch, which cards the free cells hold (which cell holds which does not matter); in Klondike, which
has no cells, which cards lie on the foundations, and each foundation builds up in suit from its Ace.
(A game with free cells and foundation cards that come back would need more: ``keys.check_fits``
refuses one.) Where the stock cycles the stock and waste hold one sequence, the waste bottom to top
then the stock top to bottom, which neither a draw nor a redeal changes: the stock's size fixes both,
and the observation of the stock shows only that and whether its cards are shown. So the table keeps
the tableau's part of the key, plus where the stock cycles a term for the stock's size and whether
it is shown (:func:`~solitaire_env.engine.keys.table_key`): within a stretch, equal table keys are
equal keys. It also follows that only these moves can lead back to a seen position: from one tableau
pile to another (or into an empty pile), between a free cell and the tableau, where foundation cards
come back a card to or from a foundation, and where the stock cycles a draw or a redeal. Every other
kind of move changes the progress, and is never masked.

**The table** of each env is an open-addressing hash table of :data:`~solitaire_env.engine.table.SLOTS`
64-bit slots (32 KiB), one row of the arrays of :class:`~solitaire_env.engine.table.Tables`
(:mod:`solitaire_env.engine.table`). At most :data:`~solitaire_env.engine.table.LIMIT` positions of
one stretch are kept; once a stretch has that many, further positions are not recorded (moves to them
are not masked, and ``revisit`` is ``False`` for them) until the progress changes, and the env then
relies on its time limit to end the episode. In random play a stretch rarely reaches a few hundred
positions (in Klondike, whose stock cycles, about 530 at most in 30 random games of 1,000 moves).

**The mask** needs the key of a legal move's result only where that result could have been seen
(:mod:`solitaire_env.engine.moves_back` computes them, most without playing the move). In Rank and
File, Number Ten, FreeCell and Klondike, a filter kept with each stretch's keys says on which piles
each card has lain in the stretch; a move that puts a run, or a card from a free cell or a
foundation, onto a pile its bottom card has never lain on leads to an unseen position, and its key is
never computed (:func:`~solitaire_env.engine.pair_filter.keys_back_filtered`).

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
from solitaire_env.engine.moves_back import (
    Moved,
    Position,
    Work,
    child_key,
    keys_back_cells,
    keys_back_played,
    keys_back_returns,
    list_cell_moves,
    list_tableau_moves,
    scan_tableau,
)
from solitaire_env.engine.pair_filter import keys_back_filtered, record_pairs
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
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    O_LEN,
    OB_SIZE,
    SP_AUTOFILL,
    SP_CELLS,
    SP_N_ACTIONS,
    SP_PILES,
    SP_REDEALS,
    SP_STATE_SIZE,
    SP_WHOLE,
    SP_WRAP,
    TABLEAU_TO_EMPTY,
    UNLIMITED,
    WASTE_TO_EMPTY,
    Variant,
)

_jit = njit(cache=True, nogil=True)
# Helpers called per move or per env are inlined into their callers: a call passing arrays cost more
# than the work of most of them.
_inline = njit(cache=True, nogil=True, inline="always")


class Recording(NamedTuple):
    """What the batched step with the history reads and writes besides its :class:`Batch`, row ``i`` for env ``i``."""

    clear: np.ndarray  # (N,) bool: env i's episode starts here
    revisit: np.ndarray  # (N,) bool: whether its position had been seen
    n_rules: np.ndarray  # (N,) int64: legal moves by the rules alone
    seen: np.ndarray  # (N, n_actions) int8 for record's flags, or (N, 0)
    act_out: np.ndarray  # (N, n_actions, 11) for the action features (features module), or (N, 0, 0)


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
    lists: the legal moves between piles and into an empty pile, then those between a free cell and the
    tableau, then those of a foundation's card back to the tableau; -1 when none were listed)."""
    if pos.new_episode or t.meta[i, M_HASHED] == 0:
        moved = Moved(False, np.int64(-1), np.int64(-1), np.int64(0))
    hw = t.hashes[ix(i)]
    scan = scan_tableau(pos, sp, hw, moved)
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
            between_piles = list_tableau_moves(pos, sp, w.candidates, scan.empty)
            listed = between_piles
            if sp[SP_CELLS] > 0:
                listed = list_cell_moves(pos, sp, w.candidates, between_piles)
            filtered = sp[SP_WHOLE] == 0 and sp[SP_AUTOFILL] == 0 and sp[SP_WRAP] == 0  # the pair filter holds
            if filtered:
                record_pairs(pos, sp, w.facts, t, i, moved)
                n_pending = keys_back_filtered(pos, sp, actions, t, i, w, between_piles, scan)
            else:
                n_pending = keys_back_played(pos, sp, actions, hw, w, between_piles, scan)
            if listed > between_piles:
                n_pending = keys_back_cells(pos, sp, actions, t, i, w, between_piles, listed, scan, n_pending,
                                             filtered)
            if sp[A_FIRST + FOUNDATION_TO_TABLEAU] >= 0 or sp[SP_REDEALS] == UNLIMITED:
                listed, n_pending = keys_back_returns(pos, sp, actions, t, i, w, listed, scan, n_pending, filtered)
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
    """``out[a]``: what :func:`record` compares for each legal action ``a``: the table key
    (:func:`~solitaire_env.engine.keys.table_key`) of the position it leads to, or 0 where that
    position's progress differs (for tests)."""
    w = work_space(sp)
    pos = Position(s, codes, mask, np.empty(0, dtype=np.int8), np.int64(0), False)
    scan = scan_tableau(pos, sp, w.hashes, Moved(False, np.int64(-1), np.int64(-1), np.int64(0)))
    for a in range(sp[SP_N_ACTIONS]):
        out[a] = np.uint64(0)
        if mask[a] != 0:
            out[a] = child_key(pos, sp, actions, a, w.hashes, scan, w)


# --- many games at once ---------------------------------------------------------------------------


@_inline
def _piles_moved(s, sp, actions, a):
    """The tableau piles action ``a`` may change, as (source, target), -1 for none: read before the move
    (a move into an empty pile goes to the lowest one). A refill from the reserve lands on the source."""
    if a < 0:
        return -1, -1
    kind, src, dst = actions[ix(a), 0], actions[ix(a), 1], actions[ix(a), 2]
    if kind == CELL_TO_FOUNDATION or kind == CELL_TO_TABLEAU or kind == CELL_TO_EMPTY \
            or kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
        src = -1  # (the source is a free cell or a foundation)
    if kind == TABLEAU_TO_EMPTY or kind == WASTE_TO_EMPTY or kind == CELL_TO_EMPTY or kind == FOUNDATION_TO_EMPTY:
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
