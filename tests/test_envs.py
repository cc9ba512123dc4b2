"""The Gymnasium envs: API contract, masks, encoding, hidden information, bad input."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import solitaire_env
from solitaire_env import Game, Move

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", "FreeCell-v0", "Klondike-v0"]
VARIANT_OF = {"RankAndFile-v0": "rank_and_file", "NumberTen-v0": "number_ten", "Rainbow-v0": "rainbow",
              "FreeCell-v0": "freecell", "Klondike-v0": "klondike"}
HIDING = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]  # the games with cards a player cannot see


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("obs_mode", ["codes", "dict", "onehot", "piles"])
@pytest.mark.parametrize("action_features", [False, True])
def test_check_env_passes(env_id, obs_mode, action_features):
    env = gym.make(env_id, obs_mode=obs_mode, action_features=action_features)
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_check_env_with_render_modes(env_id, render_mode):
    env = gym.make(env_id, render_mode=render_mode)
    check_env(env.unwrapped)
    env.reset(seed=0)
    frame = env.render()
    if render_mode == "ansi":
        assert isinstance(frame, str) and "t0" in frame
    else:
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_make_without_import_uses_module_prefix():
    env = gym.make("solitaire_env:RankAndFile-v0")
    assert env.unwrapped.spec.id == "RankAndFile-v0"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registered_time_limit_leaves_room_for_a_win(env_id):
    env = gym.make(env_id)
    variant = env.unwrapped.variant
    assert env.spec.max_episode_steps == variant.max_episode_steps
    # A win needs every card to a foundation plus a pass through the stock; allow generously for more
    # (unlimited redeals: three passes).
    passes = 1 + (2 if variant.redeals is None else variant.redeals)
    assert variant.max_episode_steps >= 5 * (variant.n_cards + variant.stock_capacity * passes)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_masked_random_play_matches_engine(env_id):
    env = gym.make(env_id)
    u = env.unwrapped
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    steps = 0
    while steps < 600:
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (u.action_space.n,)
        np.testing.assert_array_equal(mask, u.game.action_mask())
        np.testing.assert_array_equal(u.action_masks(), mask.astype(bool))
        legal = np.flatnonzero(mask)
        if steps % 25 == 0:
            for a in range(u.action_space.n):
                assert u.encode_action(u.decode_action(a)) == a
        for a in legal:
            assert u.decode_action(int(a)).count is not None
        if len(legal) == 0:
            break
        a = int(rng.choice(legal))
        before = u.get_state()
        obs, reward, terminated, truncated, info = env.step(a)
        assert info["illegal_action"] is False and info["move"] == a
        assert u.get_state() != before
        assert env.observation_space.contains(obs)
        steps += 1
        if terminated or truncated:
            obs, info = env.reset()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_deal(env_id):
    env = gym.make(env_id)
    obs1, info1 = env.reset(seed=42)
    state1 = env.unwrapped.get_state()
    env.reset(seed=7)
    obs2, info2 = env.reset(seed=42)
    assert env.unwrapped.get_state() == state1
    np.testing.assert_array_equal(obs1, obs2)
    assert state1 == Game(VARIANT_OF[env_id], seed=42).get_state()
    assert info1["deal_seed"] == 42


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_episode(env_id):
    def run():
        env = gym.make(env_id)
        env.action_space.seed(5)
        obs, info = env.reset(seed=11)
        trace = []
        for _ in range(300):
            a = env.action_space.sample(mask=info["action_mask"])
            obs, r, term, trunc, info = env.step(a)
            trace.append((int(a), float(r), obs.tobytes()))
            if term or trunc:
                obs, info = env.reset()
        return trace

    assert run() == run()


def _hidden_swapped(state: dict) -> dict:
    """The same table with two face-down cards, and the unseen stock, rearranged."""
    other = copy.deepcopy(state)
    downs = [(p, k) for p, pile in enumerate(other["tableau"]) for k, c in enumerate(pile) if c.startswith("#")]
    downs += [(-1, k) for k, c in enumerate(other.get("reserve") or []) if c.startswith("#")]

    def get(p, k):
        return other["reserve"][k] if p < 0 else other["tableau"][p][k]

    def put(p, k, c):
        if p < 0:
            other["reserve"][k] = c
        else:
            other["tableau"][p][k] = c

    for (p1, k1), (p2, k2) in zip(downs, reversed(downs), strict=True):
        if (p1, k1) < (p2, k2):
            c1, c2 = get(p1, k1), get(p2, k2)
            put(p1, k1, c2)
            put(p2, k2, c1)
    other["stock"] = list(reversed(other["stock"]))
    return other


@pytest.mark.parametrize("env_id", HIDING)
@pytest.mark.parametrize("obs_mode", ["codes", "dict", "onehot", "piles"])
def test_observation_hides_face_down_cards_and_stock_order(env_id, obs_mode):
    env = gym.make(env_id, obs_mode=obs_mode, action_features=True)
    for seed in range(5):
        env.reset(seed=seed)
        for _ in range(seed * 3):  # from the deal and from a few moves in
            env.step(int(np.flatnonzero(env.unwrapped.action_masks())[-1]))
        state = env.unwrapped.get_state()
        other = _hidden_swapped(state)
        assert other != state
        obs_a, info_a = env.unwrapped.set_state(state)
        obs_b, info_b = env.unwrapped.set_state(other)
        if isinstance(obs_a, dict):
            assert set(obs_a) == set(obs_b)
            for key in obs_a:
                np.testing.assert_array_equal(obs_a[key], obs_b[key])
        else:
            np.testing.assert_array_equal(obs_a, obs_b)
            np.testing.assert_array_equal(info_a["action_features"], info_b["action_features"])


def test_rainbow_stock_is_shown_after_a_redeal_only():
    env = gym.make("Rainbow-v0", obs_mode="dict")
    obs, info = env.reset(seed=0)
    assert (obs["stock"][:34] == 53).all()
    u = env.unwrapped
    while u.get_state()["stock"]:
        obs, *_ , info = env.step(0)
    waste = u.get_state()["waste"]
    obs, *_ = env.step(1)  # redeal
    stock = u.get_state()["stock"]
    assert stock == list(reversed(waste))
    shown = [int(c) for c in obs["stock"][: len(stock)]]
    assert 53 not in shown and 0 not in shown


def test_reward_returns_one_exactly_when_won():
    # Rank and File one card from a win: a King of spades left in the waste.
    game = Game("rank_and_file", seed=0)
    state = game.get_state()
    suits = "cdhs"
    foundations = [[r + s for r in "A23456789TJQK"] for s in suits for _ in range(2)]
    foundations[7] = foundations[7][:-1]
    state.update(tableau=[[] for _ in range(10)], foundations=foundations, stock=[], waste=["Ks"])
    env = gym.make("RankAndFile-v0", win_bonus=0.5)
    obs, info = env.reset(options={"state": state})
    assert info["foundation_cards"] == 103
    obs, reward, terminated, truncated, info = env.step(1)  # waste -> foundation
    assert terminated and info["is_won"] and reward == pytest.approx(1.5)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_random_episode_return_is_fraction_of_cards(env_id):
    env = gym.make(env_id)
    obs, info = env.reset(seed=1)
    start = info["foundation_cards"]
    total = 0.0
    for _ in range(400):
        obs, r, term, trunc, info = env.step(env.action_space.sample(mask=info["action_mask"]))
        total += r
        if term or trunc:
            break
    n = env.unwrapped.variant.n_cards
    assert total == pytest.approx((info["foundation_cards"] - start) / (n - start))


def test_reward_options():
    env = gym.make("RankAndFile-v0", step_penalty=0.1, reveal_bonus=1.0)
    obs, info = env.reset(seed=3)
    u = env.unwrapped
    for _ in range(500):
        legal = np.flatnonzero(info["action_mask"])
        hidden = u.game.hidden_cards
        found = u.game.foundation_cards
        obs, r, term, trunc, info = env.step(int(legal[-1]))
        expected = (u.game.foundation_cards - found) / 104 + (hidden - u.game.hidden_cards) - 0.1
        assert r == pytest.approx(expected)
        if term or trunc:
            break


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_illegal_action_is_penalised_and_changes_nothing(env_id):
    env = gym.make(env_id, illegal_penalty=0.25)
    obs, info = env.reset(seed=2)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    state = env.unwrapped.get_state()
    obs2, reward, terminated, truncated, info2 = env.step(illegal)
    assert info2["illegal_action"] is True and reward == -0.25 and not terminated
    assert env.unwrapped.get_state() == state
    np.testing.assert_array_equal(obs, obs2)


def test_illegal_action_raises_when_asked():
    env = gym.make("RankAndFile-v0", illegal_action="raise")
    obs, info = env.reset(seed=2)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    state = env.unwrapped.get_state()
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    assert env.unwrapped.get_state() == state


@pytest.mark.parametrize("action", [-1, 243, 10**6, np.int64(243)])
def test_out_of_range_action_raises(action):
    env = gym.make("RankAndFile-v0")
    env.reset(seed=0)
    state = env.unwrapped.get_state()
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(action)
    assert env.unwrapped.get_state() == state


@pytest.mark.parametrize("action, match", [
    (0.0, "must be an integer.*got a float"), (1.5, "got a float"), ("3", "got a str"), (None, "got None"),
    (True, "got a bool"), (np.array([0]), "one integer, got an array of shape \\(1,\\)"),
    (np.array(0.0), "0-d array of dtype float64"),
])
def test_action_of_the_wrong_type_says_what_is_wrong(action, match):
    env = gym.make("RankAndFile-v0")
    env.reset(seed=0)
    state = env.unwrapped.get_state()
    with pytest.raises(ValueError, match=match):
        env.step(action)
    assert env.unwrapped.get_state() == state


def test_zero_dimensional_integer_arrays_and_tensors_are_actions():
    torch = pytest.importorskip("torch")
    results = []
    for wrap in (int, np.int64, np.array, torch.tensor):
        env = gym.make("Rainbow-v0")
        obs, info = env.reset(seed=4)
        action = int(np.flatnonzero(info["action_mask"])[0])
        results.append(env.step(wrap(action))[0])
    for obs in results[1:]:
        np.testing.assert_array_equal(obs, results[0])
    env = gym.make("Rainbow-v0")
    env.reset(seed=4)
    with pytest.raises(ValueError, match="dtype torch.float32"):
        env.step(torch.tensor(0.0))


def test_failed_state_reset_keeps_the_game_and_check_state_touches_nothing():
    # Gymnasium's TimeLimit zeroes its count before passing reset on; the env itself changes nothing,
    # and check_reset_options validates without touching the wrappers (documented in the env).
    env = gym.make("Rainbow-v0", max_episode_steps=5)
    obs, info = env.reset(seed=0)
    for _ in range(3):
        obs, *_, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    state = env.unwrapped.get_state()
    bad = copy.deepcopy(state)
    bad["tableau"][0] = ["#" + bad["tableau"][0][0]]
    with pytest.raises(ValueError, match="face down"):
        env.unwrapped.check_reset_options({"state": bad})
    assert env.get_wrapper_attr("_elapsed_steps") == 3
    with pytest.raises(ValueError, match="reset option"):
        env.unwrapped.check_reset_options({"deal": 3})
    assert env.unwrapped.check_reset_options({"state": state}).get_state() == state
    with pytest.raises(ValueError, match="face down"):
        env.reset(options={"state": bad})
    assert env.unwrapped.get_state() == state
    np.testing.assert_array_equal(env.unwrapped._observation(), obs)
    assert env.get_wrapper_attr("_elapsed_steps") == 0  # the documented cost of a failed reset under TimeLimit


def test_invalid_state_raises_and_keeps_game():
    env = gym.make("Rainbow-v0")
    env.reset(seed=0)
    state = env.unwrapped.get_state()
    bad = copy.deepcopy(state)
    bad["tableau"][0] = ["#" + bad["tableau"][0][0]]
    with pytest.raises(ValueError, match="face down"):
        env.unwrapped.set_state(bad)
    with pytest.raises(ValueError, match="face down"):
        env.reset(options={"state": bad})
    assert env.unwrapped.get_state() == state
    with pytest.raises(ValueError, match="Rank and File"):
        env.unwrapped.set_state(Game("rank_and_file", 0).get_state())


@pytest.mark.parametrize("kwargs, match", [
    ({"obs_mode": "pixels"}, "obs_mode"),
    ({"illegal_action": "ignore"}, "illegal_action"),
    ({"render_mode": "video"}, "render_mode"),
    ({"win_bonus": "big"}, "win_bonus"),
])
def test_bad_arguments_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("RankAndFile-v0", **kwargs)


def test_unknown_keyword_argument_raises():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        gym.make("RankAndFile-v0", colour=True)


def test_unknown_reset_option_raises():
    env = gym.make("RankAndFile-v0")
    with pytest.raises(ValueError, match="reset option"):
        env.reset(options={"deal": 3})


def test_set_state_returns_obs_and_info_like_reset():
    env = gym.make("NumberTen-v0")
    obs, info = env.reset(seed=9)
    state = env.unwrapped.get_state()
    env.reset(seed=10)
    obs2, info2 = env.unwrapped.set_state(state)
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(info["action_mask"], info2["action_mask"])


def test_encode_rejects_moves_that_are_not_actions():
    env = gym.make("RankAndFile-v0")
    env.reset(seed=0)
    u = env.unwrapped
    with pytest.raises(ValueError, match="not an action"):
        u.encode_action(Move("reserve", None, "foundation", 0, 1))  # Rank and File has no reserve
    with pytest.raises(ValueError, match="unknown area"):
        u.encode_action(Move("hand", None, "foundation", 0, 1))
    with pytest.raises(ValueError, match="not an action"):
        u.encode_action(Move("foundation", 0, "tableau", 1, 1))  # foundation cards never move


def test_move_str_is_readable():
    env = gym.make("RankAndFile-v0")
    env.reset(seed=0)
    texts = [str(env.unwrapped.decode_action(a)) for a in range(env.action_space.n)]
    assert texts[0] == "draw: stock -> waste"
    assert all(texts) and len(set(texts)) == len(texts)


def test_dict_observation_has_action_mask_and_fields():
    env = gym.make("Rainbow-v0", obs_mode="dict")
    obs, info = env.reset(seed=0)
    assert set(obs) == {"tableau", "waste", "foundations", "stock_size", "stock", "redeals_left", "reserve",
                        "base_rank", "action_mask"}
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    assert obs["stock_size"][0] == 34 and obs["redeals_left"][0] == 2


def test_onehot_observation_is_one_hot_of_codes():
    codes_env = gym.make("NumberTen-v0")
    onehot_env = gym.make("NumberTen-v0", obs_mode="onehot")
    codes, _ = codes_env.reset(seed=4)
    onehot, _ = onehot_env.reset(seed=4)
    assert onehot.sum() == len(codes)
    nvec = codes_env.observation_space.nvec
    start = np.concatenate(([0], np.cumsum(nvec)[:-1]))
    assert (onehot[start + codes] == 1).all()


def test_package_exposes_env_ids():
    assert set(solitaire_env.ENV_IDS) == set(ENV_IDS)
