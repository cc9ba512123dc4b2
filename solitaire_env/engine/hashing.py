"""The one 64-bit mix function the engine's position keys and the solver's keys are built from."""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.jit_cache import drop_stale_cache

M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)


# Inlined: its callers hash a pile or a card at a time, and a call costs more than the mix.
@njit(cache=True, nogil=True, inline="always")
def mix(x):
    """splitmix64's finaliser: a well-spread 64-bit value from any 64-bit value."""
    x = (x ^ (x >> np.uint64(30))) * M1
    x = (x ^ (x >> np.uint64(27))) * M2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def nonzero(x):
    """``x``, or 1 where it is 0: tables mark an empty slot with 0, so no key is 0."""
    return x if x != 0 else np.uint64(1)


drop_stale_cache(__name__)

__all__ = ["M1", "M2", "mix", "nonzero"]
