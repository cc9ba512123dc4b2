"""The plan agent where nothing is hidden (agents/open_plan.py, FreeCell): its budget a move, its way
forward where the search found no win, and the solver's record of that way (Solver.best_first_move)."""

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env import solver
from solitaire_env.agents import make_agent
from solitaire_env.agents.open_plan import OpenPlanAgent
from solitaire_env.engine import core, state
from solitaire_env.engine.games import get_variant

FREECELL = get_variant("freecell")


def test_plan_in_freecell_is_the_open_planner_and_the_names_that_cannot_be_are_refused():
    agent = make_agent("plan:1x3000", "FreeCell-v0", seed=0)
    assert isinstance(agent, OpenPlanAgent) and agent.nodes == 3000 and agent.name == "plan:1x3000"
    assert not isinstance(make_agent("plan:2x300", "RankAndFile-v0"), OpenPlanAgent)
    with pytest.raises(ValueError, match="FreeCell-v0 hides none; use plan:1xN"):
        make_agent("plan-sliced", "FreeCell-v0")
    with pytest.raises(ValueError, match="hides cards or has a stock"):
        OpenPlanAgent("rank_and_file")


def test_best_first_move_starts_a_line_that_reaches_the_best_foundation():
    """After a search with no win, best_first_move is a legal move of the start, and a search after it
    reaches as many foundation cards as the first search's best (the line it recorded goes on from there)."""
    checked = 0
    for seed in range(1, 9):
        start = state.deal(FREECELL, seed)
        search = solver.Solver(FREECELL, start.copy(), memory_mb=4, min_score=solver.PROMISING)
        assert search.best_first_move == -1  # nothing searched yet
        if search.run(300) == solver.WON:
            continue
        first, best = search.best_first_move, search.best_foundation
        if best == core.foundation_cards(start, FREECELL.spec):
            assert first == -1
            continue
        mask = np.zeros(FREECELL.n_actions, dtype=np.int8)
        core.legal_mask(start, FREECELL.spec, FREECELL.actions, mask)
        assert 0 <= first < FREECELL.n_actions and mask[first]
        child = start.copy()
        core.apply_action(child, FREECELL.spec, FREECELL.actions, first)
        after = solver.Solver(FREECELL, child, memory_mb=4, min_score=solver.PROMISING)
        after.run(3000)
        assert after.best_foundation >= best, seed
        checked += 1
    assert checked >= 3


def _count_positions(agent: OpenPlanAgent) -> list[int]:
    """Wrap the agent's solver so that each call of ``run`` adds the positions it searched to a tally."""
    tally = [0]
    run = agent._solver.run

    def counted(budget: int) -> int:
        before = agent._solver.nodes
        status = run(budget)
        tally[0] += agent._solver.nodes - before
        return status

    agent._solver.run = counted
    return tally


def test_a_move_searches_at_most_twice_its_budget_and_every_move_is_legal():
    env = gym.make("FreeCell-v0")
    agent = OpenPlanAgent("freecell", seed=0, nodes=200)
    tally = _count_positions(agent)
    checks = 0
    for seed in (1, 2):
        obs, info = env.reset(seed=seed)
        agent.reset(seed=seed)
        for _ in range(150):
            tally[0] = 0
            action = agent.act(obs, info)
            assert info["action_mask"][action]
            assert tally[0] <= 2 * agent.nodes
            checks += tally[0] > agent.nodes  # the check of the move played searched too
            obs, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
    assert checks > 0


def test_a_move_proved_lost_is_passed_over(monkeypatch):
    """Where no win is found, the move the check proves lost is not played: the next is checked."""
    env = gym.make("FreeCell-v0")
    obs, info = env.reset(seed=5)
    agent = OpenPlanAgent("freecell", seed=0, nodes=50)
    monkeypatch.setattr(agent, "_search", lambda world: solver.RUNNING)  # the move's search finds no win
    checked = []

    def every_move(world, budget):
        checked.append(world.copy())
        return solver.EXHAUSTED if len(checked) == 1 else solver.RUNNING  # the first move checked is lost

    monkeypatch.setattr(agent, "_search_every_move", every_move)
    monkeypatch.setattr(type(agent._solver), "nodes", property(lambda self: 1))
    monkeypatch.setattr(type(agent._solver), "best_first_move", property(lambda self: -1))
    agent.reset(seed=0)
    while True:  # past the opening's safe moves, to a move the agent searches
        before = agent.searched
        action = agent.act(obs, info)
        if agent.searched > before:
            break
        obs, *_, info = env.step(action)
    assert len(checked) == 2 and agent.lost_moves == 1
    lost = agent._heuristic_choice  # no furthest line: the heuristic's move is checked first
    assert action != lost and info["action_mask"][action]


def _won_after(world: np.ndarray, line: list[int]) -> bool:
    """Whether playing ``line`` from ``world`` (legal move after legal move) puts every card home."""
    world = world.copy()
    mask = np.zeros(FREECELL.n_actions, dtype=np.int8)
    for action in line:
        core.legal_mask(world, FREECELL.spec, FREECELL.actions, mask)
        if not mask[action]:
            return False
        core.apply_action(world, FREECELL.spec, FREECELL.actions, action)
    return core.foundation_cards(world, FREECELL.spec) == FREECELL.n_cards


def test_the_planner_labels_a_learners_move_that_keeps_as_short_a_win():
    """label(): the agent's own move whatever is proposed; the label is the proposal only where a win
    after it (the line the agent keeps from there, checked move by move) is no longer than the agent's."""
    env = gym.make("FreeCell-v0")
    taken = refused = 0
    for deal in (2, 3):
        obs, info = env.reset(seed=deal)
        agent = OpenPlanAgent("freecell", seed=0, nodes=2000)
        table = state.deal(FREECELL, deal)  # the env's deal, played along
        for _ in range(6):  # past the opening's safe moves
            action = agent.act(obs, info)
            core.apply_action(table, FREECELL.spec, FREECELL.actions, action)
            obs, *_, info = env.step(action)
        own = OpenPlanAgent("freecell", seed=0, nodes=2000)
        move = own.act(obs, info)
        assert own._plan  # the agent holds a proved win here
        for proposal in np.flatnonzero(info["action_mask"]):
            judge = OpenPlanAgent("freecell", seed=0, nodes=2000)
            played, label = judge.label(obs, info, int(proposal))
            assert played == move and label in (move, proposal)
            if label != move:
                child = table.copy()
                core.apply_action(child, FREECELL.spec, FREECELL.actions, label)
                assert _won_after(child, judge._plan) and len(judge._plan) <= len(own._plan)
                taken += 1
            elif proposal != move:
                refused += 1
    assert taken and refused
