"""A planning agent for a game that hides nothing (FreeCell), with a budget of positions a move.

The plan agent (:mod:`~solitaire_env.agents.plan`) plans over guesses of hidden cards; where nothing is
hidden its one guess is the table and its first solve a whole-game solve. :class:`OpenPlanAgent` is what
``make_agent`` gives for ``plan`` in such a game instead: the search agent's loop
(:class:`~solitaire_env.agents.search.SearchAgent`: a safe move at once, a win found kept and played to the
end without searching again) with a fixed budget of ``nodes`` positions a move, spent so that each move
goes somewhere:

1. The search of the promising moves (the solver's first restart) runs first. Where it ends without a
   win because those moves all lead nowhere, every move is searched for the rest of the budget.
2. Where no win was found, the agent plays the first move of the line that reached the most foundation
   cards (the horizon recedes: the next search goes on from there), else the heuristic's move, else any.
3. Before it plays that move it searches every move after it, with a second budget of ``nodes`` that
   the moves it checks in turn share: a move the search proves lost (it searched every line after it
   and found no win) is passed over for the next, and a win found there is kept as the plan. So a move
   costs at most ``2 * nodes`` positions (where the env forbids a found line's first move, with
   ``no_revisit``, the search agent's search after each allowed move comes on top).

A move back to a position seen this episode is never chosen (as in the search agent). Its strength
against its budget, and how many of its wins the first search found whole, are in ``docs/baselines.md``
(FreeCell).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solitaire_env import solver
from solitaire_env.agents.heuristic import Table
from solitaire_env.agents.search import SearchAgent, sample_world
from solitaire_env.engine import core
from solitaire_env.engine.variant import Variant


class OpenPlanAgent(SearchAgent):
    """Per-move planning where nothing is hidden; see the module docstring.

    ================  =========================================================================
    argument          meaning
    ================  =========================================================================
    variant           the game (name or :class:`~solitaire_env.engine.variant.Variant`); one that
                      hides no card and has no stock
    seed              seeds the random order of equally scored moves
    nodes             solver positions for a move's search, and as many for the check of the
                      move it plays where the search found no win
    ================  =========================================================================
    """

    name = "plan"

    def __init__(self, variant: str | Variant, seed: int | None = None, nodes: int = 1000) -> None:
        super().__init__(variant, seed, worlds=1, nodes=nodes)
        if not self.open_game:
            raise ValueError(f"{self.variant.title} hides cards or has a stock: use PlanAgent "
                             "(agents/plan.py) there")
        self.lost_moves = 0  # moves the check proved lost and passed over (all episodes)

    def label(self, observation: Any, info: dict, proposal: int) -> tuple[int, int]:
        """This agent's move at the position, and the label it gives a learner that proposes ``proposal``
        there (expert iteration with ``pretrain.accept_student``).

        The label is the proposal where the agent's move starts a proved win and a search of ``nodes``
        positions after the proposal finds a win no longer than that one; else the agent's own move. A
        position has many winning moves and the agent's is one found first, which a one-pass policy
        cannot predict: this way the learner is taught the winning move it already prefers, and
        corrected only where its move loses the win found or lengthens it.
        """
        move = self.act(observation, info)
        mask = np.asarray(info["action_mask"])
        if proposal == move or not self._plan or not (0 <= proposal < len(mask) and mask[proposal]):
            return move, move
        t = self.rules.observe(observation)
        if not self.fallback.fresh(t, proposal):  # never teach a move back to a position seen
            return move, move
        child = sample_world(self.rules, t, self._rng)  # nothing is hidden: the table itself
        core.apply_action(child, self.variant.spec, self.variant.actions, proposal)
        # self._plan is the rest of the agent's own line after its move.
        if self._search(child) == solver.WON and len(self._solver.solution()) <= len(self._plan):
            self._plan = self._solver.solution()  # the learner plays the proposal: its line is the plan now
            return move, self._follow(t, proposal)
        return move, move

    def _search(self, world: np.ndarray) -> int:
        status = super()._search(world)
        left = self.nodes - self._solver.nodes
        if status == solver.EXHAUSTED and self._solver.pruned and left > 0:
            # The promising moves lead nowhere, which proves nothing: every move, for the rest of the budget.
            status = self._search_every_move(world, left)
        return status

    def _no_win(self, t: Table, world: np.ndarray, mask: np.ndarray, heuristic_choice: int) -> int:
        furthest = self._solver.best_first_move
        legal = [int(a) for a in np.flatnonzero(mask)]
        order = [a for a in dict.fromkeys([furthest, heuristic_choice, *legal])
                 if a >= 0 and mask[a] and self.fallback.fresh(t, a)]
        left = self.nodes
        v = self.variant
        for action in order:
            if left <= 0:
                return action
            child = world.copy()
            core.apply_action(child, v.spec, v.actions, action)
            status = self._search_every_move(child, left)
            left -= self._solver.nodes
            if status == solver.WON:  # a proved win after the move: the plan from here on
                self.solved += 1
                self._plan = self._solver.solution()
                return self._follow(t, action)
            if status == solver.EXHAUSTED and not self._solver.depth_hit:  # every line after it ends: lost
                self.lost_moves += 1
                continue
            return action
        return heuristic_choice  # every move proved lost, or back to a position seen: the game is lost

    def _search_every_move(self, world: np.ndarray, budget: int) -> int:
        """Search every move (not the promising ones only) from ``world`` for ``budget`` positions."""
        self._solver.min_score = 0
        try:
            self._solver.restart(world)
            return self._solver.run(budget)
        finally:
            self._solver.min_score = solver.PROMISING


__all__ = ["OpenPlanAgent"]
