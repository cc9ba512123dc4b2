"""The depth-first search: one resumable, compiled search from one position (:class:`Solver`).

Iterative, over an explicit stack of positions; every position reached is stored in a transposition
table (:mod:`~solitaire_env.solver.hashing`) and never expanded twice. Safe foundation moves are played
at once (:mod:`~solitaire_env.solver.safe`); moves are tried in the order of
:mod:`~solitaire_env.solver.ordering` (or of the agent: :mod:`~solitaire_env.solver.guidance`), with
the draws folded into stock macros where asked (:mod:`~solitaire_env.solver.macros`), and Klondike's
split moves left out until the card they uncover can be used (:mod:`~solitaire_env.solver.splits`); a Klondike
position in which some cards can never move is lost at once (:mod:`~solitaire_env.solver.stuck`). Why each of
these is sound: docs/solver.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import DRAW, REDEAL, SP_N_ACTIONS, SP_NCARDS, SP_PILES, Variant
from solitaire_env.solver.dominance import insert_cycle_dominant, insert_dominant, insert_undominated
from solitaire_env.solver.guidance import agent_move_score
from solitaire_env.solver.hashing import state_key, table_insert
from solitaire_env.solver.macros import apply_move, step_action, stock_macros
from solitaire_env.solver.ordering import insert_sorted, move_score
from solitaire_env.solver.registers import (
    EXHAUSTED,
    MEMORY,
    N_REGS,
    R_BEST,
    R_BEST_MOVE,
    R_DEPTH,
    R_DEPTH_HIT,
    R_NODES,
    R_PRUNED,
    R_STARTED,
    R_STATUS,
    R_STORED,
    WON,
)
from solitaire_env.solver.safe import deadlocked, play_safe_moves
from solitaire_env.solver.splits import split_home, splits_pruned, useless_split
from solitaire_env.solver.stuck import stuck

_jit = njit(cache=True, nogil=True)


@_jit
def order_moves(s, sp, actions, mask, out, min_score, regs, jitter, macros, scores, agent_order) -> int:
    """Write the legal actions scoring at least ``min_score`` into ``out``, best first; return how many.

    With ``macros``, draws and redeals are left to the stock macros. Sets ``regs[R_PRUNED]`` when a legal
    move was left out otherwise: the search is then no proof of a loss.
    """
    n_legal = core.legal_mask(s, sp, actions, mask)
    splits = splits_pruned(sp)
    k = 0
    for a in range(sp[SP_N_ACTIONS]):
        if mask[a]:
            kind = actions[a, 0]
            if macros and (kind == DRAW or kind == REDEAL):
                n_legal -= 1  # searched as a macro
                continue
            if splits and useless_split(s, sp, actions, a):
                n_legal -= 1  # a split can wait until the card it uncovers is used (splits.py)
                continue
            sc = agent_move_score(s, sp, actions, a) if agent_order else move_score(s, sp, actions, a)
            if sc < min_score:
                continue
            if jitter > 0:
                sc += np.random.randint(0, jitter)
            insert_sorted(scores, out, k, sc, a)
            k += 1
    if k < n_legal:
        regs[R_PRUNED] = 1
    if macros:
        k2, n_all = stock_macros(s, sp, actions, out, scores, k, min_score, jitter)
        if k2 < k + n_all:
            regs[R_PRUNED] = 1
        k = k2
    return k


@_jit
def search_slice(s0, sp, actions, table, max_load, states, moves, n_moves, next_move, regs, budget, scratch, mask,
                 min_score, jitter, seed, macros, scores, agent_order, dominance, best, waste) -> None:
    """Run the depth-first search for at most ``budget`` nodes, resuming from ``regs``.

    ``dominance``: 0 none, 1 stock dominance (:func:`insert_dominant`), 2 its form for unlimited redeals
    (:func:`insert_cycle_dominant`). ``waste``: the waste's top card may be among the safe moves.
    """
    n_cards = sp[SP_NCARDS]
    max_depth = states.shape[0]
    if regs[R_STARTED] == 0:
        regs[R_STARTED] = 1
        if jitter > 0:
            np.random.seed(seed)
        states[0, :] = s0
        play_safe_moves(states[0], sp, actions, scratch, 0, waste)
        regs[R_BEST] = core.foundation_cards(states[0], sp)
        regs[R_BEST_MOVE] = -1
        if regs[R_BEST] == n_cards:
            regs[R_STATUS] = WON
            return
        if splits_pruned(sp) and stuck(states[0], sp):
            regs[R_STATUS] = EXHAUSTED  # Klondike: some cards can never move, so it is lost (stuck.py)
            return
        if dominance == 2:
            insert_cycle_dominant(table, best, states[0], sp)
        elif dominance:
            insert_dominant(table, best, states[0], sp)
        else:
            table_insert(table, state_key(states[0], sp))
        regs[R_STORED] = 1
        n_moves[0] = order_moves(states[0], sp, actions, mask, moves[0], min_score, regs, jitter, macros,
                                 scores, agent_order)
        next_move[0] = 0
        regs[R_DEPTH] = 0
    done = 0
    while done < budget:
        d = regs[R_DEPTH]
        if next_move[d] >= n_moves[d]:
            if d == 0:
                regs[R_STATUS] = EXHAUSTED
                return
            regs[R_DEPTH] = d - 1
            continue
        m = moves[d, next_move[d]]
        next_move[d] += 1
        if d + 1 >= max_depth:
            regs[R_DEPTH_HIT] = 1
            continue
        child = states[d + 1]
        parent = states[d]
        for i in range(parent.shape[0]):  # an explicit loop: numba's slice copy costs 20 times as much here
            child[i] = parent[i]
        home = split_home(parent, sp, actions, m)
        apply_move(child, sp, actions, m)
        if home >= 0:
            core.apply_action(child, sp, actions, home)  # a split and its card home: one move (splits.py)
        play_safe_moves(child, sp, actions, scratch, 0, waste)
        done += 1
        regs[R_NODES] += 1
        found = core.foundation_cards(child, sp)
        if found > regs[R_BEST]:
            regs[R_BEST] = found
            regs[R_BEST_MOVE] = moves[0, next_move[0] - 1]
        if found == n_cards:
            regs[R_DEPTH] = d + 1
            regs[R_STATUS] = WON
            return
        if dominance == 2:
            new = insert_cycle_dominant(table, best, child, sp)
        elif dominance:
            new = insert_dominant(table, best, child, sp)
        elif macros:
            new = 1 if insert_undominated(table, child, sp) else 0
        else:
            new = table_insert(table, state_key(child, sp))
        if new == 0 or deadlocked(child, sp):
            continue
        if new == 1:
            regs[R_STORED] += 1
        if regs[R_STORED] >= max_load:
            regs[R_STATUS] = MEMORY
            return
        n_moves[d + 1] = order_moves(child, sp, actions, mask, moves[d + 1], min_score, regs, jitter,
                                     macros, scores, agent_order)
        next_move[d + 1] = 0
        regs[R_DEPTH] = d + 1


@_jit
def replay_path(s0, sp, actions, path, n_path, out, waste) -> int:
    """The full action list of a search path: safe moves played between the chosen ones included."""
    s = s0.copy()
    n = play_safe_moves(s, sp, actions, out, 0, waste)
    for i in range(n_path):
        for _ in range(path[i] // sp[SP_N_ACTIONS]):
            out[n] = step_action(s, sp)
            core.apply_action(s, sp, actions, out[n])
            n += 1
        home = split_home(s, sp, actions, path[i])
        out[n] = path[i] % sp[SP_N_ACTIONS]
        core.apply_action(s, sp, actions, out[n])
        if home >= 0:
            n += 1
            out[n] = home
            core.apply_action(s, sp, actions, home)
        n = play_safe_moves(s, sp, actions, out, n + 1, waste)
    return n


@dataclass
class Solver:
    """A resumable search from one position (see the module doc for the method).

    ``memory_mb`` sizes the transposition table (8 bytes a position, filled to 75% at most);
    ``max_depth`` bounds the number of branching moves on a line.
    """

    variant: Variant
    start: np.ndarray
    memory_mb: int = 256
    max_depth: int = 4096
    min_score: int = 0  # search only moves scoring at least this (0: every move)
    jitter: int = 0  # add a random 0..jitter-1 to every move's score (restarts)
    seed: int = 0  # seeds the jitter
    stock_macros: bool = False  # "draw to a card and play it" as one move, instead of single draws (macros.py)
    agent_order: bool = False  # order moves by the heuristic agent's rules (guidance.agent_move_score)
    stock_dominance: bool = False  # with macros: skip a position a stored one dominates (dominance.py)
    _arrays: dict = field(init=False, repr=False)

    @property
    def dominance(self) -> int:
        """The stock dominance searched with: 0 none, 1 :func:`insert_dominant` (one card a draw), 2
        :func:`insert_cycle_dominant` (unlimited redeals). With several cards a draw and counted redeals
        there is none (docs/solver.md, "Klondike: the stock")."""
        v = self.variant
        if not (self.stock_dominance and self.stock_macros):
            return 0
        return 2 if v.redeals is None else 1 if v.draw == 1 else 0

    @property
    def waste_safe(self) -> bool:
        """Whether the waste's top card is among the safe moves played at once: not under stock dominance
        (positions it ranks show different waste cards), nor with several cards a draw (playing it would
        change which cards later draws bring up; docs/solver.md, "Klondike: ...")."""
        return self.dominance == 0 and self.variant.draw == 1

    def __post_init__(self) -> None:
        v = self.variant
        if self.memory_mb < 1:
            raise ValueError(f"memory_mb must be at least 1, got {self.memory_mb}")
        slots = 1 << max(10, int(self.memory_mb * 2**20 // 8).bit_length() - 1)
        self._arrays = dict(
            table=np.zeros(slots, dtype=np.uint64),
            states=np.zeros((self.max_depth, v.state_size), dtype=np.int8),
            # Room for every action, and for every stock card played anywhere as a macro.
            moves=np.zeros((self.max_depth, v.n_actions + v.n_cards * (v.spec[SP_PILES] + 2)), dtype=np.int32),
            n_moves=np.zeros(self.max_depth, dtype=np.int32),
            next_move=np.zeros(self.max_depth, dtype=np.int32),
            regs=np.zeros(N_REGS, dtype=np.int64),
            scratch=np.zeros(v.n_cards + 1, dtype=np.int16),
            mask=np.zeros(v.n_actions, dtype=np.int8),
            scores=np.zeros(v.n_actions + v.n_cards * (v.spec[SP_PILES] + 2), dtype=np.int64),
            best=np.zeros(slots if self.dominance else 1, dtype=np.int16),
        )
        self.max_load = int(slots * 0.75)

    @property
    def nodes(self) -> int:
        """Positions searched so far."""
        return int(self._arrays["regs"][R_NODES])

    @property
    def stored(self) -> int:
        """Positions in the transposition table."""
        return int(self._arrays["regs"][R_STORED])

    @property
    def pruned(self) -> bool:
        """Whether the search has left a legal move out (it then proves nothing by ending)."""
        return bool(self._arrays["regs"][R_PRUNED])

    @property
    def depth_hit(self) -> bool:
        """Whether the depth limit cut a line (an exhausted search then proves nothing)."""
        return bool(self._arrays["regs"][R_DEPTH_HIT])

    @property
    def best_foundation(self) -> int:
        """The most foundation cards reached on any searched line."""
        return int(self._arrays["regs"][R_BEST])

    @property
    def best_first_move(self) -> int:
        """The first move of the line that first reached :attr:`best_foundation` (-1 if no line reached
        more foundation cards than the start): where a search found no win, the way it got furthest."""
        a = self._arrays
        m = int(a["regs"][R_BEST_MOVE])
        if m < 0 or not a["regs"][R_STARTED]:
            return -1
        return m if m < self.variant.n_actions else int(step_action(a["states"][0], self.variant.spec))

    def restart(self, start: np.ndarray) -> None:
        """Forget the search and start a new one from ``start`` (reusing the memory)."""
        self.start = start
        self._arrays["table"][:] = 0
        self._arrays["best"][:] = 0
        self._arrays["regs"][:] = 0

    def run(self, budget: int) -> int:
        """Search at most ``budget`` more nodes; return the status code (:mod:`~solitaire_env.solver.registers`)."""
        a = self._arrays
        search_slice(self.start, self.variant.spec, self.variant.actions, a["table"], self.max_load, a["states"],
                     a["moves"], a["n_moves"], a["next_move"], a["regs"], budget, a["scratch"], a["mask"],
                     self.min_score, self.jitter, self.seed, self.stock_macros, a["scores"],
                     self.agent_order, self.dominance, a["best"], self.waste_safe)
        return int(a["regs"][R_STATUS])

    def first_move(self) -> int:
        """After a win: the first branching move from the start (-1 if the start itself was won)."""
        a = self._arrays
        if a["regs"][R_DEPTH] == 0:
            return -1
        m = int(a["moves"][0, a["next_move"][0] - 1])
        return m if m < self.variant.n_actions else int(step_action(a["states"][0], self.variant.spec))

    def solution(self) -> list[int]:
        """After a win: every action id from the start position to the win."""
        a = self._arrays
        depth = int(a["regs"][R_DEPTH])
        path = np.array([a["moves"][d, a["next_move"][d] - 1] for d in range(depth)], dtype=np.int32)
        steps = int((path // self.variant.n_actions).sum())
        out = np.zeros(2 * depth + steps + self.variant.n_cards + 1, dtype=np.int16)  # + cards sent home
        n = replay_path(self.start, self.variant.spec, self.variant.actions, path, depth, out, self.waste_safe)
        return [int(x) for x in out[:n]]


# Compiled code here holds the other solver modules' and the core's code and variant.py's constants: a
# cache built from other sources is dropped.
drop_stale_cache(__name__)

__all__ = ["Solver", "order_moves", "replay_path", "search_slice"]
