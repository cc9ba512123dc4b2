"""numpy's ``PCG64(seed).random_raw(n)`` for an integer seed, compiled: the draws behind every deal.

A deal is fixed by numpy's seeding (``SeedSequence``) and PCG64's raw 64-bit output, both of which
numpy keeps stable across versions (:func:`solitaire_env.engine.state.shuffled_deck`). Building the
numpy objects took 13-18 us a deal, more than the rest of a compiled deal, and the batched envs deal
a game at every episode end (Rainbow's last 120 steps). This module computes the same numbers from
the published algorithms, in a microsecond; tests compare it with numpy over thousands of seeds.

- ``SeedSequence(seed)``: the seed's 32-bit words (low first) are hashed into a pool of four words,
  the pool mixed word by word, and ``generate_state(4, uint64)`` hashes the pool into four 64-bit
  words (two 32-bit words each, low first) (O'Neill's seed_seq hash, as numpy implements it).
- ``PCG64``: a 128-bit LCG seeded with state words 0-1 and stream words 2-3 (high word first);
  each draw advances the state, then outputs its two halves XORed and rotated by its top 6 bits
  (XSL-RR).

Only seeds below ``2**64`` (one or two 32-bit words) are computed here; numpy serves larger ones.
numba has no 128-bit integers, so the LCG works on (high, low) pairs of 64-bit words, and every
32-bit step of the hash is masked, as numba computes unsigned arithmetic in 64 bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.jit_cache import drop_stale_cache

_jit = njit(cache=True, nogil=True)
_inline = njit(cache=True, nogil=True, inline="always")

_M32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
# SeedSequence's hash constants.
_INIT_A, _MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)
_INIT_B, _MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
_MIX_L, _MIX_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)
_XSHIFT = np.uint64(16)
# PCG's default 128-bit multiplier, high and low words.
_MUL_HI, _MUL_LO = np.uint64(2549297995355413924), np.uint64(4865540595714422341)

SEED_LIMIT = 2**64  # seeds from here on take numpy's path


@_inline
def _hash(value, const):
    """SeedSequence's ``hashmix``: (hashed value, next hash constant), all 32-bit."""
    value ^= const
    const = (const * _MULT_A) & _M32
    value = (value * const) & _M32
    return value ^ (value >> _XSHIFT), const


@_inline
def _mul_wide(a, b):
    """The 128-bit product of two 64-bit words as (high, low)."""
    a0, a1, b0, b1 = a & _M32, a >> _U32, b & _M32, b >> _U32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _U32) + (p01 & _M32) + (p10 & _M32)
    return p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32), (mid << _U32) | (p00 & _M32)


@_inline
def _advance(hi, lo, inc_hi, inc_lo):
    """One LCG step, state * multiplier + increment, modulo 2**128."""
    h, low = _mul_wide(lo, _MUL_LO)
    h += lo * _MUL_HI + hi * _MUL_LO  # the cross terms: only their low words reach the product's high word
    out = low + inc_lo
    return h + inc_hi + np.uint64(out < low), out  # (the carry as a uint64: a bool would make it a float)


@_jit
def fill_raw(seed, out) -> None:
    """``out[:] = numpy.random.PCG64(seed).random_raw(len(out))``; ``seed``: a ``uint64``."""
    words = (seed & _M32, seed >> _U32)
    n_words = 1 if words[1] == 0 else 2  # numpy's words of an int: none of them beyond its highest set one
    pool = np.empty(4, dtype=np.uint64)
    const = _INIT_A
    for i in range(4):  # the entropy into the pool, then zeros
        pool[i], const = _hash(words[i] if i < n_words else np.uint64(0), const)
    for i_src in range(4):  # every word mixed into every other
        for i_dst in range(4):
            if i_src != i_dst:
                hashed, const = _hash(pool[i_src], const)
                mixed = (_MIX_L * pool[i_dst] - _MIX_R * hashed) & _M32
                pool[i_dst] = mixed ^ (mixed >> _XSHIFT)
    state = np.empty(4, dtype=np.uint64)  # generate_state(4, uint64)
    const = _INIT_B
    for i in range(8):
        value = pool[i % 4] ^ const
        const = (const * _MULT_B) & _M32
        value = (value * const) & _M32
        value ^= value >> _XSHIFT
        state[i // 2] = value if i % 2 == 0 else state[i // 2] | (value << _U32)
    # PCG64's seeding: increment = stream * 2 + 1; state 0, one step, add the seed state, one step.
    inc_hi = (state[2] << np.uint64(1)) | (state[3] >> np.uint64(63))
    inc_lo = (state[3] << np.uint64(1)) | np.uint64(1)
    hi, lo = _advance(np.uint64(0), np.uint64(0), inc_hi, inc_lo)
    low = lo + state[1]
    hi, lo = _advance(hi + state[0] + np.uint64(low < lo), low, inc_hi, inc_lo)
    for k in range(out.shape[0]):
        hi, lo = _advance(hi, lo, inc_hi, inc_lo)
        x, rot = hi ^ lo, hi >> np.uint64(58)
        out[k] = (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


def raw(seed: int, n: int) -> np.ndarray:
    """``numpy.random.PCG64(seed).random_raw(n)`` for a non-negative integer ``seed``."""
    if not 0 <= seed < SEED_LIMIT:
        return np.random.PCG64(seed).random_raw(n)
    out = np.empty(n, dtype=np.uint64)
    fill_raw(np.uint64(seed), out)
    return out


drop_stale_cache(__name__)

__all__ = ["SEED_LIMIT", "fill_raw", "raw"]
