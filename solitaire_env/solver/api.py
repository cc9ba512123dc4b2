"""The solver's Python face: :func:`solve` runs restarted and complete searches with limits and guidance.

Two phases: restarted searches over the promising moves, which find wins, then one complete search,
which alone can prove a loss; with agent guidance, playouts and rollouts between the restarts. What
each piece is for and why it is sound: the package doc and docs/solver.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from solitaire_env.engine import state
from solitaire_env.engine.games import game_options, get_variant
from solitaire_env.engine.variant import Variant
from solitaire_env.solver.guidance import Playout
from solitaire_env.solver.ordering import PROMISING
from solitaire_env.solver.registers import EXHAUSTED, MEMORY, RUNNING, WON
from solitaire_env.solver.rollouts import rollout
from solitaire_env.solver.search import Solver


@dataclass
class SolveResult:
    """The answer for one position.

    ``result`` is ``"won"`` (``moves`` is a winning list of action ids from the position),
    ``"lost"`` (no sequence of moves wins) or ``"unknown"`` (a limit was hit first: ``reason`` says
    which, ``"time"``, ``"nodes"``, ``"memory"`` or ``"depth"``).
    """

    result: str
    nodes: int
    seconds: float
    moves: list[int] | None = None
    reason: str = ""
    best_foundation: int = 0  # most foundation cards reached on any searched line
    stored: int = 0  # positions in the transposition table

    @property
    def solution_length(self) -> int:
        return len(self.moves) if self.moves is not None else 0


# It restarts: the first search follows the move order, later ones shuffle it (a random 0..JITTER-1
# added to each score), each for RESTART_NODES times the next term of Luby's sequence
# (1 1 2 1 1 2 4 ...), so one unlucky early choice cannot swallow the whole phase. The jitter is
# wider than the scores' own spread (300-1000), so later restarts try really different lines while
# still leaning to the move order: on the 30 Rank and File deals undecided at 60 s with a jitter of
# 250, restarts with 1500 won 12 within 30 s.
JITTER = 1500
RESTART_NODES = 20_000
# The games whose deals are solved with stock macros unless told otherwise. In Rainbow they decide more
# deals for the same positions searched (at 4M per deal: 11 more proved lost, as many won); in the
# two-deck games the restarts with them won none of the 19 Rank and File deals undecided at 60 s.
# In Klondike (any draw and redeals) they also let positions that differ only in where the stock has got to
# share one entry (docs/solver.md, "Klondike: the stock").
STOCK_MACROS_BY_DEFAULT = frozenset({"rainbow", "klondike"})
# The games whose restarts take the heuristic agent's advice unless told otherwise (see :func:`solve`).
# Rainbow's first search is complete and runs to the limits, so it never restarts.
AGENT_GUIDANCE_BY_DEFAULT = frozenset({"rank_and_file", "number_ten"})
# The restarts' share of the limits by game ("": every other game). Klondike's deals are won in few
# positions when they are won at all, and a lost one needs the complete search, tens of millions of
# positions for some: on draw 3 deals 10,000-10,059 at 3M positions, shares of 0.2 and 0.5 decided 56,
# 0.9 decided 54 (the same 51 won).
FIRST_PHASE = {"": 0.9, "klondike": 0.2}


# How many Luby terms of restarts come between two rollouts (:func:`rollout`): a rollout takes about
# as long as 12 terms of restarts with their playouts, a third of the time each.
ROLLOUT_UNITS = 12


def _luby(i: int) -> int:
    """Term ``i`` (from 1) of Luby's restart sequence."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    if i == (1 << k) - 1:
        return 1 << (k - 1)
    return _luby(i - (1 << (k - 1)) + 1)


def _drive(solver: Solver, stop, slice_nodes: int) -> tuple[int, str]:
    """Run ``solver`` in slices until it ends or ``stop(solver)`` names a reason to stop."""
    while True:
        status = solver.run(slice_nodes)
        if status != RUNNING:
            return status, "memory" if status == MEMORY else ""
        reason = stop(solver)
        if reason:
            return RUNNING, reason


@dataclass(frozen=True)
class SolveOptions:
    """How :func:`solve` searches: limits, the share of the restarts, and the search's variants.

    Limits (hitting any of them gives ``unknown``): ``time_limit`` seconds (``None``: none),
    ``max_nodes`` positions (``None``: none), ``memory_mb`` for the transposition table, ``max_depth``
    branching moves on a line. Time and positions are checked between slices: the restarts run in
    slices of :data:`RESTART_NODES` positions, the complete search in slices of ``slice_nodes``, so a
    solve may search up to a slice past ``max_nodes``, and a phase that runs at all runs one slice
    whatever the limit: under any ``max_nodes`` below :data:`RESTART_NODES` a solve searches the same
    positions (at most 20,000 in its first search, then 50,000 in the complete search where that
    first search left moves out) and gives the same answer.

    ``first_phase`` (``None``: the game's, :data:`FIRST_PHASE`) is the share of the time and node limits
    given to restarted searches over the promising moves only (:data:`PROMISING`, :data:`JITTER`); the
    rest goes to one search over every move (a fresh table), which alone can prove a deal ``lost``. The
    restarts get most of the budget because they decide the two-deck deals (every two-deck win over deals
    0-999 came from them, and the complete search proved none lost), and a fifth in Klondike, whose lost
    deals the complete search proves; a first search that leaves no move out, as always in Rainbow, is
    complete itself and runs on to the overall limits whatever the share.

    ``stock_macros`` searches "draw to a card and play it" as one move (:mod:`~solitaire_env.solver.macros`),
    with stock dominance. ``agent_guidance`` borrows the heuristic agent's judgement in the restarts: every
    other restart orders moves by its rules (:func:`~solitaire_env.solver.guidance.agent_move_score`),
    between restarts ``playout`` plays whole games from the start (if one is given: the ``solve``
    command gives the noisy heuristic agent, :func:`solitaire_env.agents.heuristic.playout`), and every
    :data:`ROLLOUT_UNITS` Luby terms comes a :func:`rollout`; a won playout or rollout is a winning
    move list like any other. ``None`` for ``stock_macros`` or ``agent_guidance`` means the game's
    default (:data:`STOCK_MACROS_BY_DEFAULT`, :data:`AGENT_GUIDANCE_BY_DEFAULT`; :meth:`for_game`).

    Raises ``ValueError`` for a limit that is not positive or a share outside ``[0, 1)``.
    """

    time_limit: float | None = 60.0
    max_nodes: int | None = None
    memory_mb: int = 256
    max_depth: int = 4096
    slice_nodes: int = 50_000
    first_phase: float | None = None
    stock_macros: bool | None = None
    agent_guidance: bool | None = None
    playout: Playout | None = None

    def __post_init__(self) -> None:
        if self.time_limit is not None and not self.time_limit > 0:  # NaN too
            raise ValueError(f"time limit must be positive (seconds), got {self.time_limit}")
        if self.max_nodes is not None and self.max_nodes <= 0:
            raise ValueError(f"max_nodes must be positive, got {self.max_nodes}")
        for name in ("memory_mb", "max_depth", "slice_nodes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.first_phase is not None and not 0 <= self.first_phase < 1:
            raise ValueError(f"first_phase, the restart share, must be in [0, 1), got {self.first_phase}")

    def for_game(self, game: str | Variant) -> SolveOptions:
        """These options with the game's defaults filled in where ``first_phase``, ``stock_macros`` or
        ``agent_guidance`` is None."""
        name = game_options(get_variant(game))[0].name  # a game's rule sets share its defaults
        return replace(
            self,
            first_phase=FIRST_PHASE.get(name, FIRST_PHASE[""]) if self.first_phase is None else self.first_phase,
            stock_macros=name in STOCK_MACROS_BY_DEFAULT if self.stock_macros is None else self.stock_macros,
            agent_guidance=name in AGENT_GUIDANCE_BY_DEFAULT if self.agent_guidance is None else self.agent_guidance)


def check_solvable(game: str | Variant) -> Variant:
    """The variant of ``game``; ``ValueError`` for an unknown game. The solver plays every game: where a
    game's rules break a shortcut's proof (FreeCell's cells, Klondike's foundation cards coming back and
    draw 3), the proof for them is in docs/solver.md, so a ``lost`` stays a proof."""
    return get_variant(game)


def solve(game: str | Variant, seed: int | None = None, state_array: np.ndarray | None = None,
          options: SolveOptions | None = None, **overrides: Any) -> SolveResult:
    """Solve deal ``seed`` of ``game`` (or the position ``state_array``) with every card known.

    ``options`` (default ``SolveOptions()``) says how; ``overrides`` replace any of its fields, so
    ``solve("rainbow", seed=3, time_limit=10)`` is ``solve("rainbow", seed=3,
    options=SolveOptions(time_limit=10))``. The method is :class:`SolveOptions`'s. Raises
    ``ValueError`` for an unknown game, a bad seed or state, or bad options (``TypeError`` for an
    option that does not exist).
    """
    variant = check_solvable(game)
    if (seed is None) == (state_array is None):
        raise ValueError("give exactly one of seed and state_array")
    opts = replace(options or SolveOptions(), **overrides).for_game(variant)
    if state_array is None:
        start = state.deal(variant, state.check_seed(seed))
    else:
        start = np.asarray(state_array, dtype=np.int8)
        if start.shape != (variant.state_size,):
            raise ValueError(f"state_array must have shape ({variant.state_size},), got {start.shape}")
    t0 = time.perf_counter()
    nodes, best = 0, 0

    def result(kind: str, solver: Solver, **extra) -> SolveResult:
        return SolveResult(kind, nodes=nodes, seconds=time.perf_counter() - t0, best_foundation=best,
                           stored=solver.stored, **extra)

    def proof(solver: Solver) -> SolveResult:
        return result("unknown", solver, reason="depth") if solver.depth_hit else \
            result("lost", solver)

    def over(node_cap: int | None, deadline: float | None):
        def stop(solver: Solver | None) -> str:
            if node_cap is not None and nodes + (solver.nodes if solver else 0) >= node_cap:
                return "nodes"
            if deadline is not None and time.perf_counter() >= deadline:
                return "time"
            return ""
        return stop

    phase_nodes = None if opts.max_nodes is None else int(opts.max_nodes * opts.first_phase)
    phase_end = None if opts.time_limit is None else t0 + opts.time_limit * opts.first_phase
    end = None if opts.time_limit is None else t0 + opts.time_limit
    phase_over, all_over = over(phase_nodes, phase_end), over(opts.max_nodes, end)

    # Phase 1: restarts over the promising moves. The first search, as long as it has left no move
    # out, is a complete search (always so in Rainbow, where every move is promising): it may then
    # run on to the overall limits and prove a loss.
    restart = n_playouts = n_rollouts = units = 0
    while opts.first_phase > 0:
        cap = RESTART_NODES * _luby(restart + 1)
        table_mb = opts.memory_mb if restart == 0 else max(1, min(opts.memory_mb, cap * 16 >> 20))
        solver = Solver(variant, start.copy(), memory_mb=table_mb, max_depth=opts.max_depth, min_score=PROMISING,
                        jitter=JITTER if restart else 0, seed=restart, stock_macros=opts.stock_macros,
                        stock_dominance=opts.stock_macros,
                        agent_order=opts.agent_guidance and restart % 2 == 1)

        def stop(solver: Solver, cap: int = cap, first: bool = restart == 0) -> str:
            if first and not solver.pruned:
                return all_over(solver)
            return phase_over(solver) or ("restart" if solver.nodes >= cap else "")

        status, reason = _drive(solver, stop, min(opts.slice_nodes, RESTART_NODES))
        nodes += solver.nodes
        best = max(best, solver.best_foundation)
        if status == WON:
            return result("won", solver, moves=solver.solution())
        if status == EXHAUSTED:
            if not solver.pruned:
                return proof(solver)
            if restart == 0:
                break  # the whole promising space is searched: restarts would search it again
        if status == MEMORY or reason in ("time", "nodes"):
            if restart == 0 and not solver.pruned:
                return result("unknown", solver, reason=reason or "memory")
            break
        restart += 1
        if not opts.agent_guidance:
            continue
        # Between restarts, as many playouts as the restart's Luby term (about as much time), and a
        # rollout every ROLLOUT_UNITS terms (about as much again).
        units += _luby(restart)
        for _ in range(_luby(restart) if opts.playout is not None else 0):
            moves, played, reached = opts.playout(variant, start, seed=n_playouts)
            n_playouts += 1
            nodes += played
            best = max(best, reached)
            if moves is not None:
                return result("won", solver, moves=moves)
            if phase_over(None):
                break
        while units >= ROLLOUT_UNITS * (n_rollouts + 1) and not phase_over(None):
            moves, played, reached = rollout(variant, start, seed=n_rollouts)
            n_rollouts += 1
            nodes += played
            best = max(best, reached)
            if moves is not None:
                return result("won", solver, moves=moves)
    # Phase 2: every move.
    solver = Solver(variant, start.copy(), memory_mb=opts.memory_mb, max_depth=opts.max_depth,
                    stock_macros=opts.stock_macros, stock_dominance=opts.stock_macros)
    status, reason = _drive(solver, all_over, opts.slice_nodes)
    nodes += solver.nodes
    best = max(best, solver.best_foundation)
    if status == WON:
        return result("won", solver, moves=solver.solution())
    if status == EXHAUSTED:
        return proof(solver)
    return result("unknown", solver, reason=reason)


__all__ = ["AGENT_GUIDANCE_BY_DEFAULT", "FIRST_PHASE", "JITTER", "RESTART_NODES", "ROLLOUT_UNITS",
           "STOCK_MACROS_BY_DEFAULT", "SolveOptions", "SolveResult", "check_solvable", "solve"]
