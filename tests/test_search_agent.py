"""The determinized search agent: fair (never reads hidden cards), legal, reproducible, and strong."""

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.agents import make_agent
from solitaire_env.agents.heuristic import Rules
from solitaire_env.agents.search import SearchAgent, sample_world
from solitaire_env.engine import core, state
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.variant import O_DOWN, O_NSTOCK, O_RES, O_RESDOWN, O_STOCK, O_TAB, SP_CAP

GAMES = [("RankAndFile-v0", "rank_and_file"), ("NumberTen-v0", "number_ten"), ("Rainbow-v0", "rainbow")]


def hidden_slots(variant, s: np.ndarray) -> list[int]:
    """Indices in the state array of every card a player cannot see."""
    sp = variant.spec
    slots = []
    for p in range(variant.piles):
        start = sp[O_TAB] + p * sp[SP_CAP]
        slots += [start + k for k in range(s[sp[O_DOWN] + p])]
    slots += [sp[O_RES] + k for k in range(s[sp[O_RESDOWN]])]
    slots += [sp[O_STOCK] + k for k in range(s[sp[O_NSTOCK]])]  # a fresh deal's stock is unseen
    return slots


def rehide(variant, s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The same visible position with the hidden cards dealt differently."""
    other = s.copy()
    slots = hidden_slots(variant, s)
    other[slots] = rng.permutation(s[slots])
    assert not np.array_equal(other, s)
    return other


def observe(variant, s):
    obs = np.zeros(variant.obs_size, dtype=np.int16)
    core.observe(s, variant.spec, obs)
    mask = np.zeros(variant.n_actions, dtype=np.int8)
    core.legal_mask(s, variant.spec, variant.actions, mask)
    return obs, {"action_mask": mask}


@pytest.mark.parametrize("env_id, game", GAMES)
def test_choices_do_not_depend_on_hidden_cards(env_id, game):
    variant = get_variant(game)
    rng = np.random.default_rng(0)
    agent = SearchAgent(variant, worlds=4, nodes=300)
    for seed in range(4):
        a = state.deal(variant, seed)
        b = rehide(variant, a, rng)
        obs_a, info_a = observe(variant, a)
        obs_b, info_b = observe(variant, b)
        assert np.array_equal(obs_a, obs_b) and np.array_equal(info_a["action_mask"], info_b["action_mask"])
        # Play on from both positions while they look the same; the choices must match.
        for _ in range(30):
            agent.reset(seed=seed)
            choice_a = agent.act(obs_a, info_a)
            agent.reset(seed=seed)
            choice_b = agent.act(obs_b, info_b)
            assert choice_a == choice_b
            assert info_a["action_mask"][choice_a] == 1
            core.apply_action(a, variant.spec, variant.actions, choice_a)
            core.apply_action(b, variant.spec, variant.actions, choice_b)
            obs_a, info_a = observe(variant, a)
            obs_b, info_b = observe(variant, b)
            if not np.array_equal(obs_a, obs_b) or not info_a["action_mask"].any():
                break  # a card turned up differently: the positions now look different


@pytest.mark.parametrize("env_id, game", GAMES)
def test_guessed_worlds_show_exactly_what_the_player_sees(env_id, game):
    variant = get_variant(game)
    rules = Rules(variant)
    rng = np.random.default_rng(1)
    env = gym.make(env_id)
    obs, info = env.reset(seed=3)
    for _ in range(60):
        world = sample_world(rules, rules.observe(obs), rng)
        seen, _ = observe(variant, world)
        assert np.array_equal(seen, obs)
        # The guess is a valid position: every card of the game once per deck (from_json checks it).
        assert np.array_equal(state.from_json(state.to_json(variant, world))[1], world)
        legal = np.flatnonzero(info["action_mask"])
        obs, _, terminated, truncated, info = env.step(int(legal[rng.integers(legal.size)]))
        if terminated or truncated:
            break


def test_agent_is_reproducible_and_legal_through_the_env():
    env = gym.make("Rainbow-v0")
    runs = []
    for _ in range(2):
        agent = make_agent("search:4x300", "Rainbow-v0")
        obs, info = env.reset(seed=11)
        agent.reset(seed=5)
        actions = []
        for _ in range(400):
            a = agent.act(obs, info)
            assert info["action_mask"][a] == 1
            actions.append(a)
            obs, _, terminated, truncated, info = env.step(a)
            if terminated or truncated:
                break
        runs.append(actions)
    assert runs[0] == runs[1]


def test_bad_search_agent_names_fail_clearly():
    with pytest.raises(ValueError, match="search:WxN"):
        make_agent("search:lots", "Rainbow-v0")
    with pytest.raises(ValueError, match="positive"):
        SearchAgent("rainbow", worlds=0)


def test_search_beats_the_heuristic_where_search_helps():
    """Over the same Rainbow deals the search agent wins at least as often as the heuristic it falls back on."""
    from solitaire_env.tools.evaluation import evaluate

    agents = {"heuristic": make_agent("heuristic", "Rainbow-v0"), "search": make_agent("search:8x1000", "Rainbow-v0")}
    result = evaluate("Rainbow-v0", agents, episodes=30, seed=0)
    wins = {name: s.wins for name, s in result.summaries.items()}
    assert wins["search"] >= wins["heuristic"]


def test_a_win_found_with_every_card_known_is_played_on_without_searching_again():
    """FreeCell hides nothing: once a search finds a win, the agent follows that line to the end (each of
    its moves legal), searching no more; a reset forgets it. With too small a budget it searches every
    decision instead."""
    env = gym.make("FreeCell-v0")
    agent = SearchAgent("freecell", seed=0, worlds=1, nodes=50_000)
    for deal in (1, 2):
        obs, info = env.reset(seed=deal)
        agent.reset(seed=deal)
        planned_at, moves = None, 0  # the number of searches when a win was first found
        terminated = truncated = False
        while not (terminated or truncated):
            action = agent.act(obs, info)
            assert info["action_mask"][action] == 1
            if agent._plan and planned_at is None:
                planned_at = (agent.searched, moves)
            obs, _, terminated, truncated, info = env.step(action)
            moves += 1
        assert terminated and info["foundation_cards"] == 52, deal
        assert planned_at is not None and planned_at[1] < 10 < moves  # found early, then played on
        assert agent.searched == planned_at[0] and agent._plan == []
    assert agent.open_game and not any(SearchAgent(g).open_game for g in ("klondike", "rainbow", "rank_and_file"))
    small = SearchAgent("freecell", seed=0, worlds=1, nodes=5)
    obs, info = env.reset(seed=1)
    for _ in range(20):
        action = small.act(obs, info)
        obs, *_, info = env.step(action)
    assert small.searched >= 10 and small._plan == []
