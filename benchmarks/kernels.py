"""The benchmark's compiled loops: random legal play on one game, and a uniform legal pick for a batch."""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import SP_NCARDS


@njit(cache=True, nogil=True)
def xorshift(x):
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    return x


@njit(cache=True, nogil=True)
def random_play(deals, sp, actions, n_games, cap, seed, with_obs, obs_size):
    """Play n_games random legal games (deal g % len(deals)); return (moves, games at the cap, games won)."""
    mask = np.zeros(actions.shape[0], dtype=np.int8)
    obs = np.zeros(obs_size, dtype=np.int16)
    s = deals[0].copy()
    x = (np.uint64(seed) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    if x == np.uint64(0):
        x = np.uint64(1)
    moves = 0
    capped = 0
    won = 0
    for g in range(n_games):
        s[:] = deals[g % deals.shape[0]]
        m = 0
        while m < cap:
            n = core.legal_mask(s, sp, actions, mask)
            if with_obs:
                core.observe(s, sp, obs)
            if n == 0:
                break
            x = xorshift(x)
            k = np.int64((x >> np.uint64(33)) % np.uint64(n))
            a = 0
            while mask[a] == 0 or k > 0:  # the k-th legal action
                if mask[a] != 0:
                    k -= 1
                a += 1
            core.apply_action(s, sp, actions, a)
            m += 1
        moves += m
        if m >= cap:
            capped += 1
        if core.foundation_cards(s, sp) == sp[SP_NCARDS]:
            won += 1
    return moves, capped, won


@njit(cache=True, nogil=True)
def pick_uniform(masks, seeds, out):
    """For every row, a uniformly random legal action (0 where none is legal); seeds advance in place."""
    for i in range(masks.shape[0]):
        row = masks[i]
        n = 0
        for a in range(row.shape[0]):
            n += row[a]
        x = xorshift(seeds[i])
        seeds[i] = x
        out[i] = 0
        if n == 0:
            continue
        k = np.int64((x >> np.uint64(33)) % np.uint64(n))
        for a in range(row.shape[0]):
            if row[a] != 0:
                if k == 0:
                    out[i] = a
                    break
                k -= 1
    return out


# These loops hold the core's code: their cache is dropped when the rules' sources change.
drop_stale_cache(__name__)
