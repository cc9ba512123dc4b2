"""The positions an episode has seen: a position key, a table of keys per episode, the no-revisit mask.

**The key** is a 64-bit hash of the observation (:func:`solitaire_env.engine.core.observe`), so it holds
exactly what a player at the table sees and never a hidden card. Two positions get the same key when
they differ only by which of the piles *without* face-down cards holds which cards, or by which
foundation slot holds which suit's cards: neither changes what any move can do. A pile with face-down
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
once the progress (:func:`_progress`) changes, no earlier position can come back: the table keeps
only the positions of the current stretch of equal progress, all that a revisit can reach. Those
positions differ in their tableau alone, so the table keeps the tableau's part of the key
(:func:`tableau_key`). It also follows that only a move from one tableau pile to another (or into an
empty pile) can lead back to a seen position: every other kind of move changes the progress.

**The table** of each env is an open-addressing hash table of :data:`SLOTS` 64-bit slots (32 KiB) in
numpy arrays the compiled code writes, plus a few words of bookkeeping. A stretch starts with
:data:`FIRST_SIZE` slots and doubles at half load; a new stretch takes a new number, which empties
every slot tagged with an older one at no cost. At most :data:`LIMIT` positions of one stretch are
kept; once a stretch has that many, further positions are not recorded (moves to them are not masked,
and ``revisit`` is ``False`` for them) until the progress changes, and the env then relies on its time
limit to end the episode. In random play a stretch rarely reaches a few hundred positions.

**The mask** needs the key of a legal move's result only where that result could have been seen. In
Rank and File and Number Ten, a filter kept with each stretch's keys says on which piles each card
has lain in the stretch; a move that puts a run onto a pile its bottom card has never lain on leads
to an unseen position, and its key is never computed (:func:`_tableau_moves_back`).

**The batched step** (:func:`step_batch`) keeps each env's pile hashes between steps
(:attr:`History.hashes`) and hashes again only the piles the move played changed (every pile after a
reset); :func:`record`, which is not told the move, hashes every pile.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from solitaire_env.engine import core, features
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    A_FIRST,
    HIDDEN,
    O_DOWN,
    O_FCNT,
    O_LEN,
    O_NRES,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RESDOWN,
    O_TAB,
    OB_FOUND,
    OB_SIZE,
    OB_TAB,
    OB_WASTE,
    SP_AUTOFILL,
    SP_CAP,
    SP_FOUND,
    SP_N_ACTIONS,
    SP_PILES,
    SP_STATE_SIZE,
    SP_WHOLE,
    SP_WRAP,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_TABLEAU,
    WASTE_TO_EMPTY,
    Variant,
)

_jit = njit(cache=True, nogil=True)
# Helpers called per move or per env are inlined into their callers: a call passing arrays cost more
# than the work of most of them.
_inline = njit(cache=True, nogil=True, inline="always")

SLOTS = 4096  # table slots per env (a power of two)
LIMIT = 3 * SLOTS // 4  # positions kept per stretch
FIRST_SIZE = 64  # slots a stretch starts with
# Columns of an env's bookkeeping row: positions kept, slots in use, the stretch's progress, whether a
# position went unrecorded because the stretch was full, where in the row a small table lies, and the
# stretch's number (slots tagged with another number are empty, so a new stretch empties none).
M_COUNT, M_SIZE, M_PROGRESS, M_FULL, M_SPREAD, M_GEN, M_HASHED = range(7)
META = 7  # M_HASHED: the env's pile hashes (History.hashes) are those of its last position recorded
KEY_WORDS = 8  # a 512-bit filter per stretch: most keys not kept are rejected without a probe
# and 512 bits per stretch of which card has lain on which pile (see _tableau_moves_back)
FILTER_WORDS = 2 * KEY_WORDS
_LOW = np.uint64((1 << 48) - 1)  # a slot holds a key's low 48 bits and the stretch's 16-bit number
_GEN_SHIFT = np.uint64(48)
_MAX_GEN = (1 << 16) - 1

MAX_PILES, MAX_DEPTH, MAX_OBS = 16, 64, 512
# Fixed random numbers (PCG64's raw stream is the same in every numpy version), so keys are the same
# in every process: an odd multiplier per depth in a pile and per other observation entry, and a
# number per pile for the piles that keep their identity.
_RAW = np.random.PCG64(0x51EE9).random_raw(MAX_DEPTH + MAX_OBS + MAX_PILES).astype(np.uint64)
DEPTH = _RAW[:MAX_DEPTH] | np.uint64(1)
ENTRY = _RAW[MAX_DEPTH : MAX_DEPTH + MAX_OBS] | np.uint64(1)
PILE_SALT = _RAW[MAX_DEPTH + MAX_OBS :]
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TAG_FOUND, _TAG_KEY = np.uint64(0xF0 << 56), np.uint64(0x4B << 56)


def check_fits(variant: Variant) -> None:
    """``ValueError`` if ``variant`` has more piles, deeper piles or a longer observation than the key's tables."""
    if variant.piles > MAX_PILES or variant.pile_capacity > MAX_DEPTH or variant.obs_size > MAX_OBS:
        raise ValueError(f"{variant.title} is too large for the position key's tables")


@intrinsic
def _prefetch(typingctx, table, row, col):
    """Start loading ``table[row, col]`` into the cache without waiting for it (``llvm.prefetch``): a
    table slot is a cache miss, and the work in between can hide it."""
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        idx = [context.cast(builder, args[1], sig.args[1], types.intp),
               context.cast(builder, args[2], sig.args[2], types.intp)]
        ptr = cgutils.get_item_pointer(context, builder, sig.args[0], ary, idx, wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(table, row, col), codegen


@_inline
def _ix(x):
    """``x`` (never negative: every caller has checked) as an index numba uses with no wraparound test.
    A signed index gets one (a negative index counts from the end), and in the per-move loops of the
    no-revisit mask those tests took about a quarter of its time (docs/results.md, 2026-12-02)."""
    return np.uint64(x)


@_inline
def _mix(x):
    """splitmix64's finaliser: a well-spread 64-bit value from any 64-bit value."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@_inline
def _nonzero(x):
    return x if x != 0 else np.uint64(1)  # 0 marks an empty slot


# --- keys -----------------------------------------------------------------------------------------


@_inline
def _rehash_pile(codes, sp, work, p) -> None:
    """:func:`_pile_sums`' two hashes of pile ``p`` alone."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    tab = codes[_ix(sp[OB_TAB] + p * cap) : _ix(sp[OB_TAB] + (p + 1) * cap)]
    h = np.uint64(0)
    for k in range(cap):
        h += np.uint64(tab[k]) * DEPTH[k]
    if tab[0] == HIDDEN:
        h += PILE_SALT[_ix(p)]
    work[_ix(p)] = h
    work[_ix(piles + p)] = _mix(h)


@_inline
def _pile_sums(codes, sp, work):
    """Hash each pile's observation codes (``work[p]``: a linear form, one odd multiplier per depth, so
    it changes by a known amount when a card moves; a pile with face-down cards adds its own number)
    and mix it (``work[piles + p]``); return the sum of the mixed hashes, whose order does not matter."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    tab = codes[sp[OB_TAB] : sp[OB_TAB] + piles * cap]
    total = np.uint64(0)
    for p in range(piles):
        h = np.uint64(0)
        for k in range(cap):  # every slot, empty ones (code 0) too: no branch, and it vectorizes
            h += np.uint64(tab[p * cap + k]) * DEPTH[k]
        if tab[p * cap] == HIDDEN:
            h += PILE_SALT[p]
        work[p] = h
        work[piles + p] = _mix(h)
        total += work[piles + p]
    return total


@_jit
def tableau_key(codes, sp) -> np.uint64:
    """The key the table keeps: the tableau's part of :func:`position_key` (never 0), all that differs
    between the positions of one stretch. ``codes``: the observation."""
    return _nonzero(_pile_sums(codes, sp, np.empty(2 * sp[SP_PILES], dtype=np.uint64)))


@_jit
def position_key(codes, sp) -> np.uint64:
    """The key of the position whose observation is ``codes`` (see the module doc); never 0."""
    total = _pile_sums(codes, sp, np.empty(2 * sp[SP_PILES], dtype=np.uint64))
    found = sp[OB_FOUND]
    for f in range(found, found + sp[SP_FOUND]):  # a multiset: which slot holds which pile never matters
        total += _mix(np.uint64(codes[f]) ^ _TAG_FOUND)
    for k in range(sp[OB_WASTE], sp[OB_SIZE]):
        if k < found or k >= found + sp[SP_FOUND]:
            total += np.uint64(codes[k]) * ENTRY[k]
    return _nonzero(_mix(total ^ _TAG_KEY))


@_inline
def _progress_with(s, sp, hidden) -> int:
    """:func:`_progress`, given the face-down cards on the table (tableau and reserve)."""
    found = 0
    for f in range(sp[SP_FOUND]):
        found += s[sp[O_FCNT] + f]
    return (np.int64(found) | np.int64(hidden) << 8
            | np.int64(s[sp[O_NSTOCK]]) << 16 | np.int64(s[sp[O_REDEALS]]) << 24
            | np.int64(s[sp[O_NWASTE]]) << 32 | np.int64(s[sp[O_NRES]]) << 40)


@_inline
def _progress(s, sp) -> int:
    """What only ever changes one way in an episode, packed for comparison: cards on the foundations,
    face-down cards, stock size and redeals left, waste size and reserve size."""
    hidden = s[sp[O_RESDOWN]]
    for p in range(sp[SP_PILES]):
        hidden += s[sp[O_DOWN] + p]
    return _progress_with(s, sp, hidden)


# --- the table: row i of small, keys, meta and filt ----------------------------------------------
# A stretch's first FIRST_SIZE slots are a row of `small`, (N, FIRST_SIZE), so the tables of
# neighbouring envs lie next to each other; a stretch that outgrows them moves to a window of its row
# of `keys`, (N, SLOTS).


@_inline
def _offset(keys, meta, i) -> int:
    """Where env ``i``'s table starts in its big row: spread over the row, since at the same place in
    every row (rows lie 32 KiB apart) the tables would compete for the same cache sets."""
    return (meta[_ix(i), M_SPREAD] * FIRST_SIZE) & (keys.shape[1] - meta[_ix(i), M_SIZE])


@_inline
def _filter_bit(key):
    return np.int64(key >> np.uint64(61)), np.uint64(1) << ((key >> np.uint64(55)) & np.uint64(63))


@_inline
def _tag(meta, i, key):
    return (key & _LOW) | (np.uint64(meta[_ix(i), M_GEN]) << _GEN_SHIFT)


# The probes take the table's array as an argument: a helper returning the array to use cost ten
# times as much as the probe (numba counts references to a returned array).
@_inline
def _find_in(table, i, off, mask, gen, tag) -> bool:
    j = np.int64(tag & np.uint64(mask))
    while table[_ix(i), _ix(off + j)] >> _GEN_SHIFT == gen:
        if table[_ix(i), _ix(off + j)] == tag:
            return True
        j = (j + 1) & mask
    return False


@_inline
def _place_in(table, i, off, mask, gen, tag) -> None:
    j = np.int64(tag & np.uint64(mask))
    while table[_ix(i), _ix(off + j)] >> _GEN_SHIFT == gen:
        j = (j + 1) & mask
    table[_ix(i), _ix(off + j)] = tag


@_inline
def _has(small, keys, meta, filt, i, key) -> bool:
    word, bit = _filter_bit(key)
    if filt[_ix(i), _ix(word)] & bit == 0:
        return False
    size, gen, tag = meta[_ix(i), M_SIZE], np.uint64(meta[_ix(i), M_GEN]), _tag(meta, i, key)
    if size <= small.shape[1]:
        return _find_in(small, i, 0, size - 1, gen, tag)
    return _find_in(keys, i, _offset(keys, meta, i), size - 1, gen, tag)


@_inline
def _prefetch_slot(small, keys, meta, i, key) -> None:
    """Start loading the slot where a probe for ``key`` begins (as :func:`_has` finds it)."""
    size, tag = meta[_ix(i), M_SIZE], _tag(meta, i, key)
    j = np.int64(tag & np.uint64(size - 1))
    if size <= small.shape[1]:
        _prefetch(small, i, j)
    else:
        _prefetch(keys, i, _offset(keys, meta, i) + j)


@_inline
def _place(small, keys, meta, i, tag) -> None:
    size, gen = meta[i, M_SIZE], np.uint64(meta[i, M_GEN])
    if size <= small.shape[1]:
        _place_in(small, i, 0, size - 1, gen, tag)
    else:
        _place_in(keys, i, _offset(keys, meta, i), size - 1, gen, tag)


@_jit
def _take_all(table, i, off, size, gen, spare) -> int:
    """Move the stretch's keys from ``table[i, off : off + size]`` into ``spare``; return how many."""
    n = 0
    for j in range(off, off + size):
        if table[i, j] >> _GEN_SHIFT == gen:
            spare[n] = table[i, j]
            n += 1
        table[i, j] = 0  # the larger window may overlap this one
    return n


@_inline
def _insert(small, keys, meta, filt, i, key, spare) -> None:
    """Keep ``key`` (not kept yet) for env ``i``, unless its stretch is full. ``spare``: uint64 work
    space of ``keys.shape[1] // 2``."""
    count, size = meta[i, M_COUNT], meta[i, M_SIZE]
    if 4 * count >= 3 * keys.shape[1]:
        meta[i, M_FULL] = 1
        return
    if 2 * (count + 1) > size and size < keys.shape[1]:  # double the table, placing every key anew
        gen = np.uint64(meta[i, M_GEN])
        if size <= small.shape[1]:
            n = _take_all(small, i, 0, size, gen, spare)
        else:
            n = _take_all(keys, i, _offset(keys, meta, i), size, gen, spare)
        meta[i, M_SIZE] = 2 * size
        for t in range(n):
            _place(small, keys, meta, i, spare[t])
    _place(small, keys, meta, i, _tag(meta, i, key))
    meta[i, M_COUNT] = count + 1
    word, bit = _filter_bit(key)
    filt[i, word] |= bit


@_inline
def _clear(small, keys, meta, filt, i) -> None:
    """Start a new stretch: a new number empties every slot, so nothing needs zeroing (but the rows,
    once every 65,535 stretches, when the numbers start again)."""
    gen = meta[i, M_GEN] + 1
    if gen > _MAX_GEN:
        for j in range(small.shape[1]):
            small[i, j] = 0
        for j in range(keys.shape[1]):
            keys[i, j] = 0
        gen = 1
    meta[i, M_GEN] = gen
    meta[i, M_COUNT], meta[i, M_SIZE], meta[i, M_FULL] = 0, min(FIRST_SIZE, small.shape[1]), 0
    for w in range(filt.shape[1]):
        filt[i, w] = 0


# --- where a move leads ---------------------------------------------------------------------------
# Arrays are indexed through views starting at their field (as in _pile_sums), or with _ix: an index
# numba cannot prove non-negative gets a wraparound test, which also kept the hash loops from vectorizing.


@_inline
def _scan_tableau(s, codes, sp, hw, all_piles, src, dst):
    """:func:`_pile_sums` (``hw``: uint64 of ``2 * piles``) and what the child keys need besides:
    returns (the sum of the mixed pile hashes, the lowest empty pile or -1, face-down cards on the table).
    Unless ``all_piles``, ``hw`` holds the hashes of a position that differs from this one in piles
    ``src`` and ``dst`` (-1: none) at most, and only those are hashed again."""
    piles = sp[SP_PILES]
    if all_piles:
        total = _pile_sums(codes, sp, hw)
    else:
        if src >= 0:
            _rehash_pile(codes, sp, hw, src)
        if dst >= 0:
            _rehash_pile(codes, sp, hw, dst)
        total = np.uint64(0)
        for p in range(piles):
            total += hw[_ix(piles + p)]
    lens, downs = s[_ix(sp[O_LEN]) : _ix(sp[O_LEN] + piles)], s[_ix(sp[O_DOWN]) : _ix(sp[O_DOWN] + piles)]
    hidden = np.int64(s[sp[O_RESDOWN]])
    for p in range(piles):
        hidden += downs[p]
    empty = -1
    for p in range(piles):
        if lens[p] == 0:
            empty = p
            break
    return total, empty, hidden


@_inline
def _moved_key(s, codes, sp, src, dst, count, hw, total):
    """The table key after the top ``count`` cards of pile ``src`` go onto pile ``dst``, in order, when
    nothing turns up and nothing refills an emptied pile: only the two piles change."""
    piles, cap, o_len = sp[SP_PILES], sp[SP_CAP], sp[O_LEN]
    m, nj = np.int64(s[_ix(o_len + src)]) - count, np.int64(s[_ix(o_len + dst)])
    first = sp[OB_TAB] + src * cap + m  # the moved cards' codes, as the observation has them
    hs, hd = hw[_ix(src)], hw[_ix(dst)]
    for t in range(count):
        code = np.uint64(codes[_ix(first + t)])
        hs -= code * DEPTH[_ix(m + t)]
        hd += code * DEPTH[_ix(nj + t)]
    return _nonzero(total - hw[_ix(piles + src)] - hw[_ix(piles + dst)] + _mix(hs) + _mix(hd))


@_jit
def _played_key(s, sp, actions, a, prog, scratch, scratch_codes) -> np.uint64:
    """:func:`_child_key` for a move that empties a pile the reserve may refill: played on a copy."""
    for k in range(s.shape[0]):  # a loop: numba's slice assignment took ten times as long
        scratch[k] = s[k]
    core.apply_action(scratch, sp, actions, a)
    if _progress(scratch, sp) != prog:
        return np.uint64(0)
    core.observe(scratch, sp, scratch_codes)
    return tableau_key(scratch_codes, sp)


@_inline
def _child_key(s, codes, sp, actions, a, hw, total, prog, empty, scratch, scratch_codes):
    """The table key of the position legal action ``a`` leads to, or 0 when that position's progress
    differs from this one's (so it cannot have been seen). ``hw``, ``total``, ``empty``: from
    :func:`_scan_tableau`."""
    kind, src = actions[a, 0], actions[a, 1]
    n, d = np.int64(s[sp[O_LEN] + src]), np.int64(s[sp[O_DOWN] + src])
    if kind == TABLEAU_TO_TABLEAU:
        dst = actions[a, 2]
        count = core.fitting_count(s, sp, src, dst)
    elif kind == TABLEAU_TO_EMPTY:
        dst, count = empty, actions[a, 3]
    else:
        return np.uint64(0)  # from the stock, waste or reserve, or to a foundation: progress changes
    if n - count == d and d > 0:
        return np.uint64(0)  # no pile has a face-down top: the card under the moved ones turns up
    if n - count > d or sp[SP_AUTOFILL] == 0:
        return _moved_key(s, codes, sp, src, dst, count, hw, total)
    return _played_key(s, sp, actions, a, prog, scratch, scratch_codes)


@_inline
def _mark(small, keys, meta, filt, i, a, child, mask, seen, want_seen, no_revisit) -> int:
    """Flag (``seen``) and mask out legal move ``a`` when its ``child`` key is kept; returns the moves
    it took out of ``mask`` (0 or 1)."""
    if child != 0 and _has(small, keys, meta, filt, i, child):
        if want_seen:
            seen[_ix(a)] = 1
        if no_revisit:
            mask[_ix(a)] = 0
            return 1
    return 0


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
def _pair_bit(x, under):
    """(word, bit) of "code ``x`` lay on the pile whose linear hash is ``under``" in the filter."""
    h = (under + np.uint64(x) * _M1) * _M2
    return KEY_WORDS + np.int64(h >> np.uint64(61)), np.uint64(1) << ((h >> np.uint64(55)) & np.uint64(63))


@_inline
def _add_pairs(s, codes, sp, facts, filt, i, hw, p, new) -> None:
    """The pairs of pile ``p``'s top ``new`` cards (at most its run's): each lies on the rest of its pile."""
    cap = sp[SP_CAP]
    pile = sp[OB_TAB] + p * cap
    n, part = np.int64(s[_ix(sp[O_LEN] + p)]), np.uint64(0)
    for k in range(1, min(new, facts[_ix(sp[SP_PILES] + p)]) + 1):
        x = codes[_ix(pile + n - k)]
        part += np.uint64(x) * DEPTH[_ix(n - k)]
        word, bit = _pair_bit(x, hw[_ix(p)] - part)
        filt[_ix(i), _ix(word)] |= bit


@_inline
def _new_pairs(s, sp, facts, src, dst, landed):
    """How many of the top cards of piles ``src`` and ``dst`` make pairs the filter lacks, after a move
    within the stretch put ``landed`` cards from ``src`` onto ``dst`` (0 or less: not known; then every
    top-run card of both). The filter holds the pairs of the position before the move: the cards under
    the moved ones in ``dst`` lie where they lay, and so do those left in ``src`` when they were part of
    the run that moved (the moved cards built on them); only if the whole run left does ``src`` show a
    new run, whose pairs are all new."""
    piles = sp[SP_PILES]
    if landed <= 0 or src < 0 or dst < 0:
        return facts[piles + src] if src >= 0 else 0, facts[piles + dst] if dst >= 0 else 0
    ns = np.int64(s[_ix(sp[O_LEN] + src)])
    if ns == 0:
        return 0, landed
    cap, tab = sp[SP_CAP], sp[O_TAB]
    bottom = s[_ix(tab + dst * cap + s[_ix(sp[O_LEN] + dst)] - landed)]  # the moved run's bottom card
    below = s[_ix(tab + src * cap + ns - 1)]  # what it lay on
    return (0 if core.BUILDS[0, _ix(bottom), _ix(below)] else facts[_ix(piles + src)]), landed


@_inline
def _tableau_moves_back(s, codes, sp, actions, mask, small, keys, meta, filt, i, facts, hw, candidates, total,
                        empty, seen, want_seen, no_revisit, all_pairs, src, dst, landed, key, spare, pending):
    """Record this position's pairs (above: all piles' if ``all_pairs``, else those of piles ``src`` and
    ``dst``, -1 for none) and its ``key``, then flag or mask the legal moves between piles and into an
    empty pile that lead to a kept position; returns (whether ``key`` was kept already, how many moves it
    took out of ``mask``, the rules' mask on entry, and how many legal moves it listed in ``candidates``).
    The keys to probe are computed first (into ``pending``, uint64 of ``2 * n_actions``) and their slots
    prefetched, then probed after the key is kept: the misses overlap instead of following each other.
    ``facts``, ``hw``, ``total``, ``empty``, ``spare``: as in :func:`_record`."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    tab = sp[OB_TAB]
    first_tt, first_te = sp[A_FIRST + TABLEAU_TO_TABLEAU], sp[A_FIRST + TABLEAU_TO_EMPTY]
    if all_pairs:
        for p in range(piles):
            _add_pairs(s, codes, sp, facts, filt, i, hw, p, facts[piles + p])
    else:
        new_src, new_dst = _new_pairs(s, sp, facts, src, dst, landed)
        if src >= 0:
            _add_pairs(s, codes, sp, facts, filt, i, hw, src, new_src)
        if dst >= 0:
            _add_pairs(s, codes, sp, facts, filt, i, hw, dst, new_dst)
    # The legal moves, listed without a branch per action (which are legal is unpredictable); the
    # moves into an empty pile come last in the table.
    last = sp[SP_N_ACTIONS] if empty >= 0 and first_te >= 0 else (first_te if first_te >= 0 else sp[SP_N_ACTIONS])
    found = 0
    for a in range(first_tt, last):
        candidates[_ix(found)] = a
        found += mask[_ix(a)] != 0
    ranks = facts[2 * piles : 3 * piles]
    # Which of them may lead back, listed without a branch per move as well (whether a move passes the
    # pair test is as unpredictable as whether it is legal): a move that turns a card up changes the
    # progress, and one whose pair the filter lacks leads to a position not kept.
    passed = 0
    for c in range(found):
        a = candidates[_ix(c)]
        fro = actions[_ix(a), 1]
        if first_te >= 0 and a >= first_te:
            to, k = empty, actions[_ix(a), 3]
        else:
            to = actions[_ix(a), 2]
            k = ranks[_ix(to)] - ranks[_ix(fro)]  # core.fitting_count
        n, d = np.int64(s[_ix(sp[O_LEN] + fro)]), np.int64(s[_ix(sp[O_DOWN] + fro)])
        # (an empty pile's hash is 0)
        word, bit = _pair_bit(codes[_ix(tab + fro * cap + n - k)], hw[_ix(to)])
        spare[_ix(2 * passed)], spare[_ix(2 * passed + 1)] = a, k  # (spare is free until _insert below)
        passed += ((filt[_ix(i), _ix(word)] & bit) != 0) & ((n - k != d) | (d == 0))
    n_pending = 0
    for c in range(passed):
        a, k = np.int64(spare[_ix(2 * c)]), np.int64(spare[_ix(2 * c + 1)])
        fro = actions[_ix(a), 1]
        to = empty if first_te >= 0 and a >= first_te else actions[_ix(a), 2]
        child = _moved_key(s, codes, sp, fro, to, k, hw, total)
        word, bit = _filter_bit(child)
        _prefetch_slot(small, keys, meta, i, child)
        pending[_ix(2 * n_pending)], pending[_ix(2 * n_pending + 1)] = child, np.uint64(a)
        # else _has answers without a probe (key: kept below)
        n_pending += ((filt[_ix(i), _ix(word)] & bit) != 0) | (child == key)
    was_seen = _has(small, keys, meta, filt, i, key)
    if not was_seen:
        _insert(small, keys, meta, filt, i, key, spare)
    taken = 0
    for c in range(n_pending):
        taken += _mark(small, keys, meta, filt, i, np.int64(pending[_ix(2 * c + 1)]), pending[_ix(2 * c)], mask,
                       seen, want_seen, no_revisit)
    return was_seen, taken, found


@_inline
def _record(s, codes, sp, actions, mask, n_legal, small, keys, meta, filt, i, clear, no_revisit, facts, hw,
            scratch, scratch_codes, candidates, spare, pending, seen, rehash, src, dst, landed):
    """:func:`record`, inlined into the batched kernel (a call passing this many arrays cost more than
    much of its work). ``facts``: :func:`core._pile_facts` of ``s``, which :func:`core._legal_mask` leaves
    in its work space. ``hw``: env ``i``'s pile hashes; unless ``rehash``, ``clear`` or the row was never
    hashed, those of the last position recorded, from which only piles ``src`` and ``dst`` (-1: none)
    may differ. Returns (whether ``s`` had been seen, moves left in ``mask``, the lowest empty pile, and
    how many moves ``candidates`` lists: the legal moves between piles and into an empty pile, or -1 when
    none were listed)."""
    all_piles = rehash or clear or meta[i, M_HASHED] == 0
    total, empty, hidden = _scan_tableau(s, codes, sp, hw, all_piles, src, dst)
    meta[i, M_HASHED] = 1
    key = _nonzero(total)
    prog = _progress_with(s, sp, hidden)
    new_stretch = clear or meta[i, M_SIZE] == 0 or prog != meta[i, M_PROGRESS]
    if new_stretch:
        _clear(small, keys, meta, filt, i)
        meta[i, M_PROGRESS] = prog
    _prefetch_slot(small, keys, meta, i, key)  # probed below, after the pairs and the moves' keys
    want_seen = seen.shape[0] > 0
    for a in range(seen.shape[0]):
        seen[a] = 0
    listed = -1
    filtered = sp[SP_WHOLE] == 0 and sp[SP_AUTOFILL] == 0 and sp[SP_WRAP] == 0  # (see _tableau_moves_back)
    if (no_revisit or want_seen) and n_legal > 0 and filtered:
        was_seen, taken, listed = _tableau_moves_back(s, codes, sp, actions, mask, small, keys, meta, filt, i, facts,
                                                      hw, candidates, total, empty, seen, want_seen, no_revisit,
                                                      new_stretch or all_piles, src, dst, landed, key, spare, pending)
        return was_seen, n_legal - taken, empty, listed
    was_seen = _has(small, keys, meta, filt, i, key)
    if not was_seen:
        _insert(small, keys, meta, filt, i, key, spare)
    if (no_revisit or want_seen) and n_legal == 0:
        listed = 0
    elif no_revisit or want_seen:
        first, last = sp[A_FIRST + TABLEAU_TO_TABLEAU], sp[SP_N_ACTIONS]
        if empty < 0 and sp[A_FIRST + TABLEAU_TO_EMPTY] >= 0:
            last = sp[A_FIRST + TABLEAU_TO_EMPTY]  # with no empty pile, no move into one
        # The other legal tableau moves (their kinds come last in the table, moves into an empty pile
        # last of all), listed without a branch per action: which actions are legal is unpredictable,
        # and mispredictions cost more than the list.
        found = 0
        for a in range(first, last):
            candidates[found] = a
            found += mask[a] != 0
        for c in range(found):
            a = candidates[c]
            child = _child_key(s, codes, sp, actions, a, hw, total, prog, empty, scratch, scratch_codes)
            n_legal -= _mark(small, keys, meta, filt, i, a, child, mask, seen, want_seen, no_revisit)
        listed = found
    return was_seen, n_legal, empty, listed


@_jit
def record(s, codes, sp, actions, mask, n_legal, small, keys, meta, filt, hashes, i, clear, no_revisit, facts,
           scratch, scratch_codes, candidates, spare, pending, seen):
    """Record position ``s`` (observation ``codes``) in the table of env ``i`` (row ``i`` of the
    :class:`History` arrays) and, with ``no_revisit``, take out of ``mask`` every legal move to a
    position the table holds. ``mask``: the rules' legal moves in ``s``. ``clear``: a new episode starts
    here. Returns (whether ``s`` had been seen, moves left in ``mask``). ``facts`` .. ``spare``:
    :func:`work_space` (separate arrays: unpacking a tuple of arrays costs reference counting; its
    pile hashes are not used: every pile is hashed into ``hashes[i]``, as no move is known).
    ``seen``: int8 of ``n_actions`` to get a 1 for each legal move to a position the table holds
    (whether masked or not), or an empty array."""
    core._pile_facts(s, sp, facts)
    was_seen, left, _, _ = _record(s, codes, sp, actions, mask, n_legal, small, keys, meta, filt, i, clear, no_revisit,
                                facts, hashes[i], scratch, scratch_codes, candidates, spare, pending, seen, True,
                                   -1, -1, 0)
    return was_seen, left


@_jit
def work_space(sp):
    """:func:`record`'s work space: pile facts, pile hashes, a state and an observation
    to play moves on, the list of legal moves, room to move a table's keys when it grows, and the keys
    to probe with their moves."""
    return (core._scratch(sp), np.empty(2 * sp[SP_PILES], dtype=np.uint64),
            np.empty(sp[SP_STATE_SIZE], dtype=np.int8), np.empty(sp[OB_SIZE], dtype=np.int16),
            np.empty(sp[SP_N_ACTIONS], dtype=np.int64), np.empty(SLOTS // 2, dtype=np.uint64),
            np.empty(2 * sp[SP_N_ACTIONS], dtype=np.uint64))


@_jit
def child_keys(s, codes, sp, actions, mask, out) -> None:
    """``out[a]``: what :func:`record` compares for each legal action ``a``: the :func:`tableau_key` of
    the position it leads to, or 0 where that position's progress differs (for tests)."""
    _, hw, scratch, scratch_codes, _, _, _ = work_space(sp)
    total, empty, hidden = _scan_tableau(s, codes, sp, hw, True, -1, -1)
    prog = _progress_with(s, sp, hidden)
    for a in range(sp[SP_N_ACTIONS]):
        out[a] = np.uint64(0)
        if mask[a] != 0:
            out[a] = _child_key(s, codes, sp, actions, a, hw, total, prog, empty, scratch, scratch_codes)


# --- many games at once ---------------------------------------------------------------------------


@_inline
def _piles_moved(s, sp, actions, a):
    """The tableau piles action ``a`` may change, as (source, target), -1 for none: read before the move
    (a move into an empty pile goes to the lowest one). A refill from the reserve lands on the source."""
    if a < 0:
        return -1, -1
    kind, src, dst = actions[_ix(a), 0], actions[_ix(a), 1], actions[_ix(a), 2]
    if kind == TABLEAU_TO_EMPTY or kind == WASTE_TO_EMPTY:
        dst = -1
        for p in range(sp[SP_PILES]):
            if s[_ix(sp[O_LEN] + p)] == 0:
                dst = p
                break
    return src, dst


def _step_batch(states, sp, actions, acts, masks, obs, gained, revealed, n_legal, found, clear, small, keys, meta,
                filt, hashes, revisit, n_rules, seen, no_revisit, act_out) -> None:
    """:func:`core.step_batch`, then :func:`record` for each game (``clear``: its episode starts here;
    ``acts[i]`` at or below ``core.SKIP``: game ``i`` is left alone),
    and its action features into ``act_out[i]`` when ``act_out`` has rows (one pass over the envs: their
    arrays are still in cache). The pile hashes of ``hashes[i]`` are kept from step to step: only the
    piles the move changed are hashed again."""
    work = work_space(sp)
    want_actions = act_out.shape[1] > 0
    b = core.borrowed  # no reference counting in the loop (see there): the helpers take many arrays
    states, sp, actions, masks, obs, small, keys, meta, filt, hashes = (
        b(states), b(sp), b(actions), b(masks), b(obs), b(small), b(keys), b(meta), b(filt), b(hashes))
    seen, act_out = b(seen), b(act_out)
    facts, scratch, scratch_codes, candidates, spare, pending = (
        b(work[0]), b(work[2]), b(work[3]), b(work[4]), b(work[5]), b(work[6]))
    n_envs = states.shape[0]
    for i in range(n_envs):
        if acts[i] <= core.SKIP:  # (reset_envs: only the games dealt anew)
            continue
        if i + 2 < n_envs:  # the next envs' rows of the history arrays, to be in cache when their turn comes
            j = i + 2
            _prefetch(meta, j, 0)
            _prefetch(filt, j, 0)
            _prefetch(filt, j, 8)
            _prefetch(hashes, j, 0)
            _prefetch(hashes, j, hashes.shape[1] - 1)
            for w in range(0, small.shape[1], 8):
                _prefetch(small, j, w)
        s, mask, codes = states[i], masks[i], obs[i]
        src, dst = _piles_moved(s, sp, actions, acts[i])
        had = np.int64(s[_ix(sp[O_LEN] + dst)]) if dst >= 0 else 0
        g, r, nl, f = core._step_one_work(s, sp, actions, acts[i], mask, codes, facts)
        gained[i], revealed[i], found[i], n_rules[i] = g, r, f, nl
        landed = np.int64(s[_ix(sp[O_LEN] + dst)]) - had if dst >= 0 else 0
        was_seen, left, empty, listed = _record(s, codes, sp, actions, mask, nl, small, keys, meta, filt, i,
                                                clear[i], no_revisit, facts, hashes[i], scratch, scratch_codes,
                                                candidates, spare, pending, seen[i], False, src, dst, landed)
        revisit[i], n_legal[i] = was_seen, left
        if want_actions:  # (the moves between piles _record listed are not listed again)
            features._action_rows(s, sp, actions, codes, mask, seen[i], act_out[i], facts, empty, candidates,
                                  listed, scratch)
    core.keep_alive(work)


step_batch_serial = _jit(_step_batch)


def step_batch_parallel(states, sp, actions, acts, masks, obs, gained, revealed, n_legal, found, clear, small, keys,
                        meta, filt, hashes, revisit, n_rules, seen, no_revisit, act_out) -> None:
    core._in_chunks(step_batch_serial,
                    (states, acts, masks, obs, gained, revealed, n_legal, found, clear, small, keys, meta, filt,
                     hashes, revisit, n_rules, seen, act_out),
                    (sp, actions, no_revisit), lambda b, s: (b[0], s[0], s[1], *b[1:17], s[2], b[17]))


def step_batch(states, sp, actions, acts, masks, obs, gained, revealed, n_legal, found, clear, small, keys, meta,
               filt, hashes, revisit, n_rules, seen, no_revisit, act_out) -> None:
    """Step every game (``acts[i] < 0``: no move), then record its position: :func:`core.step_batch` with
    the history, in threads for large batches. ``hashes``: :attr:`History.hashes`. ``seen``:
    ``(N, n_actions)`` for :func:`record`'s flags, or ``(N, 0)``. ``act_out``: ``(N, n_actions, 11)``
    for the action features (:mod:`solitaire_env.engine.features`), or ``(N, 0, 0)``."""
    kernel = step_batch_parallel if len(states) >= core.PARALLEL_MIN_BATCH else step_batch_serial
    kernel(states, sp, actions, acts, masks, obs, gained, revealed, n_legal, found, clear, small, keys, meta, filt,
           hashes, revisit, n_rules, seen, no_revisit, act_out)


class History:
    """The tables of ``n`` envs, for :func:`step_batch` or one env at a time (:meth:`record`).

    Memory: ``8 * (SLOTS + FIRST_SIZE)`` bytes an env (32.5 KiB) and ``8 * (META + FILTER_WORDS)
    + 16 * piles`` more (344 for Rank and File), allocated zeroed, so the pages of big rows no stretch
    grew into cost nothing until used. ``hashes``: each env's pile hashes (as :func:`_pile_sums`
    leaves them), kept between steps.
    """

    def __init__(self, variant: Variant, n: int) -> None:
        check_fits(variant)
        self.variant = variant
        self.small = np.zeros((n, FIRST_SIZE), dtype=np.uint64)
        self.keys = np.zeros((n, SLOTS), dtype=np.uint64)
        self.meta = np.zeros((n, META), dtype=np.int64)
        self.meta[:, M_SPREAD] = np.arange(n)
        self.filt = np.zeros((n, FILTER_WORDS), dtype=np.uint64)
        self.hashes = np.zeros((n, 2 * variant.piles), dtype=np.uint64)
        self._work = work_space(variant.spec)
        self._no_seen = np.zeros(0, dtype=np.int8)

    def record(self, i: int, state: np.ndarray, codes: np.ndarray, mask: np.ndarray, n_legal: int, clear: bool,
               no_revisit: bool, seen: np.ndarray | None = None) -> tuple[bool, int]:
        """:func:`record` for env ``i``: (whether ``state`` had been seen, legal moves left in ``mask``)."""
        v = self.variant
        facts, _, scratch, scratch_codes, candidates, spare, pending = self._work
        was_seen, left = record(state, codes, v.spec, v.actions, mask, n_legal, self.small, self.keys, self.meta,
                                self.filt, self.hashes, i, clear, no_revisit, facts, scratch, scratch_codes, candidates,
                                spare, pending, self._no_seen if seen is None else seen)
        return bool(was_seen), int(left)

    @property
    def nbytes(self) -> int:
        return self.small.nbytes + self.keys.nbytes + self.meta.nbytes + self.filt.nbytes + self.hashes.nbytes


drop_stale_cache(__name__)

__all__ = ["LIMIT", "SLOTS", "History", "child_keys", "position_key", "record", "step_batch", "tableau_key"]
