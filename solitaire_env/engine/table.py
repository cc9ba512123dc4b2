"""The table of position keys each env keeps (:mod:`solitaire_env.engine.history` says what goes in).

Env ``i``'s table is row ``i`` of the arrays of :class:`Tables`: an open-addressing hash table of
:data:`SLOTS` 64-bit slots, plus a few words of bookkeeping. A stretch starts with :data:`FIRST_SIZE`
slots and doubles at half load; a new stretch takes a new number, which empties every slot tagged
with an older one at no cost. At most :data:`LIMIT` keys of one stretch are kept; once a stretch has
that many, further keys are not kept (``meta[i, M_FULL]`` says so).

A stretch's first ``FIRST_SIZE`` slots are a row of ``small``, ``(N, FIRST_SIZE)``, so the tables of
neighbouring envs lie next to each other; a stretch that outgrows them moves to a window of its row of
``keys``, ``(N, SLOTS)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from solitaire_env.engine.jit_cache import drop_stale_cache

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
META = 7  # M_HASHED: the env's pile hashes (Tables.hashes) are those of its last position recorded
KEY_WORDS = 8  # a 512-bit filter per stretch: most keys not kept are rejected without a probe
# and 512 bits per stretch of which card has lain on which pile (see history._tableau_moves_back)
FILTER_WORDS = 2 * KEY_WORDS
_LOW = np.uint64((1 << 48) - 1)  # a slot holds a key's low 48 bits and the stretch's 16-bit number
_GEN_SHIFT = np.uint64(48)
_MAX_GEN = (1 << 16) - 1


class Tables(NamedTuple):
    """The key tables of N envs, row ``i`` for env ``i`` (the compiled code takes them as one value)."""

    small: np.ndarray  # (N, FIRST_SIZE) uint64: a stretch's first slots
    keys: np.ndarray  # (N, SLOTS) uint64: the slots of a stretch that outgrew ``small``
    meta: np.ndarray  # (N, META) int64: the bookkeeping, columns M_*
    filt: np.ndarray  # (N, FILTER_WORDS) uint64: the key filter, then the pile-pair filter
    hashes: np.ndarray  # (N, 2 * piles) uint64: each pile's hashes in the last position recorded


def new_tables(n: int, piles: int) -> Tables:
    """Empty tables for ``n`` envs of a game with ``piles`` tableau piles, allocated zeroed (the pages
    of big rows no stretch grew into cost nothing until used)."""
    meta = np.zeros((n, META), dtype=np.int64)
    meta[:, M_SPREAD] = np.arange(n)
    return Tables(np.zeros((n, FIRST_SIZE), dtype=np.uint64), np.zeros((n, SLOTS), dtype=np.uint64), meta,
                  np.zeros((n, FILTER_WORDS), dtype=np.uint64), np.zeros((n, 2 * piles), dtype=np.uint64))


@intrinsic
def prefetch(typingctx, table, row, col):
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


@intrinsic
def ix(typingctx, x):
    """``x`` (never negative: every caller has checked) as an index numba uses with no wraparound test.
    A signed index gets one (a negative index counts from the end), and in the per-move loops of the
    no-revisit mask those tests took about a quarter of its time. An intrinsic (a cast in LLVM), not
    an inlined function: inlined helpers multiply its uses into the hundreds, and numba types every
    inlined copy anew (a quarter of the engine's compile time)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], types.uint64)
    return types.uint64(x), codegen


@_inline
def _offset(t, i) -> int:
    """Where env ``i``'s table starts in its big row: spread over the row, since at the same place in
    every row (rows lie 32 KiB apart) the tables would compete for the same cache sets."""
    return (t.meta[ix(i), M_SPREAD] * FIRST_SIZE) & (t.keys.shape[1] - t.meta[ix(i), M_SIZE])


@_inline
def filter_bit(key):
    """(word, bit) of ``key`` in the key filter."""
    return np.int64(key >> np.uint64(61)), np.uint64(1) << ((key >> np.uint64(55)) & np.uint64(63))


@_inline
def _tag(t, i, key):
    return (key & _LOW) | (np.uint64(t.meta[ix(i), M_GEN]) << _GEN_SHIFT)


# The probes take the table's array as an argument: a helper returning the array to use cost ten
# times as much as the probe (numba counts references to a returned array).
@_inline
def _find_in(table, i, off, mask, gen, tag) -> bool:
    j = np.int64(tag & np.uint64(mask))
    while table[ix(i), ix(off + j)] >> _GEN_SHIFT == gen:
        if table[ix(i), ix(off + j)] == tag:
            return True
        j = (j + 1) & mask
    return False


@_inline
def _place_in(table, i, off, mask, gen, tag) -> None:
    j = np.int64(tag & np.uint64(mask))
    while table[ix(i), ix(off + j)] >> _GEN_SHIFT == gen:
        j = (j + 1) & mask
    table[ix(i), ix(off + j)] = tag


@_inline
def has(t, i, key) -> bool:
    """Whether env ``i``'s table keeps ``key`` in the current stretch."""
    word, bit = filter_bit(key)
    if t.filt[ix(i), ix(word)] & bit == 0:
        return False
    size, gen, tag = t.meta[ix(i), M_SIZE], np.uint64(t.meta[ix(i), M_GEN]), _tag(t, i, key)
    if size <= t.small.shape[1]:
        return _find_in(t.small, i, 0, size - 1, gen, tag)
    return _find_in(t.keys, i, _offset(t, i), size - 1, gen, tag)


@_inline
def prefetch_slot(t, i, key) -> None:
    """Start loading the slot where a probe for ``key`` begins (as :func:`has` finds it)."""
    size, tag = t.meta[ix(i), M_SIZE], _tag(t, i, key)
    j = np.int64(tag & np.uint64(size - 1))
    if size <= t.small.shape[1]:
        prefetch(t.small, i, j)
    else:
        prefetch(t.keys, i, _offset(t, i) + j)


@_inline
def _place(t, i, tag) -> None:
    size, gen = t.meta[i, M_SIZE], np.uint64(t.meta[i, M_GEN])
    if size <= t.small.shape[1]:
        _place_in(t.small, i, 0, size - 1, gen, tag)
    else:
        _place_in(t.keys, i, _offset(t, i), size - 1, gen, tag)


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
def insert(t, i, key, spare) -> None:
    """Keep ``key`` (not kept yet) for env ``i``, unless its stretch is full. ``spare``: uint64 work
    space of ``SLOTS // 2``."""
    count, size = t.meta[i, M_COUNT], t.meta[i, M_SIZE]
    if 4 * count >= 3 * t.keys.shape[1]:
        t.meta[i, M_FULL] = 1
        return
    if 2 * (count + 1) > size and size < t.keys.shape[1]:  # double the table, placing every key anew
        gen = np.uint64(t.meta[i, M_GEN])
        if size <= t.small.shape[1]:
            n = _take_all(t.small, i, 0, size, gen, spare)
        else:
            n = _take_all(t.keys, i, _offset(t, i), size, gen, spare)
        t.meta[i, M_SIZE] = 2 * size
        for k in range(n):
            _place(t, i, spare[k])
    _place(t, i, _tag(t, i, key))
    t.meta[i, M_COUNT] = count + 1
    word, bit = filter_bit(key)
    t.filt[i, word] |= bit


@_inline
def clear(t, i) -> None:
    """Start a new stretch: a new number empties every slot, so nothing needs zeroing (but the rows,
    once every 65,535 stretches, when the numbers start again)."""
    gen = t.meta[i, M_GEN] + 1
    if gen > _MAX_GEN:
        for j in range(t.small.shape[1]):
            t.small[i, j] = 0
        for j in range(t.keys.shape[1]):
            t.keys[i, j] = 0
        gen = 1
    t.meta[i, M_GEN] = gen
    t.meta[i, M_COUNT], t.meta[i, M_SIZE], t.meta[i, M_FULL] = 0, min(FIRST_SIZE, t.small.shape[1]), 0
    for w in range(t.filt.shape[1]):
        t.filt[i, w] = 0


drop_stale_cache(__name__)

__all__ = ["FIRST_SIZE", "LIMIT", "SLOTS", "Tables", "clear", "has", "insert", "new_tables"]
