"""The JAX backend (``solitaire_env.jax``) against the numba engine and the Gymnasium env, step for step.

Random masked games (a random legal action, and now and then any action id, mostly illegal) are played
on both: the natively batched env (``gym.make_vec``, which the vector tests hold equal to single envs)
and ``jax.jit(jax.vmap(env.step))`` over the same deals; after every step the engine state, the legal
mask, the ``codes`` observation, the reward, ``terminated`` and ``truncated`` must be equal for every
game still in its first episode. The default run plays 96 games of each game to their end (the
registered time limits included); ``-m slow`` plays 10,000 of each.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import gymnasium as gym  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from solitaire_env import ENV_IDS  # noqa: E402
from solitaire_env import jax as sj  # noqa: E402
from solitaire_env.engine import core  # noqa: E402
from solitaire_env.engine import state as engine_state  # noqa: E402
from solitaire_env.envs.reward import Reward  # noqa: E402
from solitaire_env.jax import layout as jl  # noqa: E402
from solitaire_env.jax.env import REWARD_DEFAULTS  # noqa: E402

IDS = [env_id for env_id in ENV_IDS if env_id not in ("FreeCell-v0", "Klondike-v0")]  # it plays the seed games
GAMES = 96  # a game's default share: one compiled batch of this size serves every test below
# The default run's time limit: random play in the two-deck games loops to the limit, and 400 steps
# of 96 games check as much as 2,000 in a fifth of the time; the slow run keeps the registered limits.
LIMIT = {"max_episode_steps": 400}


@functools.cache
def jax_env(env_id: str, **kwargs) -> sj.Env:
    return sj.make(env_id, **kwargs)


@functools.cache
def batched_step(env_id: str, **kwargs):
    return jax.jit(jax.vmap(jax_env(env_id, **kwargs).step))


def pick_actions(rng: np.random.Generator, masks: np.ndarray, wild: float) -> np.ndarray:
    """A uniform legal action per row; with probability ``wild`` any id instead (mostly illegal)."""
    acts = (rng.random(masks.shape) * masks).argmax(axis=1)
    wild_rows = rng.random(len(acts)) < wild
    acts[wild_rows] = rng.integers(0, masks.shape[1], int(wild_rows.sum()))
    return acts


def mismatches(state: sj.State, board, obs, mask, reward, terminated, truncated, rows) -> dict[str, int]:
    """Games (of ``rows``) where each part of the JAX state differs from the numba side's."""
    r = rows
    found = {
        "board": (np.asarray(state.board)[r] != board[r]).any(axis=1),
        "observation": (np.asarray(state.observation)[r] != obs[r]).any(axis=1),
        "legal_action_mask": (np.asarray(state.legal_action_mask)[r] != mask[r].astype(bool)).any(axis=1),
        "reward": ~np.isclose(np.asarray(state.reward)[r], reward[r], rtol=1e-5, atol=1e-6),
        "terminated": np.asarray(state.terminated)[r] != terminated[r],
        "truncated": np.asarray(state.truncated)[r] != truncated[r],
    }
    return {key: int(bad.sum()) for key, bad in found.items()}


def play_against_vector_env(env_id: str, n_games: int, first_seed: int, seed: int, wild: float = 0.05,
                            **kwargs) -> dict:
    """Deals ``first_seed ..`` played to the end of their first episode on both backends; the counts."""
    rng = np.random.default_rng(seed)
    vec = gym.make_vec(env_id, num_envs=n_games, **kwargs)
    u = vec.unwrapped
    step = batched_step(env_id, **kwargs)
    obs, info = vec.reset(seed=first_seed)
    state = jax_env(env_id, **kwargs).init_deal(np.arange(first_seed, first_seed + n_games))
    alive = np.ones(n_games, dtype=bool)
    zeros = np.zeros(n_games)
    bad = mismatches(state, u.states, obs, info["action_mask"], zeros, zeros.astype(bool), zeros.astype(bool), alive)
    steps = illegal = ended_by_limit = 0
    while alive.any():
        acts = pick_actions(rng, info["action_mask"], wild)
        illegal += int((info["action_mask"][np.arange(n_games), acts] == 0)[alive].sum())
        obs, reward, terminated, truncated, info = vec.step(acts)
        state = step(state, jnp.asarray(acts, dtype=jnp.int32))
        for key, n in mismatches(state, u.states, obs, info["action_mask"], reward, terminated, truncated,
                                 alive).items():
            bad[key] += n
        steps += int(alive.sum())
        ended_by_limit += int((truncated & alive).sum())
        alive &= ~(terminated | truncated)
    vec.close()
    return {"games": n_games, "steps": steps, "illegal": illegal, "truncated": ended_by_limit, "mismatches": bad}


@pytest.mark.parametrize("env_id", IDS)
def test_random_masked_games_match_the_numba_vector_env(env_id):
    counts = play_against_vector_env(env_id, GAMES, first_seed=1000, seed=IDS.index(env_id), **LIMIT)
    assert counts["mismatches"] == dict.fromkeys(counts["mismatches"], 0), counts
    assert counts["steps"] > 20 * GAMES and counts["illegal"] > 0  # long games, illegal actions among them
    if env_id != "Rainbow-v0":
        assert counts["truncated"] > 0  # the time limit's step, on both


def test_non_default_reward_coefficients_match():
    coefficients = {"illegal_penalty": 0.25, "win_bonus": 2.0, "step_penalty": 0.001, "reveal_bonus": 0.05}
    counts = play_against_vector_env("Rainbow-v0", GAMES, first_seed=77, seed=9, wild=0.2, **coefficients)
    assert counts["mismatches"] == dict.fromkeys(counts["mismatches"], 0), counts


@pytest.mark.parametrize("env_id", IDS)
def test_the_first_steps_match_the_single_gymnasium_env(env_id):
    """``gym.make``'s env itself (wrappers included) for the first 25 steps of each game."""
    rng = np.random.default_rng(3)
    seeds = np.arange(GAMES) * 7919
    envs = [gym.make(env_id, **LIMIT) for _ in range(GAMES)]
    resets = [env.reset(seed=int(s)) for env, s in zip(envs, seeds, strict=True)]
    state = jax_env(env_id, **LIMIT).init_deal(seeds)
    np.testing.assert_array_equal(np.asarray(state.observation), np.stack([obs for obs, _ in resets]))
    masks = np.stack([info["action_mask"] for _, info in resets])
    alive = np.ones(GAMES, dtype=bool)
    for _ in range(25):
        acts = pick_actions(rng, masks, 0.1)
        results = [env.step(int(a)) for env, a in zip(envs, acts, strict=True)]
        state = batched_step(env_id, **LIMIT)(state, jnp.asarray(acts, dtype=jnp.int32))
        obs, reward, terminated, truncated, infos = (np.array(x) for x in zip(*results, strict=True))
        masks = np.stack([info["action_mask"] for info in infos])
        boards = np.stack([env.unwrapped.game.state for env in envs])
        bad = mismatches(state, boards, obs, masks, reward.astype(float), terminated, truncated, alive)
        assert bad == dict.fromkeys(bad, 0)
        alive &= ~(terminated | truncated)


@pytest.mark.parametrize("env_id", IDS)
def test_init_deal_deals_as_reset_with_that_seed(env_id):
    env, jenv = gym.make(env_id), jax_env(env_id, **LIMIT)
    seeds = np.concatenate([[0, 1, 2, 99, 123456789], np.arange(GAMES - 5) * 31 + 5])  # the compiled batch size
    state = jenv.init_deal(seeds)
    for i in (0, 1, 2, 3, 4, GAMES - 1):
        obs, info = env.reset(seed=int(seeds[i]))
        np.testing.assert_array_equal(jenv.engine_state(state)[i], env.unwrapped.game.state)
        np.testing.assert_array_equal(np.asarray(state.observation)[i], obs)
        np.testing.assert_array_equal(np.asarray(state.legal_action_mask)[i], info["action_mask"].astype(bool))
    assert not np.asarray(state.step_count).any() and not np.asarray(state.terminated | state.truncated).any()


@pytest.mark.parametrize("env_id", ["RankAndFile-v0", "Rainbow-v0"])  # Number Ten's deal: the layout test below
def test_init_deals_valid_random_games(env_id):
    jenv = jax_env(env_id, **LIMIT)
    v = jenv.variant
    keys = jax.random.split(jax.random.key(7), 32)
    states = jax.jit(jax.vmap(jenv.init))(keys)
    boards = jenv.engine_state(states)
    assert len({b.tobytes() for b in boards}) == len(boards)  # different keys, different deals
    mask = np.zeros(v.n_actions, dtype=np.int8)
    obs = np.zeros(v.obs_size, dtype=np.int16)
    for i, board in enumerate(boards):
        board = board.copy()  # writable: numba compiles read-only arrays as another type
        position = engine_state.to_json(v, board)
        # from_json checks every rule of a position (each card `decks` times, piles, foundations, ...).
        _, rebuilt = engine_state.from_json(position)
        np.testing.assert_array_equal(rebuilt, board)
        piles = position["tableau"]
        assert all(len(p) == v.deal_down + v.deal_up for p in piles)
        assert all(sum(c.startswith("#") for c in p) == v.deal_down for p in piles)
        assert len(position["stock"]) == v.stock_capacity and position["waste"] == []
        assert len(position["reserve"]) == v.reserve
        assert sum(len(f) for f in position["foundations"]) == int(v.base_from_deal)
        core.legal_mask(board, v.spec, v.actions, mask)
        core.observe(board, v.spec, obs)
        np.testing.assert_array_equal(np.asarray(states.legal_action_mask)[i], mask.astype(bool))
        np.testing.assert_array_equal(np.asarray(states.observation)[i], obs)


@pytest.mark.parametrize("env_id", IDS)
def test_the_deal_layout_is_the_engines(env_id):
    """A deck laid out by the JAX deal is the engine's ``_lay_out`` of the same deck."""
    v = jax_env(env_id).variant
    layout = jl.Layout.of(v)
    plan = jl.deal_plan(layout)
    rng = np.random.default_rng(0)
    for _ in range(5):
        deck = rng.permutation(np.arange(v.n_cards) % 52).astype(np.int64)
        expected = np.empty(v.state_size, dtype=np.int8)
        engine_state._lay_out(expected, v.spec, engine_state._deal_shape(v), deck)
        np.testing.assert_array_equal(np.asarray(jl.lay_out(layout, plan, jnp.asarray(deck))), expected)


def test_unpack_and_pack_round_trip_and_name_the_engine_fields():
    v = jax_env("Rainbow-v0", **LIMIT).variant
    layout = jl.Layout.of(v)
    board = engine_state.deal(v, 3)
    t = jl.unpack(layout, jnp.asarray(board))
    np.testing.assert_array_equal(np.asarray(jl.pack(layout, t)), board)
    assert t.tab.shape == (v.piles, v.pile_capacity) and int(t.nres) == v.reserve and int(t.redeals) == v.redeals
    assert sum(layout.sizes().values()) == v.state_size


def test_jit_without_vmap_and_finished_or_out_of_range_steps():
    jenv = jax_env("Rainbow-v0", **LIMIT)
    step = jax.jit(jenv.step)
    state = jenv.init_deal(4)
    legal = int(np.flatnonzero(np.asarray(state.legal_action_mask))[0])
    one = step(state, legal)
    many = batched_step("Rainbow-v0", **LIMIT)(jenv.init_deal(np.full(GAMES, 4)),
                                               jnp.full(GAMES, legal, dtype=jnp.int32))
    for a, b in zip(one, many, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b)[0])
    assert int(one.step_count) == 1 and not np.array_equal(np.asarray(one.board), np.asarray(state.board))
    # An id outside the action space is an illegal action: nothing moves, the penalty, a step counted.
    out = step(one, jenv.num_actions)
    np.testing.assert_array_equal(np.asarray(out.board), np.asarray(one.board))
    assert float(out.reward) == pytest.approx(-REWARD_DEFAULTS["illegal_penalty"]) and int(out.step_count) == 2
    # A finished game ignores actions.
    ended = one._replace(terminated=jnp.bool_(True))
    after = step(ended, legal)
    np.testing.assert_array_equal(np.asarray(after.board), np.asarray(one.board))
    assert float(after.reward) == 0.0 and int(after.step_count) == 1 and bool(after.terminated)


def test_the_reward_defaults_are_the_envs():
    assert {f.name: f.default for f in dataclasses.fields(Reward)} == REWARD_DEFAULTS


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="unknown env id 'Spider-v0'; known ids: RankAndFile-v0"):
        sj.make("Spider-v0")
    for env_id, title in [("FreeCell-v0", "FreeCell"), ("Klondike-v0", "Klondike")]:
        with pytest.raises(ValueError, match=f"the JAX backend does not play {title} yet"):
            sj.make(env_id)
    with pytest.raises(ValueError, match="unknown argument"):
        sj.make("Rainbow-v0", obs_mode="dict")
    with pytest.raises(ValueError, match="win_bonus must be a finite number"):
        sj.make("Rainbow-v0", win_bonus=float("nan"))
    with pytest.raises(ValueError, match="max_episode_steps must be a positive integer"):
        sj.make("Rainbow-v0", max_episode_steps=0)
    jenv = jax_env("Rainbow-v0", **LIMIT)
    state = jenv.init_deal(0)
    assert int(state.step_count) == 0 and jenv.engine_state(state).shape == (jenv.layout.state_size,)
    with pytest.raises(ValueError, match=r"one integer \(shape \(\)\), got shape \(2,\); for a batch of games"):
        jenv.step(state, jnp.array([0, 1]))
    with pytest.raises(ValueError, match="got dtype float32"):
        jenv.step(state, jnp.float32(1.0))
    with pytest.raises(ValueError, match="an integer id, got True"):
        jenv.step(state, True)
    with pytest.raises(ValueError, match=r"state.board must have shape \(311,\).*jax.vmap"):
        jenv.step(jax.tree.map(lambda x: jnp.stack([x, x]), state), 0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        jenv.init_deal(-1)
    with pytest.raises(ValueError, match="empty sequence"):
        jenv.init_deal([])
    with pytest.raises(ValueError, match=r"int8 of shape \(311,\)"):
        jenv.from_engine_state(np.zeros(330, dtype=np.int8))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_ten_thousand_random_masked_games_match(env_id, capsys):
    start = time.perf_counter()
    counts = play_against_vector_env(env_id, 10_000, first_seed=50_000, seed=100 + IDS.index(env_id))
    with capsys.disabled():
        print(f"\n{env_id}: {counts} in {time.perf_counter() - start:.0f} s")
    assert counts["games"] >= 10_000
    assert counts["mismatches"] == dict.fromkeys(counts["mismatches"], 0), counts


@pytest.mark.parametrize("env_id", ["RankAndFile-v0", "Rainbow-v0"])  # Number Ten: Rank and File's rules
def test_the_step_mask_is_resolve_over_the_action_table(env_id):
    """``rules.legal_mask`` (per kind of move) against ``rules.legal_mask_reference`` (``resolve`` of every
    action) on positions from random play."""
    from solitaire_env.jax import rules

    jenv = jax_env(env_id, **LIMIT)
    layout, actions = jenv.layout, jnp.asarray(jenv.variant.actions, dtype=jnp.int32)
    rng = np.random.default_rng(11)
    state, boards = jenv.init_deal(np.arange(GAMES) + 500), []
    for k in range(60):
        acts = pick_actions(rng, np.asarray(state.legal_action_mask), 0.0)
        state = batched_step(env_id, **LIMIT)(state, jnp.asarray(acts, dtype=jnp.int32))
        if k % 6 == 0:
            boards.append(np.asarray(state.board))

    def both(board):
        t = jl.unpack(layout, board)
        return rules.legal_mask(layout, t, rules.mask_index(layout, jenv.variant.actions)), \
            rules.legal_mask_reference(layout, t, actions)

    fast, reference = jax.jit(jax.vmap(both))(jnp.asarray(np.concatenate(boards)))
    assert np.asarray(reference).sum() > len(np.concatenate(boards))  # positions with several moves
    np.testing.assert_array_equal(np.asarray(fast), np.asarray(reference))


def test_the_winning_move_matches_the_env():
    """Random play almost never wins: a position one card from the win, played out on both."""
    env_id, ranks = "RankAndFile-v0", "A23456789TJQK"
    position = {"format": 1, "variant": "rank_and_file", "tableau": [[] for _ in range(10)],
                "foundations": [[r + s for r in ranks] for s in "cdhscdh"] + [[r + "s" for r in ranks[:-1]]],
                "stock": [], "waste": ["Ks"], "redeals_left": 0, "base_rank": None}
    env = gym.make(env_id)
    env.reset(options={"state": position})
    obs, reward, terminated, truncated, _ = env.step(1)  # waste -> foundation
    _, board = engine_state.from_json(position)
    state = jax_env(env_id, **LIMIT).from_engine_state(np.tile(board, (GAMES, 1)))
    state = batched_step(env_id, **LIMIT)(state, jnp.ones(GAMES, dtype=jnp.int32))
    assert terminated and reward == 1.0
    np.testing.assert_array_equal(np.asarray(state.observation)[0], obs)
    np.testing.assert_array_equal(np.asarray(state.board)[0], env.unwrapped.game.state)
    assert bool(state.terminated[0]) and not bool(state.truncated[0]) and float(state.reward[0]) == 1.0
