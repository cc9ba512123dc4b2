"""The planning agent: fair (never reads hidden cards), legal, reproducible, and its guesses' lines reused."""

import gymnasium as gym
import numpy as np
import pytest
from test_search_agent import observe, rehide

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env import solver
from solitaire_env.agents import make_agent
from solitaire_env.agents.plan import LOST, UNSOLVED, PlanAgent
from solitaire_env.agents.search import hidden_cards
from solitaire_env.engine import core, state
from solitaire_env.engine.games import get_variant


@pytest.mark.parametrize("game", ["klondike_draw3", "rank_and_file"])
def test_choices_do_not_depend_on_hidden_cards(game):
    """Two positions that look the same get the same moves, move after move, until a card turns up
    differently (the agent's guesses are its own: it never reads the state behind the observation)."""
    variant = get_variant(game)
    rng = np.random.default_rng(0)
    for seed in range(2):
        a = state.deal(variant, seed)
        b = rehide(variant, a, rng)
        agents = [PlanAgent(variant, worlds=3, nodes=300) for _ in range(2)]
        for agent in agents:
            agent.reset(seed=seed)
        for _ in range(40):
            (obs_a, info_a), (obs_b, info_b) = observe(variant, a), observe(variant, b)
            if not np.array_equal(obs_a, obs_b) or not info_a["action_mask"].any():
                break  # a card turned up differently: the positions now look different
            choice_a, choice_b = agents[0].act(obs_a, info_a), agents[1].act(obs_b, info_b)
            assert choice_a == choice_b and info_a["action_mask"][choice_a] == 1
            core.apply_action(a, variant.spec, variant.actions, choice_a)
            core.apply_action(b, variant.spec, variant.actions, choice_b)


def test_lines_are_reused_and_every_kept_guess_shows_the_table():
    """Klondike draw 3: at every decision each guess the agent holds shows exactly the table; most
    decisions are answered by lines found earlier (far fewer solves than guesses x decisions); the
    game repeats move for move with the same seed."""
    env = gym.make("Klondike-v0", draw=3, max_episode_steps=300)
    variant = env.unwrapped.variant
    runs = []
    for _ in range(2):
        agent = PlanAgent(variant, seed=0, worlds=4, nodes=1000)
        obs, info = env.reset(seed=10_000)
        agent.reset(seed=1)
        actions, held = [], 0
        terminated = truncated = False
        while not (terminated or truncated):
            action = agent.act(obs, info)
            assert info["action_mask"][action] == 1
            actions.append(action)
            obs, _, terminated, truncated, info = env.step(action)
            agent._keep_guesses_that_show(obs)  # (what the next decision does first)
            for guess in agent._guesses:
                shown, _ = observe(variant, guess[0])
                assert np.array_equal(shown, obs)
                assert guess[1] is LOST or guess[1] is UNSOLVED or isinstance(guess[1], list)
            held += len(agent._guesses)
        runs.append(actions)
        assert held > 0 and agent.searched > 20
        assert agent.solves < agent.worlds * agent.searched / 2, (agent.solves, agent.searched)
    assert runs[0] == runs[1]


def test_a_guess_a_turned_card_contradicts_is_dropped():
    """Two guesses of a Klondike deal: the true one and one with its hidden cards dealt otherwise.
    After a move that turns a card up differently in the two, only the true one is kept."""
    variant = get_variant("klondike")
    rng = np.random.default_rng(3)
    for seed in range(20):
        real = state.deal(variant, seed)
        other = rehide(variant, real, rng)
        obs, info = observe(variant, real)
        t_before = hidden_cards(PlanAgent(variant).rules.observe(obs))
        for action in np.flatnonzero(info["action_mask"]):
            after, guess = real.copy(), other.copy()
            core.apply_action(after, variant.spec, variant.actions, int(action))
            core.apply_action(guess, variant.spec, variant.actions, int(action))
            shown_real, _ = observe(variant, after)
            shown_guess, _ = observe(variant, guess)
            if np.array_equal(shown_real, shown_guess):
                continue
            agent = PlanAgent(variant)
            agent._guesses = [[after, UNSOLVED], [guess, UNSOLVED]]
            agent._keep_guesses_that_show(shown_real)
            assert len(agent._guesses) == 1 and agent._guesses[0][0] is after
            assert hidden_cards(agent.rules.observe(shown_real)) < t_before  # a card turned up
            return
    pytest.fail("no move turned a card up differently in 20 deals")


def test_bad_plan_agent_names_and_budgets_fail_clearly():
    with pytest.raises(ValueError, match="plan:WxN"):
        make_agent("plan:lots", "Klondike-v0")
    with pytest.raises(ValueError, match="positive"):
        PlanAgent("klondike", worlds=0)
    with pytest.raises(ValueError, match="plan:WxNxK"):
        make_agent("plan:3x200x2x1", "Klondike-v0")
    with pytest.raises(ValueError, match="positive"):
        make_agent("plan:3x200x0", "Klondike-v0")
    agent = make_agent("plan:3x200", "Klondike-v0")
    assert isinstance(agent, PlanAgent) and (agent.worlds, agent.nodes, agent.name) == (3, 200, "plan:3x200")
    assert agent.candidates == 3
    agent = make_agent("plan:3x200x1", "Klondike-v0")
    assert (agent.worlds, agent.nodes, agent.candidates, agent.sliced) == (3, 200, 1, False)
    agent = make_agent("plan-sliced:3x200x1", "Klondike-v0")
    assert (agent.worlds, agent.nodes, agent.candidates, agent.sliced) == (3, 200, 1, True)
    assert agent.name == "plan-sliced:3x200x1" and make_agent("plan-sliced", "Klondike-v0").nodes == 1000
    with pytest.raises(ValueError, match="plan-sliced:WxNxK"):
        make_agent("plan-sliced:3", "Klondike-v0")


@pytest.mark.parametrize("sliced", [False, True])
def test_a_solve_searches_at_most_its_budget_unless_sliced(monkeypatch, sliced):
    """Rank and File deal 0, its first decisions: with N = 300 every solve searches at most 300 positions
    (the limit checked every tenth of it, both phases stopping on their share); with the solver's own
    slices (plan-sliced) the same N searches a whole slice, 20,000 positions or more, in some solve."""
    searched = []
    solve = solver.solve

    def counting_solve(*args, **kwargs):
        result = solve(*args, **kwargs)
        searched.append(result.nodes)
        return result

    monkeypatch.setattr(solver, "solve", counting_solve)
    env = gym.make("RankAndFile-v0")
    agent = PlanAgent(env.unwrapped.variant, seed=0, worlds=2, nodes=300, sliced=sliced)
    obs, info = env.reset(seed=0)
    agent.reset(seed=0)
    while agent.solves < 4:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        assert not (terminated or truncated)
    assert len(searched) == agent.solves
    if sliced:
        assert max(searched) >= solver.RESTART_NODES, searched
    else:
        assert 0 < max(searched) <= 300, searched


def test_the_hindsight_check_plays_the_move_that_keeps_most_guesses_won(monkeypatch):
    """Three guesses: two lines start with move a, one with move b. Where b keeps all three won and a
    only its own two, b is played and the checked guesses' lines become b's; where a keeps all three
    won, the check stops there (b is never tried) and a is played."""
    variant = get_variant("klondike")
    real = state.deal(variant, 0)
    _, info = observe(variant, real)
    a, b = (int(x) for x in np.flatnonzero(info["action_mask"])[:2])
    after = {}
    for move in (a, b):
        after[move] = real.copy()
        core.apply_action(after[move], variant.spec, variant.actions, move)

    def play(winner_after_a):
        agent = PlanAgent(variant, candidates=3)
        agent._guesses = [[real.copy(), [a, 1], 0, 1], [real.copy(), [a, 2], 0, 1], [real.copy(), [b, 3], 0, 1]]
        agent._heuristic_choice = -1
        tried = []

        def fake_solve(world):
            move = a if np.array_equal(world, after[a]) else b
            assert np.array_equal(world, after[move])
            tried.append(move)
            return [7] if move == b or winner_after_a else UNSOLVED

        monkeypatch.setattr(agent, "_solve", fake_solve)
        votes = np.zeros(variant.n_actions, dtype=np.int64)
        votes[a], votes[b] = 2, 1
        return agent, tried, agent._hindsight(votes)

    agent, tried, move = play(winner_after_a=False)
    assert move == b and tried == [a, b, b]
    assert [g[1] for g in agent._guesses] == [[b, 7], [b, 7], [b, 3]]
    agent, tried, move = play(winner_after_a=True)
    assert move == a and tried == [a]
    assert [g[1] for g in agent._guesses] == [[a, 1], [a, 2], [a, 7]]


def test_no_vote_for_a_move_back_to_a_position_seen(monkeypatch):
    """Every guess's line starts with move m: the agent plays m, unless m leads back to a position seen
    this episode. (A move that can be undone keeps every guess won; where the undo was a safe move the
    agent played the two moves in turn until the time limit.)"""
    variant = get_variant("klondike_draw3")
    record = np.zeros(variant.n_cards + 1, dtype=np.int16)
    for seed in range(50):
        real = state.deal(variant, seed)
        obs, info = observe(variant, real)
        legal = np.flatnonzero(info["action_mask"])
        if legal.size > 2 and solver.play_safe_moves(real.copy(), variant.spec, variant.actions, record, 0, True) == 0:
            break
    else:
        pytest.fail("no deal in 50 starts without a safe move and with three legal moves")

    def first_choice(seen_after_m):
        agent = PlanAgent(variant, worlds=2)
        agent.reset(seed=0)
        m = int(legal[-1])
        monkeypatch.setattr(agent, "_solve", lambda world: [m])
        if seen_after_m:
            agent.fallback._seen.add(agent.rules.apply(agent.rules.observe(obs), m).key())
        return m, agent.act(obs, info)

    m, played = first_choice(seen_after_m=False)
    assert played == m
    m, played = first_choice(seen_after_m=True)
    assert played != m and info["action_mask"][played]
