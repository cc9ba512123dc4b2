"""A perfect-information solver for every game (the three seed games, FreeCell, Klondike): can this deal be won at all?

It sees every card (face-down cards and the stock order included), so it answers a different
question from the agents: the ceiling any player could reach. It runs on the engine core
(:mod:`solitaire_env.engine.core`): the same legal moves, the same move application, no second copy of
the rules. One module per concern:

* :mod:`~solitaire_env.solver.hashing`: canonical 64-bit position keys and the transposition table;
* :mod:`~solitaire_env.solver.dominance`: positions that cover others (more redeals left, the stock
  dealt less far);
* :mod:`~solitaire_env.solver.safe`: safe foundation moves, played without branching, and Rainbow's
  dead ends;
* :mod:`~solitaire_env.solver.ordering`: the solver's move order and the restarts' cut
  (:data:`PROMISING`);
* :mod:`~solitaire_env.solver.guidance`: the heuristic agent's move order;
* :mod:`~solitaire_env.solver.macros`: "draw to a card and play it" as one move;
* :mod:`~solitaire_env.solver.splits`: Klondike's split moves left out until the card they uncover is used;
* :mod:`~solitaire_env.solver.search`: the resumable compiled depth-first search (:class:`Solver`);
* :mod:`~solitaire_env.solver.rollouts`: greedy lines with one-move look-ahead;
* :mod:`~solitaire_env.solver.api`: :func:`solve`, the restarts, the limits and the guidance.

Why each piece is sound (safe moves, stock macros, stock dominance, split moves, key collisions), and what each
gained, measured: docs/solver.md, one section per rule.

>>> from solitaire_env.solver import solve
>>> result = solve("rainbow", seed=3, time_limit=10)
>>> result.result, len(result.moves or [])   # doctest: +SKIP
('won', 118)
"""

from solitaire_env.solver.api import (
    AGENT_GUIDANCE_BY_DEFAULT,
    JITTER,
    RESTART_NODES,
    ROLLOUT_UNITS,
    STOCK_MACROS_BY_DEFAULT,
    SolveOptions,
    SolveResult,
    solve,
)
from solitaire_env.solver.guidance import Playout
from solitaire_env.solver.hashing import state_key
from solitaire_env.solver.ordering import PROMISING
from solitaire_env.solver.registers import EXHAUSTED, MEMORY, RUNNING, WON
from solitaire_env.solver.rollouts import rollout
from solitaire_env.solver.safe import play_safe_moves
from solitaire_env.solver.search import Solver

__all__ = ["AGENT_GUIDANCE_BY_DEFAULT", "EXHAUSTED", "JITTER", "MEMORY", "PROMISING", "RESTART_NODES",
           "ROLLOUT_UNITS", "RUNNING", "STOCK_MACROS_BY_DEFAULT", "Playout", "SolveOptions", "SolveResult", "Solver",
           "WON", "play_safe_moves", "rollout", "solve", "state_key"]
