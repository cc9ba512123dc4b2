"""Rollouts: a greedy player in the heuristic agent's order, and one-move look-ahead over it.

Used by the agent-guided restarts of :func:`~solitaire_env.solver.api.solve` (with every card known).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env import core
from solitaire_env.games import get_variant
from solitaire_env.jit_cache import drop_stale_cache
from solitaire_env.solver.guidance import agent_move_score
from solitaire_env.solver.hashing import state_key
from solitaire_env.solver.safe import play_safe_moves
from solitaire_env.variant import O_NSTOCK, SP_N_ACTIONS, SP_NCARDS, Variant

_jit = njit(cache=True, nogil=True)

# A rollout's moves and recorded actions are bounded (see :func:`greedy`); this leaves room for both.
ROLLOUT_BUFFER = 20_000
_VISITED = 1 << 14  # positions a greedy line remembers, to never return to one
# How long a greedy line may go without progress (taking turns: on the 11 Rank and File deals left
# undecided at 60 s, 20 s of rollouts with 40 won deal 84, which no search had won), and how much the
# move order is shuffled after the first rollout.
ROLLOUT_PATIENCE = (20, 40)
ROLLOUT_JITTER = 300


@_jit
def _visit(keys, stamps, gen, key) -> bool:
    """Add ``key`` to the set stamped ``gen`` (older stamps count as empty); False if it was there."""
    mask = np.uint64(keys.shape[0] - 1)
    i = key & mask
    for _ in range(keys.shape[0]):
        if stamps[i] != gen:
            keys[i] = key
            stamps[i] = gen
            return True
        if keys[i] == key:
            return False
        i = (i + np.uint64(1)) & mask
    return False


@_jit
def _seen(keys, stamps, key) -> bool:
    """Whether ``key`` is in the set stamped 1 (the rollout's own line)."""
    mask = np.uint64(keys.shape[0] - 1)
    i = key & mask
    while stamps[i] == 1:
        if keys[i] == key:
            return True
        i = (i + np.uint64(1)) & mask
    return False


@_jit
def progress(s, sp) -> int:
    """Foundation cards first, then face-down cards turned up, then cards dealt: each only ever grows."""
    return core.foundation_cards(s, sp) * 10000 - core.hidden_cards(s, sp) * 100 - s[sp[O_NSTOCK]]


@_jit
def greedy(s, sp, actions, mask, scores, t, keys, stamps, gen, patience, jitter, out, n_out):
    """Play from ``s`` (in place) the best move by ``agent_move_score`` that leads to a position not
    seen on this line, until no move does or ``patience`` moves in a row made no :func:`progress`.

    Appends the actions to ``out`` (safe moves included). Returns (foundation cards, new ``n_out``,
    moves played). Since progress can only grow about 200 times, a line has at most about
    200 * (patience + 1) moves.
    """
    n_actions = sp[SP_N_ACTIONS]
    last, idle, played = progress(s, sp), 0, 0
    while core.foundation_cards(s, sp) < sp[SP_NCARDS] and core.legal_mask(s, sp, actions, mask) > 0:
        k = 0
        for a in range(n_actions):
            scores[a] = -1
            if mask[a]:
                scores[a] = agent_move_score(s, sp, actions, a) + (np.random.randint(0, jitter) if jitter else 0)
                k += 1
        moved = False
        for _ in range(k):
            b = np.argmax(scores)
            scores[b] = -1
            for i in range(s.shape[0]):
                t[i] = s[i]
            core.apply_action(t, sp, actions, b)
            if _visit(keys, stamps, gen, state_key(t, sp)):
                for i in range(s.shape[0]):
                    s[i] = t[i]
                out[n_out] = b
                n_out = play_safe_moves(s, sp, actions, out, n_out + 1, True)
                moved = True
                break
        if not moved:
            break
        played += 1
        p = progress(s, sp)
        if p > last:
            last, idle = p, 0
        else:
            idle += 1
            if idle > patience:
                break
    return core.foundation_cards(s, sp), n_out, played


@_jit
def _rollout(s0, sp, actions, patience, jitter, seed, out):
    """One rollout from ``s0``: each move, try every legal move followed by a :func:`greedy` line, and
    play the one whose line gets furthest (most foundation cards, then fewest face-down cards, then
    ``agent_move_score``); stop at a won line, or as :func:`greedy` stops.

    Returns (won, actions written to ``out``, positions played, most foundation cards reached).
    """
    np.random.seed(seed)
    n_actions, n_cards = sp[SP_N_ACTIONS], sp[SP_NCARDS]
    mask, line_mask = np.zeros(n_actions, dtype=np.int8), np.zeros(n_actions, dtype=np.int8)
    scores = np.zeros(n_actions, dtype=np.int64)
    line = np.zeros(ROLLOUT_BUFFER, dtype=np.int16)
    keys, stamps = np.zeros(_VISITED, dtype=np.uint64), np.zeros(_VISITED, dtype=np.int32)
    main_keys, main_stamps = np.zeros(_VISITED, dtype=np.uint64), np.zeros(_VISITED, dtype=np.int32)
    s, t, u = s0.copy(), s0.copy(), s0.copy()
    n_out = play_safe_moves(s, sp, actions, out, 0, True)
    _visit(main_keys, main_stamps, 1, state_key(s, sp))
    gen, nodes, best = 1, 0, core.foundation_cards(s, sp)
    last, idle = progress(s, sp), 0
    while best < n_cards and core.legal_mask(s, sp, actions, mask) > 0:
        best_value, best_a = -1, -1
        for a in range(n_actions):
            if not mask[a]:
                continue
            for i in range(s.shape[0]):
                t[i] = s[i]
            line[0] = a
            core.apply_action(t, sp, actions, a)
            n_line = play_safe_moves(t, sp, actions, line, 1, True)
            key = state_key(t, sp)
            if _seen(main_keys, main_stamps, key):  # never back to a position of the line
                continue
            score = agent_move_score(s, sp, actions, a)
            gen += 1
            found, n_line, played = greedy(t, sp, actions, line_mask, scores, u, keys, stamps, gen, patience, jitter,
                                           line, n_line)
            nodes += played + 1
            if found == n_cards:
                for i in range(n_line):
                    out[n_out + i] = line[i]
                return True, n_out + n_line, nodes, found
            best = max(best, found)
            value = (found * 1000 - core.hidden_cards(t, sp) * 10) * 10000 + score
            if value > best_value:
                best_value, best_a = value, a
        if best_a < 0:
            break
        out[n_out] = best_a
        core.apply_action(s, sp, actions, best_a)
        n_out = play_safe_moves(s, sp, actions, out, n_out + 1, True)
        _visit(main_keys, main_stamps, 1, state_key(s, sp))
        p = progress(s, sp)
        if p > last:
            last, idle = p, 0
        else:
            idle += 1
            if idle > patience:
                break
    return core.foundation_cards(s, sp) == n_cards, n_out, nodes, best


def rollout(game: str | Variant, start: np.ndarray, seed: int = 0) -> tuple[list[int] | None, int, int]:
    """One rollout (:func:`_rollout`) from the position ``start`` with every card known.

    Returns ``(moves, positions, foundation_cards)``: the winning action ids from ``start`` (else
    ``None``), how many positions its lines played, and the most foundation cards a line reached.
    Seed 0 follows the move order; other seeds shuffle it (:data:`ROLLOUT_JITTER`); the patience
    takes turns by seed (:data:`ROLLOUT_PATIENCE`).
    """
    v = get_variant(game)
    out = np.zeros(ROLLOUT_BUFFER, dtype=np.int16)
    patience = ROLLOUT_PATIENCE[seed % len(ROLLOUT_PATIENCE)]
    won, n, nodes, best = _rollout(np.array(start, dtype=np.int8), v.spec, v.actions, patience,
                                   ROLLOUT_JITTER if seed else 0, seed, out)
    return ([int(x) for x in out[:n]] if won else None), int(nodes), int(best)


# Compiled code here holds the other solver modules' and the core's code and variant.py's constants: a
# cache built from other sources is dropped.
drop_stale_cache(__name__)

__all__ = ["ROLLOUT_BUFFER", "ROLLOUT_JITTER", "ROLLOUT_PATIENCE", "greedy", "progress", "rollout"]
