"""A determinized search agent: it plays by solving guesses of the hidden cards.

At each decision :class:`SearchAgent` deals ``worlds`` guesses of the cards it cannot see (face-down
tableau and reserve cards, the unseen stock), each a uniformly random arrangement of exactly the
cards not visible anywhere on the table, so every guess agrees with everything the player has seen.
It runs the perfect-information solver (:mod:`solitaire_env.solver`, promising moves only) on each
guess for at most ``nodes`` positions, and plays the first move that the most solved guesses start
with ("perfect-information Monte Carlo", as in Ginsberg's GIB for bridge), unless the heuristic's move
wins as many of the same guesses (a solution's first move is only one of many winning moves, and
the heuristic's is the better bet on the table as it really is). A move back to a position
already seen this episode gets no vote (a guess cannot tell that a move undoes the last one; without
this rule the agent cycled until the time limit). Where no guess is solved within the budget it plays
as the heuristic agent (:mod:`solitaire_env.agents.heuristic`) would.

It reads only the observation and the action mask, never the engine's state, so two positions that
differ only in hidden cards get the same choices (tested). Its randomness (the guesses) comes from
its own generator, seeded by ``reset(seed)``: a seeded evaluation repeats exactly.

Safe foundation moves (see the solver) depend only on visible cards; they are played without search.

In a game that hides nothing (FreeCell) there is one world, the table itself, and a win the solver
finds there is a proved win: the agent keeps that line and plays it to the end without searching
again (the rules are deterministic, so nothing can change it). ``nodes`` is then a budget per
decision: a small one searches again at every move until some search reaches a win from where the
game stands, every other search with the solver's moves of equal score in a random order (the same
position searched the same way would fail the same way). The games with hidden cards play as before
even once every card has been seen (plans there: not yet measured).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from solitaire_env import solver
from solitaire_env.agents.base import Agent
from solitaire_env.agents.heuristic import HeuristicAgent, Rules, Table
from solitaire_env.engine import core, position, state
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.variant import Variant


def sample_world(rules: Rules, t: Table, rng: np.random.Generator) -> np.ndarray:
    """An engine state that shows exactly the visible table ``t``; hidden cards dealt at random."""
    v = rules.variant
    unseen = np.full(52, v.decks, dtype=np.int64)
    foundations = [[fs * 13 + (t.base + k) % 13 for k in range(n)] for n, fs in zip(t.fh, t.fs, strict=True)]
    seen = [c for pile in t.up for c in pile] + list(t.waste) + [c for f in foundations for c in f] + list(t.res_up)
    seen += [c for c in t.cells if c >= 0]
    if t.stock is not None:
        seen += list(t.stock)
    for c in seen:
        unseen[c] -= 1
    if unseen.min() < 0:
        raise ValueError("the observation shows more copies of a card than the game has")
    hidden = rng.permutation(np.repeat(np.arange(52), unseen)).tolist()
    need = hidden_cards(t)
    if len(hidden) != need:
        raise ValueError(f"the observation hides {need} cards but {len(hidden)} are unaccounted for")
    take = iter(hidden)
    tableau = [([next(take) for _ in range(d)] + list(up), d) for up, d in zip(t.up, t.down, strict=True)]
    reserve = ([next(take) for _ in range(t.res_down)] + list(t.res_up), t.res_down)
    stock = list(t.stock) if t.stock is not None else [next(take) for _ in range(t.stock_n)]
    return state.build(v, tableau=tableau, foundations=foundations, stock=stock, waste=list(t.waste),
                        reserve=reserve, redeals=t.redeals, base=t.base, cells=list(t.cells) if t.cells else None)


def hides_nothing(variant: Variant) -> bool:
    """Whether the game deals every card face up and has no stock (FreeCell): one world, the table itself."""
    return variant.stock_capacity == 0 and int(position.hidden_cards(state.deal(variant, 0), variant.spec)) == 0


def hidden_cards(t: Table) -> int:
    """How many cards the visible table ``t`` hides (face down, or in a stock not seen)."""
    return sum(t.down) + t.res_down + (t.stock_n if t.stock is None else 0)


class SearchAgent(Agent):
    """Determinized (perfect-information Monte Carlo) search; see the module docstring.

    ================  =========================================================================
    argument          meaning
    ================  =========================================================================
    variant           the game (name or :class:`~solitaire_env.engine.variant.Variant`)
    seed              seeds the guesses of hidden cards
    worlds            guesses per decision
    nodes             solver positions per guess
    ================  =========================================================================

    It needs the default ``obs_mode="codes"`` observation.
    """

    name = "search"

    def __init__(self, variant: str | Variant, seed: int | None = None, worlds: int = 8, nodes: int = 1000) -> None:
        if worlds < 1 or nodes < 1:
            raise ValueError(f"worlds and nodes must be positive, got {worlds} and {nodes}")
        self.variant = get_variant(variant)
        self.worlds, self.nodes = worlds, nodes
        self.rules = Rules(self.variant)
        self.fallback = HeuristicAgent(self.variant)
        self._rng = np.random.default_rng(seed)
        v = self.variant
        # 16 bytes of table a position searched, as the solver's restarts size theirs (solver/api.py).
        self._solver = solver.Solver(v, np.zeros(v.state_size, dtype=np.int8), memory_mb=max(1, nodes * 16 >> 20),
                                     max_depth=1024,
                                     min_score=solver.PROMISING)
        self._record = np.zeros(v.n_cards + 1, dtype=np.int16)
        self.searched = self.solved = 0  # decisions searched, and those where some guess was solved
        self._aimless, self._heuristic_choice = False, -1
        self._plan: list[int] = []  # the rest of a proved win, where nothing is hidden
        self._plan_at: tuple | None = None  # the table the plan goes on from (the key after its last move)
        self._episode_searches = 0  # this episode's: seeds the random order (an episode repeats alone)
        # A game that hides nothing (FreeCell): one world, the table itself, so a found win is a plan.
        self.open_game = hides_nothing(v)

    @property
    def stuck(self) -> bool:
        """Whether the last move was the heuristic's while it was stuck (no search found a win either):
        an aimless move, which a learner should not copy."""
        return self._aimless

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.fallback.reset(seed)
        self._aimless = False
        self._plan = []
        self._episode_searches = 0

    def act(self, observation: Any, info: dict) -> int:
        action = self._choose(observation, info)
        self._aimless = self.fallback.stuck and action == self._heuristic_choice
        return action

    def _choose(self, observation: Any, info: dict) -> int:
        mask = np.asarray(info["action_mask"])
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in this position (the episode is over)")
        heuristic_choice = self.fallback.act(observation, info)  # keeps its memory of positions current
        self._heuristic_choice = heuristic_choice
        t = self.rules.observe(observation)
        if self._plan and t.key() == self._plan_at:
            # A win found earlier with every card known, and its moves played so far: the rules are
            # deterministic, so it is played on without searching again. (Where another player moved,
            # as a learner does while this agent labels its positions, the table differs: search anew.)
            action = self._plan.pop(0)
            if mask[action]:
                return self._follow(t, action)
        self._plan = []
        if legal.size == 1:
            return int(legal[0])
        v = self.variant
        # Safe moves depend on visible cards only: any guess shows the same ones.
        world = sample_world(self.rules, t, self._rng)
        # The env's mask may forbid a move the rules allow (no_revisit: a card back up to the foundation
        # it came down from repeats a position); such a move is never played, whatever proves it good.
        if solver.play_safe_moves(world.copy(), v.spec, v.actions, self._record, 0, True) > 0 and mask[self._record[0]]:
            return int(self._record[0])
        # With nothing hidden (FreeCell) every guess is the position itself: one is enough.
        guesses = self.worlds if hidden_cards(t) else 1
        worlds = [world] + [sample_world(self.rules, t, self._rng) for _ in range(guesses - 1)]
        self.searched += 1
        self._episode_searches += 1
        # One world searched again move after move fails the same way each time; every other search
        # breaks ties among equally scored moves at random (the solver's restarts do the same), seeded by
        # the search's number in the episode so a game repeats. Guessed worlds differ already: they keep the order.
        self._solver.jitter = solver.JITTER if self.open_game and self._episode_searches % 2 == 0 else 0
        self._solver.seed = self._episode_searches
        votes = np.zeros(v.n_actions, dtype=np.int64)
        for world in worlds:
            if self._search(world) == solver.WON:
                if self.open_game:
                    # The table as it really is: the line is a proved win; keep it for the moves to come.
                    line = self._solver.solution()
                    if not mask[line[0]]:  # the env forbids the line's first move (no_revisit)
                        line = self._line_after_allowed_move(world, legal, heuristic_choice)
                    if line:
                        self.solved += 1
                        self._plan = line[1:]
                        return self._follow(t, line[0])
                    continue
                first = self._solver.first_move()
                # Never back to a position already seen this episode: a guess cannot tell that the
                # move undoes the last one, and voting for it made the agent cycle.
                if first >= 0 and mask[first] and self.fallback.fresh(t, first):
                    votes[first] += 1
        if votes.max() == 0:
            return self._no_win(t, world, mask, heuristic_choice)
        self.solved += 1
        best = int(np.argmax(votes))
        if best == heuristic_choice:
            return best
        # A solution's first move is one winning move among many; keep the heuristic's move unless,
        # over the same guesses, the voted move wins strictly more often.
        return best if self._wins_after(worlds, best) > self._wins_after(worlds, heuristic_choice) else heuristic_choice

    def _search(self, world: np.ndarray) -> int:
        """Search ``world`` within the budget; return the solver's status (a subclass may search otherwise)."""
        self._solver.restart(world)
        return self._solver.run(self.nodes)

    def _no_win(self, t: Table, world: np.ndarray, mask: np.ndarray, heuristic_choice: int) -> int:
        """The move where no search found a win (``world`` the last searched): the heuristic's."""
        return heuristic_choice

    def _follow(self, t: Table, action: int) -> int:
        """Play ``action`` of the plan from the table ``t``, noting the table the plan goes on from."""
        self._plan_at = self.rules.apply(t, action).key() if self._plan else None
        return int(action)

    def _line_after_allowed_move(self, world: np.ndarray, legal: np.ndarray, first_try: int) -> list[int]:
        """A proved win that starts with one of ``legal`` (the heuristic's move ``first_try`` tried first),
        each searched within the budget; empty if none is found."""
        v = self.variant
        for action in sorted(legal.tolist(), key=lambda a: a != first_try):
            child = world.copy()
            core.apply_action(child, v.spec, v.actions, action)
            self._solver.restart(child)
            if self._solver.run(self.nodes) == solver.WON:
                return [action, *self._solver.solution()]
        return []

    def _wins_after(self, worlds: list[np.ndarray], action: int) -> int:
        """In how many guesses the solver wins after ``action`` within its budget."""
        v = self.variant
        wins = 0
        for world in worlds:
            child = world.copy()
            core.apply_action(child, v.spec, v.actions, action)
            self._solver.restart(child)
            wins += self._solver.run(self.nodes) == solver.WON
        return wins


__all__ = ["SearchAgent", "hidden_cards", "hides_nothing", "sample_world"]
