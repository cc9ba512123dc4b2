"""The heuristic agent's judgement, for the solver (see :func:`~solitaire_env.solver.api.solve`).

:func:`agent_move_score` orders moves by the heuristic agent's rules (:mod:`agents.heuristic`): the
agent-ordered restarts and the rollouts use it. The agent itself, which plays the solver's playouts,
is passed in by the caller as a :class:`Playout`: the engine never imports the agents.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numba import njit

from solitaire_env import core
from solitaire_env.jit_cache import drop_stale_cache
from solitaire_env.variant import (
    DRAW,
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

_jit = njit(cache=True, nogil=True)


class Playout(Protocol):
    """A player that plays one whole game from an engine position (``seed`` varies its play).

    Returns ``(moves, played, foundation_cards)``: the action ids played if they win (else ``None``),
    how many moves were played, and the most cards the foundations held. The ``solve`` command passes
    the noisy heuristic agent's, :func:`agents.heuristic.playout`.
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
        return 950
    if kind == WASTE_TO_TABLEAU:
        return 920 - s[sp[O_DOWN] + dst]
    if kind == DRAW:
        return 320
    if kind == REDEAL:
        return 305
    if kind == WASTE_TO_FOUNDATION:
        return 580 - core.waste_top(s, sp) % 13
    if kind == WASTE_TO_EMPTY:
        return 550 if core.waste_top(s, sp) % 13 == 12 or s[sp[O_NSTOCK]] == 0 else 315
    n = s[sp[O_LEN] + src]
    down = s[sp[O_DOWN] + src]
    if kind == TABLEAU_TO_FOUNDATION:
        if n - 1 == down and down > 0:
            return 900 + down  # turns a card up
        return 580 - core.top_card(s, sp, src) % 13
    count = core.resolve(s, sp, actions, a)[1]
    if count == n - down and down > 0:
        if kind == TABLEAU_TO_EMPTY:
            return 850 + down
        return 880 + 2 * down - s[sp[O_DOWN] + dst]  # from the pile with most face-down cards
    if count == n:
        return 700
    left = n - count - down
    if count == core.run_length(s, sp, src):
        # Into an empty pile without turning a card up: the agent never does that (below the cut of
        # the restarts, PROMISING).
        return max(310, 480 - 10 * left) if kind != TABLEAU_TO_EMPTY else 100
    if kind == TABLEAU_TO_EMPTY:
        return 100
    exposed = core.pile_card(s, sp, src, n - count - 1)
    if core.foundation_for(s, sp, exposed) >= 0:
        return 500
    return 200


# Compiled code here holds the core's code and variant.py's constants: a cache built from other sources
# is dropped.
drop_stale_cache(__name__)

__all__ = ["Playout", "agent_move_score"]
