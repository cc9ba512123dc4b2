"""The heuristic agent's judgement, for the solver (see :func:`~solitaire_env.solver.api.solve`).

The tiers of the heuristic agent's rules are defined here, once: the agent (:mod:`solitaire_env.agents.heuristic`)
plays by them, and :func:`agent_move_score` orders the solver's moves by them (the agent-ordered
restarts and the rollouts). The agent itself, which plays the solver's playouts, is passed in by the
caller as a :class:`Playout`: the engine never imports the agents.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    O_DOWN,
    O_LEN,
    O_NSTOCK,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    Variant,
)
from solitaire_env.solver.ordering import BACK, run_score, split_score

_jit = njit(cache=True, nogil=True)

# Tiers of HeuristicAgent's rules (the numbers in its docstring): a move's score is (tier, tie-break)
# and the best score plays; the agent's noise adds 0..25 to a tier. The order was set by measuring on
# deals that the tests and the reported figures do not use (seeds 1000 and up).
T_SAFE_FOUNDATION = 100  # 1
T_RESERVE = 95  # 2
T_WASTE = 92  # 3
T_REVEAL = 90  # 4
T_REVEAL_INTO_EMPTY = 85  # 5
T_WASTE_AFTER_RESERVE = 75  # 3, in Rainbow
T_EMPTY_A_PILE = 70  # 6
T_FOUNDATION = 58  # 7
T_KING_INTO_EMPTY = 55  # 8
T_ENABLING = 40  # 9 (found by look-ahead, not by the agent's _rate)
T_WASTE_INTO_EMPTY = 30  # 10
T_DRAW = 20  # 11
T_REDEAL = 10  # 12
T_NEUTRAL = 0  # 13: moves that only rearrange the tableau
PRODUCTIVE = T_WASTE_INTO_EMPTY  # the moves from this tier up make progress

# The solver scores a rule that it ranks as the agent does at SCALE times the rule's tier, plus the
# agent's tie-break where it reads the same engine fields. Rules 9-13 it cannot follow: its restarts
# search only moves scoring at least PROMISING (300) and must keep the draws, so drawing, a waste card
# into an empty pile while the stock lasts, and redealing score just above that cut, and the
# rearrangements as the solver's own order scores them (ordering.run_score, ordering.split_score).
# Nor Rainbow's waste rule (T_WASTE_AFTER_RESERVE): guidance is for the two-deck games.
SCALE = 10
S_DRAW, S_WASTE_INTO_EMPTY_EARLY, S_REDEAL = 320, 315, 305
# A face-down card turned up by a tableau move comes after one turned up by a foundation move (its
# tie-break, the face-down cards on both piles, can only move it within this gap).
S_REVEAL_BY_MOVE = SCALE * T_REVEAL - 20


class Playout(Protocol):
    """A player that plays one whole game from an engine position (``seed`` varies its play).

    Returns ``(moves, played, foundation_cards)``: the action ids played if they win (else ``None``),
    how many moves were played, and the most cards the foundations held. The ``solve`` command passes
    the noisy heuristic agent's, :func:`solitaire_env.agents.heuristic.playout`.
    """

    def __call__(self, variant: Variant, start: np.ndarray, seed: int) -> tuple[list[int] | None, int, int]: ...


@_jit
def agent_move_score(s, sp, actions, a: int) -> int:
    """Like :func:`~solitaire_env.solver.ordering.move_score`, in the order of the heuristic agent's rules.

    Safe foundation moves are played before any move is scored. Then: the reserve; the waste's top
    card onto a pile (the pile with fewest face-down cards); moves that turn a face-down card up,
    into an empty pile last; emptying a pile; the foundation moves that are not safe, low ranks first
    (the card may still be needed to build on); a King (or, once the stock is out, any card) from
    the waste into an empty pile; drawing; and last the rearrangements, scored as by ``move_score``.
    """
    kind, src, dst = actions[a, 0], actions[a, 1], actions[a, 2]
    if kind == RESERVE_TO_TABLEAU or kind == RESERVE_TO_FOUNDATION:
        return SCALE * T_RESERVE
    if kind == WASTE_TO_TABLEAU:
        return SCALE * T_WASTE - s[sp[O_DOWN] + dst]
    if kind == DRAW:
        return S_DRAW
    if kind == REDEAL:
        return S_REDEAL
    if kind == WASTE_TO_FOUNDATION:
        return SCALE * T_FOUNDATION - core.waste_top(s, sp) % 13
    if kind == WASTE_TO_EMPTY:
        king = core.waste_top(s, sp) % 13 == 12
        return SCALE * T_KING_INTO_EMPTY if king or s[sp[O_NSTOCK]] == 0 else S_WASTE_INTO_EMPTY_EARLY
    if kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
        return BACK  # a foundation card back (Klondike): last, as in the solver's own order
    n = s[sp[O_LEN] + src]
    down = s[sp[O_DOWN] + src]
    if kind == TABLEAU_TO_FOUNDATION:
        if n - 1 == down and down > 0:
            return SCALE * T_REVEAL + down  # turns a card up
        return SCALE * T_FOUNDATION - core.top_card(s, sp, src) % 13
    count = core.resolve(s, sp, actions, a)[1]
    if count == n - down and down > 0:
        if kind == TABLEAU_TO_EMPTY:
            return SCALE * T_REVEAL_INTO_EMPTY + down
        return S_REVEAL_BY_MOVE + 2 * down - s[sp[O_DOWN] + dst]  # from the pile with most face-down cards
    if count == n:
        return SCALE * T_EMPTY_A_PILE
    if count == core.run_length(s, sp, src):
        # Into an empty pile without turning a card up: the agent never does that (below the cut of
        # the restarts, PROMISING).
        return run_score(n - count - down) if kind != TABLEAU_TO_EMPTY else 100
    return split_score(s, sp, kind, src, n - count)


# Compiled code here holds the core's code and variant.py's constants: a cache built from other sources
# is dropped.
drop_stale_cache(__name__)

__all__ = ["PRODUCTIVE", "Playout", "SCALE", "T_DRAW", "T_EMPTY_A_PILE", "T_ENABLING", "T_FOUNDATION",
           "T_KING_INTO_EMPTY", "T_NEUTRAL", "T_REDEAL", "T_RESERVE", "T_REVEAL", "T_REVEAL_INTO_EMPTY",
           "T_SAFE_FOUNDATION", "T_WASTE", "T_WASTE_AFTER_RESERVE", "T_WASTE_INTO_EMPTY", "agent_move_score"]
