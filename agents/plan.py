"""A planning agent for games with hidden cards: solved guesses whose winning lines it keeps.

:class:`PlanAgent` holds ``worlds`` guesses of the hidden cards (each a uniformly random arrangement
of exactly the cards not visible, as the search agent deals them: :func:`~solitaire_env.agents.search.sample_world`).
It solves each guess with the full solver (:func:`solitaire_env.solver.solve`: restarts, the agent's
guidance, stock macros where the game has them) in at most ``nodes`` positions a solve: the solver checks
that limit every tenth of it (its ``slice_nodes``), and the game's shares of the limit between its first
search and the complete search (:data:`~solitaire_env.solver.FIRST_PHASE`) are whole tenths, so a solve
searches at most ``nodes`` positions when ``nodes`` is a multiple of 10 (under a tenth more otherwise).
``sliced=True`` (the ``plan-sliced`` agent) keeps the solver's own slices instead, as the agent first
measured did: the limit is checked only between slices of 20,000 positions in the first search and
50,000 in the complete search, so a solve searches at least one slice of each phase it runs (up to
20,000 + 50,000 positions; Rainbow's first search is complete, so there up to 20,000) and every
``nodes`` below 20,000 plays the same game. A guess's line
shows one winning move, not every one, so where the lines start with different moves the agent checks
them in hindsight (Bjarnason, Fern and Tadepalli's hindsight optimization): for at most ``candidates``
of those moves (the heuristic's first, then by how many lines start with it) it plays the move in each
guess won by another line and solves from there, and plays the move after which most guesses are still
won. The first move that keeps every won guess won ends the check; what the check found becomes those
guesses' lines. ``candidates=1`` plays the move most lines start with (the heuristic's where tied).

What makes it stronger than :mod:`~solitaire_env.agents.search` at the same seconds is that the search
is reused between moves: a guess stays as long as it shows what the table shows. After each move the
agent plays the move in every guess it holds and compares the guess's observation with the real one;
a guess that a newly turned card contradicts is dropped and a fresh one dealt and solved in its place.
A kept guess whose line began with the move played goes on with the rest of its line, unsearched; one
whose line began otherwise is solved again from where it now stands. A guess proved lost stays lost
(from a lost position every line loses). A line whose next move leads back to a position already seen
this episode gets no vote, as in the search agent: a move that can be undone keeps every guess won, and
where the undo was a safe move the agent played the two in turn until the time limit. Where no guess
has a winning line the agent plays as the heuristic agent would.

Like the search agent it reads only the observation and the action mask, never the engine's state
(tested), and its guesses come from its own generator, seeded by ``reset(seed)``: a seeded evaluation
repeats exactly. In a game that hides nothing (FreeCell) there is one guess, the table itself, and the
first solve is a whole-game solve: there ``make_agent("plan:1xN", ...)`` gives
:class:`~solitaire_env.agents.open_plan.OpenPlanAgent` instead, with a budget of positions a move.

Determinized planning is optimistic (each guess is solved as if its hidden cards were known, the
weakness Bjarnason, Fern and Tadepalli's hindsight optimization shares); a majority over guesses is
what keeps it honest. Its strength against its budget is in ``docs/baselines.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solitaire_env import solver
from solitaire_env.agents.base import Agent
from solitaire_env.agents.heuristic import HeuristicAgent, Rules
from solitaire_env.agents.search import hidden_cards, sample_world
from solitaire_env.engine import core
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.variant import Variant

# What a guess knows besides its cards: a winning line (a list of actions), LOST (proved), or UNSOLVED
# (not solved yet, or its line no longer fits: solved at the next decision it may be).
LOST, UNSOLVED = "lost", None
# A guess the solver could not decide within its budget is tried again after 1, 2, 4, ... decisions: a
# position a move away is mostly as hard, and solving every such guess at every move made a lost game
# (played to the time limit) cost minutes.
FIRST_RETRY = 1
# The solver checks a solve's position limit every 1/SLICES of it: the games' first-search shares
# (solver.FIRST_PHASE: 0.9, 0.2) are whole tenths, so both phases stop on their share.
SLICES = 10


class PlanAgent(Agent):
    """Determinized planning with the guesses' winning lines kept between moves; see the module docstring.

    ================  =========================================================================
    argument          meaning
    ================  =========================================================================
    variant           the game (name or :class:`~solitaire_env.engine.variant.Variant`)
    seed              seeds the guesses of hidden cards
    worlds            guesses held
    nodes             the solver's position limit for each solve of a guess
    sliced            check ``nodes`` only between the solver's own slices (``plan-sliced``; see
                      the module docstring)
    memory_mb         the solver's table for each solve
    candidates        moves the hindsight check compares at a decision (1: no check)
    ================  =========================================================================

    It needs the default ``obs_mode="codes"`` observation.
    """

    name = "plan"

    def __init__(self, variant: str | Variant, seed: int | None = None, worlds: int = 8, nodes: int = 1000,
                 memory_mb: int = 16, candidates: int = 3, sliced: bool = False) -> None:
        if min(worlds, nodes, memory_mb, candidates) < 1:
            raise ValueError("worlds, nodes, memory_mb and candidates must be positive, got "
                             f"{worlds}, {nodes}, {memory_mb} and {candidates}")
        self.variant = get_variant(variant)
        self.worlds, self.nodes, self.memory_mb, self.candidates = worlds, nodes, memory_mb, candidates
        self.sliced = sliced
        if sliced:
            self.name = "plan-sliced"
        self.rules = Rules(self.variant)
        self.fallback = HeuristicAgent(self.variant)
        self._rng = np.random.default_rng(seed)
        # [state, line | LOST | UNSOLVED, the decision it may be solved at, the wait after a failed solve]
        self._guesses: list[list[Any]] = []
        self._codes = np.zeros(self.variant.obs_size, dtype=np.int16)
        self._record = np.zeros(self.variant.n_cards + 1, dtype=np.int16)
        self.searched = self.solves = 0  # decisions that asked the guesses, and the solver calls made
        self._decision = 0  # this episode's decisions that asked the guesses
        self._aimless, self._heuristic_choice = False, -1

    @property
    def stuck(self) -> bool:
        """Whether the last move was the heuristic's while it was stuck and no guess had a winning line."""
        return self._aimless

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.fallback.reset(seed)
        self._guesses = []
        self._aimless = False
        self._decision = 0

    def act(self, observation: Any, info: dict) -> int:
        planned, action = self._choose(observation, info)
        self._aimless = not planned and self.fallback.stuck and action == self._heuristic_choice
        v = self.variant
        for guess in self._guesses:  # every guess plays the move, and its line goes on or is solved again
            core.apply_action(guess[0], v.spec, v.actions, action)
            line = guess[1]
            if isinstance(line, list) and line and line[0] == action:
                line.pop(0)
            elif line is not LOST:
                guess[1] = UNSOLVED
        return action

    def _choose(self, observation: Any, info: dict) -> tuple[bool, int]:
        """(whether a guess's winning line chose it, the action)."""
        mask = np.asarray(info["action_mask"])
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in this position (the episode is over)")
        self._heuristic_choice = self.fallback.act(observation, info)  # keeps its memory of positions current
        self._keep_guesses_that_show(np.asarray(observation))
        if legal.size == 1:
            return False, int(legal[0])
        v = self.variant
        t = self.rules.observe(observation)
        world = sample_world(self.rules, t, self._rng)
        # Safe moves depend on visible cards only: any guess shows the same ones. (Not one the mask forbids:
        # with no_revisit, a card back up to the foundation it came down from repeats a position.)
        if solver.play_safe_moves(world, v.spec, v.actions, self._record, 0, True) > 0 and mask[self._record[0]]:
            return False, int(self._record[0])
        wanted = self.worlds if hidden_cards(t) else 1
        while len(self._guesses) < wanted:
            self._guesses.append([sample_world(self.rules, t, self._rng), UNSOLVED, 0, FIRST_RETRY])
        self.searched += 1
        self._decision += 1
        votes = np.zeros(v.n_actions, dtype=np.int64)
        for guess in self._guesses:
            if guess[1] is UNSOLVED and guess[2] <= self._decision:
                guess[1] = self._solve(guess[0])
                if guess[1] is UNSOLVED:  # the budget ran out: wait, then try again
                    self._wait(guess)
                else:
                    guess[3] = FIRST_RETRY
            line = guess[1]
            # Never back to a position already seen this episode (see the module docstring).
            if isinstance(line, list) and line and mask[line[0]] and self.fallback.fresh(t, line[0]):
                votes[line[0]] += 1
        if votes.max() == 0:
            return False, self._heuristic_choice
        if self.candidates > 1:
            return True, self._hindsight(votes)
        if votes[self._heuristic_choice] == votes.max():
            return True, self._heuristic_choice
        return True, int(np.argmax(votes))

    def _hindsight(self, votes: np.ndarray) -> int:
        """The move after which most guesses are still won (hindsight optimization over the guesses).

        A guess's line gives its first move a win for free; the other moves with votes (at most
        ``candidates``, the heuristic's first, then by votes) are played in each guess won otherwise and
        solved from there. The first move to keep every won guess won ends the check (none can do better).
        """
        won = int(votes.sum())
        order = sorted(np.flatnonzero(votes), key=lambda a: (a != self._heuristic_choice, -votes[a], a))
        best, best_score, best_results = -1, -1, {}
        for move in order[:self.candidates]:
            results, score = {}, int(votes[move])
            for i, guess in enumerate(self._guesses):
                line = guess[1]
                if not isinstance(line, list) or not line or line[0] == move:
                    continue
                after = guess[0].copy()
                core.apply_action(after, self.variant.spec, self.variant.actions, int(move))
                results[i] = self._solve(after)
                score += isinstance(results[i], list)
            if score > best_score:
                best, best_score, best_results = int(move), score, results
            if best_score == won:
                break
        for i, result in best_results.items():  # what the check found becomes the guess's line after the move
            guess = self._guesses[i]
            guess[1] = [best] + result if isinstance(result, list) else result
            if result is UNSOLVED:  # the budget ran out after the move: wait before solving it again
                self._wait(guess)
        return best

    def _wait(self, guess: list[Any]) -> None:
        """Back off a guess the solver could not decide: solve it again after its wait, then wait twice as long."""
        guess[2], guess[3] = self._decision + guess[3], 2 * guess[3]

    def _keep_guesses_that_show(self, observation: np.ndarray) -> None:
        """Drop the guesses whose observation differs from the table's (a turned card contradicted them)."""
        kept = []
        for guess in self._guesses:
            core.observe(guess[0], self.variant.spec, self._codes)
            if np.array_equal(self._codes, observation):
                kept.append(guess)
        self._guesses = kept

    def _solve(self, world: np.ndarray) -> list[int] | str | None:
        """A winning line of ``world``, LOST, or UNSOLVED (the budget ran out)."""
        self.solves += 1
        slices = {} if self.sliced else {"slice_nodes": max(1, -(-self.nodes // SLICES))}
        result = solver.solve(self.variant, state_array=world.copy(), time_limit=None, max_nodes=self.nodes,
                              memory_mb=self.memory_mb, **slices)
        if result.result == "won":
            return list(result.moves)
        return LOST if result.result == "lost" else UNSOLVED


__all__ = ["PlanAgent"]
