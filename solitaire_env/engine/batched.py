"""Many games in one compiled call: the env step of one game, and the batch of them.

The batched env keeps N games in the rows of a few arrays, named together in :class:`Batch`; one
call of :func:`step_batch` plays a move in each game (or none) and writes its rows: legal moves,
observation and counts. The step of one game is :func:`step_one`, which the single env calls too,
and the batched step with the position history (:func:`solitaire_env.engine.history.step_batch`)
runs the same per-game step, :func:`step_row`, with the history's work as a further stage.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache

_jit = njit(cache=True, nogil=True)


@intrinsic
def borrowed(typingctx, array):
    """``array`` without its reference count (numba's NRT meminfo): the views of it, and the copies of it
    that inlined helpers take as arguments, then skip the atomic increment and decrement numba makes
    for each (in the batched step with the position history they were a seventh of the time, profiled).
    Only for arrays something else keeps alive for the whole call (a kernel's arguments, or work arrays
    passed to :func:`keep_alive` after their last use), and never returned."""
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()
    return array(array), codegen


@intrinsic
def keep_alive(typingctx, value):
    """Nothing, but a use of ``value``: numba frees an array after its variable's last use, so a kernel
    that borrows (:func:`borrowed`) work arrays it made calls this on them after the last use of the
    borrowed ones."""
    def codegen(context, builder, sig, args):
        return context.get_dummy_value()
    return types.none(value), codegen


class Batch(NamedTuple):
    """The arrays of N games that the batched step reads and writes; row ``i`` (entry ``i``) is game ``i``."""

    states: np.ndarray  # (N, state_size) int8: the positions
    masks: np.ndarray  # (N, n_actions) int8: 1 for each legal move after the step
    codes: np.ndarray  # (N, obs_size) int16: the observations after the step
    gained: np.ndarray  # (N,) int64: cards the step put on the foundations (-1: one came back, Klondike)
    revealed: np.ndarray  # (N,) int64: face-down cards the step turned up
    n_legal: np.ndarray  # (N,) int64: legal moves after the step
    found: np.ndarray  # (N,) int64: cards on the foundations after the step


def new_batch(states: np.ndarray, masks: np.ndarray, codes: np.ndarray) -> Batch:
    """A :class:`Batch` of these positions and output arrays, with fresh count arrays."""
    n = len(states)
    return Batch(states, masks, codes, *(np.zeros(n, dtype=np.int64) for _ in range(4)))


@_jit
def step_one(s, sp, actions, a, mask, obs, work):
    """One env step (no move when ``a < 0``), ``work``: :func:`core._scratch` for :func:`core._legal_mask`.
    Returns (foundation cards gained, cards revealed, legal moves after, foundation cards after); the
    cards gained are -1 where a foundation's card came back to the tableau (Klondike)."""
    found0 = core.foundation_cards(s, sp)
    hidden0 = core.hidden_cards(s, sp)
    if a >= 0:
        core.apply_action(s, sp, actions, a)
    n_legal = core._legal_mask(s, sp, mask, work)
    core.observe(s, sp, obs)
    found = core.foundation_cards(s, sp)
    return found - found0, hidden0 - core.hidden_cards(s, sp), n_legal, found


@njit(cache=True, nogil=True, inline="always")
def step_row(batch, sp, actions, i, a, work) -> int:
    """:func:`step_one` for game ``i`` of ``batch``, its results into its rows; returns its legal moves."""
    g, r, n_legal, f = step_one(batch.states[i], sp, actions, a, batch.masks[i], batch.codes[i], work)
    batch.gained[i], batch.revealed[i], batch.n_legal[i], batch.found[i] = g, r, n_legal, f
    return n_legal


# An ``acts`` entry for a game the batched step leaves alone, its rows of every array unwritten (a
# batched env's ``reset_envs`` steps only the games it dealt anew, with -1: no move).
SKIP = -2


@njit(cache=True, nogil=True, inline="always")
def borrowed_batch(batch) -> Batch:
    """``batch`` with every array :func:`borrowed`: reading a field in the loop over the games then costs
    no reference counting (each field read and each row view is otherwise an atomic increment and
    decrement: 5-8% of the default step, measured). Only inside a kernel that has ``batch`` as an argument."""
    b = borrowed
    return Batch(b(batch.states), b(batch.masks), b(batch.codes), b(batch.gained), b(batch.revealed),
                 b(batch.n_legal), b(batch.found))


@_jit
def step_batch_serial(batch, sp, actions, acts) -> None:
    """Advance game ``i`` of ``batch`` by action ``acts[i]`` (none if negative; illegal ones change
    nothing; ``SKIP`` or below: not even observed), in the calling thread."""
    work = core._scratch(sp)
    batch = borrowed_batch(batch)
    for i in range(batch.states.shape[0]):
        if acts[i] > SKIP:
            step_row(batch, sp, actions, i, acts[i], work)


# Large batches run in threads, one contiguous chunk each (the kernels release the GIL). numba's own
# prange was no faster: taking a row view in the loop makes every thread bump the same reference
# count. Small batches (and training, where torch holds the cores) run in the calling thread.
PARALLEL_MIN_BATCH = 256
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity set where the OS has one (a container or
    ``taskset`` may allow fewer than the machine has), else the machine's count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _thread_pool(workers: int) -> ThreadPoolExecutor:
    """The shared pool, built once: two threads stepping their first large batches at once would each
    build one (and leak the other's threads) without the lock."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=workers - 1, thread_name_prefix="solitaire-env")
    return _pool


def rows(arrays: Any, lo: int, hi: int) -> Any:
    """Rows ``lo .. hi - 1`` of an array, or of every array of a named tuple of them (views)."""
    if isinstance(arrays, tuple):
        return type(arrays)(*(x[lo:hi] for x in arrays))
    return arrays[lo:hi]


def in_chunks(kernel: Callable, n: int, args_of: Callable[[int, int], tuple]) -> None:
    """``kernel(*args_of(lo, hi))`` for one contiguous chunk ``lo .. hi - 1`` of the ``n`` games per usable
    CPU: the pool's threads take all but the first, which the calling thread runs meanwhile (a hand-off
    less, and the caller works instead of waiting)."""
    workers = usable_cpus()
    bounds = [n * k // workers for k in range(workers + 1)]
    chunks = [args_of(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    jobs = [_thread_pool(workers).submit(kernel, *args) for args in chunks[1:]]
    try:
        kernel(*chunks[0])
    finally:
        for job in jobs:
            job.result()


def step_batch_parallel(batch: Batch, sp: np.ndarray, actions: np.ndarray, acts: np.ndarray) -> None:
    """:func:`step_batch_serial` in threads, a chunk of games each."""
    in_chunks(step_batch_serial, len(acts), lambda lo, hi: (rows(batch, lo, hi), sp, actions, acts[lo:hi]))


def step_batch(batch: Batch, sp: np.ndarray, actions: np.ndarray, acts: np.ndarray) -> None:
    """Advance every game of ``batch`` by its action in ``acts`` (see :func:`step_batch_serial`), in
    threads for large batches. ``sp``, ``actions``: the variant's spec and action table."""
    kernel = step_batch_parallel if len(acts) >= PARALLEL_MIN_BATCH else step_batch_serial
    kernel(batch, sp, actions, acts)


# The compiled functions hold variant.py's constants: a cache built from other sources is dropped here.
drop_stale_cache(__name__)

__all__ = ["PARALLEL_MIN_BATCH", "SKIP", "Batch", "new_batch", "step_batch", "step_one", "usable_cpus"]
