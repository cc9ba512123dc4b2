"""The natively batched vector env against Gymnasium's SyncVectorEnv of single envs, step for step."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.envs.vector import SolitaireVectorEnv

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_vec_gives_the_batched_env(env_id):
    env = gym.make_vec(env_id, num_envs=3)
    assert isinstance(env, SolitaireVectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    n = env.single_action_space.n
    assert obs.shape == (3,) + env.single_observation_space.shape
    assert info["action_mask"].shape == (3, n) and info["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"].astype(bool))


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("obs_mode, action_features", [("codes", False), ("dict", False), ("piles", True),
                                                       ("codes", True)])
def test_batched_env_equals_sync_vector_env(env_id, obs_mode, action_features):
    n, max_steps = 4, 60  # short episodes, so truncation autoresets happen often
    kwargs = dict(obs_mode=obs_mode, illegal_penalty=0.05, reveal_bonus=0.1, action_features=action_features)
    batched = gym.make_vec(env_id, num_envs=n, max_episode_steps=max_steps, **kwargs)
    sync = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", max_episode_steps=max_steps, **kwargs)
    obs_b, info_b = batched.reset(seed=100)
    obs_s, info_s = sync.reset(seed=100)
    rng = np.random.default_rng(0)
    resets = ends = 0
    for _ in range(400):
        _assert_same(obs_b, obs_s)
        np.testing.assert_array_equal(info_b["action_mask"], info_s["action_mask"])
        np.testing.assert_array_equal(info_b["foundation_cards"], info_s["foundation_cards"])
        if action_features and obs_mode == "codes":
            np.testing.assert_array_equal(info_b["action_features"], info_s["action_features"])
        mask = info_b["action_mask"]
        # Mostly legal actions, sometimes an illegal one.
        actions = np.array([
            rng.choice(np.flatnonzero(m)) if m.any() and rng.random() > 0.1 else rng.integers(len(m)) for m in mask
        ])
        obs_b, r_b, term_b, trunc_b, info_b = batched.step(actions)
        obs_s, r_s, term_s, trunc_s, info_s = sync.step(actions)
        np.testing.assert_allclose(r_b, r_s, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(term_b, term_s)
        np.testing.assert_array_equal(trunc_b, trunc_s)
        ends += int((term_b | trunc_b).sum())
        resets += int(("deal_seed" in info_s) and info_s["_deal_seed"].sum())
    assert ends > 0 and resets > 0


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_batched_env_equals_sync_vector_env_with_no_revisit(env_id):
    """As above with the no-revisit mask, also playing moves the rules allow but the mask forbids."""
    from solitaire_env.engine import core

    n, max_steps = 4, 120
    kwargs = dict(no_revisit=True, illegal_penalty=0.05)
    batched = gym.make_vec(env_id, num_envs=n, max_episode_steps=max_steps, **kwargs)
    sync = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", max_episode_steps=max_steps, **kwargs)
    obs_b, info_b = batched.reset(seed=300)
    obs_s, info_s = sync.reset(seed=300)
    v = batched.unwrapped.variant
    rng = np.random.default_rng(5)
    forbidden = ends = 0
    for _ in range(500):
        _assert_same(obs_b, obs_s)
        for key in ("action_mask", "foundation_cards", "revisit", "stuck"):
            np.testing.assert_array_equal(info_b[key], info_s[key], err_msg=key)
        actions = []
        for i, m in enumerate(info_b["action_mask"]):
            rules = np.zeros(v.n_actions, dtype=np.int8)
            core.legal_mask(batched.unwrapped.states[i], v.spec, v.actions, rules)
            masked_out = np.flatnonzero(rules & (m == 0))
            if masked_out.size and rng.random() < 0.3:
                actions.append(rng.choice(masked_out))  # legal by the rules, masked as a revisit
                forbidden += 1
            elif m.any() and rng.random() > 0.05:
                actions.append(rng.choice(np.flatnonzero(m)))
            else:
                actions.append(rng.integers(len(m)))
        actions = np.array(actions)
        obs_b, r_b, term_b, trunc_b, info_b = batched.step(actions)
        obs_s, r_s, term_s, trunc_s, info_s = sync.step(actions)
        np.testing.assert_array_equal(r_b, r_s)
        np.testing.assert_array_equal(term_b, term_s)
        np.testing.assert_array_equal(trunc_b, trunc_s)
        ends += int((term_b | trunc_b).sum())
    assert ends > 0
    if env_id != "Rainbow-v0":  # (Rainbow's moves never lead back)
        assert forbidden > 0


def _assert_same(a, b):
    if isinstance(a, dict):
        assert set(a) == set(b)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    else:
        np.testing.assert_array_equal(a, b)


def test_reset_seeds_each_sub_env_with_seed_plus_index():
    env = gym.make_vec("Rainbow-v0", num_envs=3)
    single = gym.make("Rainbow-v0")
    env.reset(seed=20)
    for i in range(3):
        single.reset(seed=20 + i)
        assert env.unwrapped.get_state(i) == single.unwrapped.get_state()


def test_illegal_action_raise_mode_changes_nothing():
    env = gym.make_vec("RankAndFile-v0", num_envs=2, illegal_action="raise")
    obs, info = env.reset(seed=0)
    states = env.unwrapped.states.copy()
    actions = np.array([np.flatnonzero(info["action_mask"][0])[0], np.flatnonzero(info["action_mask"][1] == 0)[0]])
    with pytest.raises(ValueError, match="sub-env 1"):
        env.step(actions)
    np.testing.assert_array_equal(env.unwrapped.states, states)


@pytest.mark.parametrize("actions", [np.array([0, 999]), np.array([0, -1]), np.array([0]), np.array([0.0, 1.0])])
def test_bad_actions_raise(actions):
    env = gym.make_vec("RankAndFile-v0", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(actions)


def test_step_before_reset_raises():
    env = gym.make_vec("RankAndFile-v0", num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))


def test_state_is_small():
    env = gym.make_vec("RankAndFile-v0", num_envs=8)
    per_game = env.unwrapped.states.nbytes / 8
    assert per_game <= 1024


@pytest.mark.parametrize("kwargs, match", [({"win_bonus": "big"}, "win_bonus"), ({"obs_mode": "x"}, "obs_mode"),
                                           ({"num_envs": 0}, "num_envs"), ({"illegal_action": "no"}, "illegal")])
def test_bad_vector_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make_vec("Rainbow-v0", **{"num_envs": 2, **kwargs})


def test_returned_observations_are_not_overwritten_later():
    env = gym.make_vec("RankAndFile-v0", num_envs=3, max_episode_steps=2)
    obs, info = env.reset(seed=0)
    kept = []
    for _ in range(5):
        obs, *_ = env.step(np.zeros(3, dtype=np.int64))
        kept.append((obs, obs.copy()))
    env.unwrapped.reset_envs(np.array([0, 2]))
    for returned, snapshot in kept:
        np.testing.assert_array_equal(returned, snapshot)


@pytest.mark.parametrize("no_revisit", [False, True])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_envs_deals_only_the_given_sub_envs(env_id, no_revisit):
    """reset_envs (one compiled pass over the games it deals) leaves every other sub-env as it was, and a
    dealt one starts as a fresh single env on that deal; what it returns is not written again later."""
    n = 4
    env = gym.make_vec(env_id, num_envs=n, no_revisit=no_revisit)
    u = env.unwrapped
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(20):
        _, _, _, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]]))
    names = ("states", "masks", "codes", "found", "n_legal", "steps", "revisit", "n_rules")
    before = {name: getattr(u, name).copy() for name in names}
    meta = u.history.tables.meta.copy() if no_revisit else None
    obs = u.reset_envs(np.array([1, 3]))
    snapshot = obs.copy()
    for name, old in before.items():
        np.testing.assert_array_equal(getattr(u, name)[[0, 2]], old[[0, 2]], err_msg=name)
    if no_revisit:
        np.testing.assert_array_equal(u.history.tables.meta[[0, 2]], meta[[0, 2]])
    single = gym.make(env_id, no_revisit=no_revisit)
    for i in (1, 3):
        assert u.steps[i] == 0 and not u.prev_done[i]
        _, expected = single.reset(seed=int(u.deal_seeds[i]))
        np.testing.assert_array_equal(u.masks[i], expected["action_mask"])
        np.testing.assert_array_equal(obs[i], single.unwrapped._codes)
        assert u.found[i] == expected["foundation_cards"]
    env.step(np.array([np.flatnonzero(m)[0] for m in u.masks]))
    u.reset_envs(np.array([0]))
    np.testing.assert_array_equal(obs, snapshot)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_threaded_kernels_equal_the_serial_ones(env_id):
    from solitaire_env.engine import batched
    from solitaire_env.engine.state import deal

    v = gym.make_vec(env_id, num_envs=1).unwrapped.variant
    n = batched.PARALLEL_MIN_BATCH + 45  # threads, chunks of unequal size where there are more than 2 cores
    runs = {}
    for name, step in [("serial", batched.step_batch_serial), ("threaded", batched.step_batch)]:
        rng = np.random.default_rng(0)
        b = batched.new_batch(np.stack([deal(v, i) for i in range(n)]), np.zeros((n, v.n_actions), dtype=np.int8),
                              np.zeros((n, v.obs_size), dtype=np.int16))
        step(b, v.spec, v.actions, np.full(n, -1, dtype=np.int64))  # no move: masks and observations
        history = [tuple(x.copy() for x in b)]
        for _ in range(60):
            acts = (rng.random(b.masks.shape) * b.masks).argmax(axis=1)  # a legal move, mostly
            wild = rng.random(n) < 0.05
            acts[wild] = rng.integers(v.n_actions, size=wild.sum())  # any move, legal or not
            acts[b.masks.sum(axis=1) == 0] = -1  # none where no move is left
            step(b, v.spec, v.actions, acts)
            history.append(tuple(x.copy() for x in b))
        runs[name] = history
    for a, b in zip(runs["serial"], runs["threaded"], strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_reset_takes_per_env_seeds_with_none():
    env = gym.make_vec("Rainbow-v0", num_envs=3)
    _, info = env.reset(seed=[5, None, 7])
    assert info["deal_seed"][0] == 5 and info["deal_seed"][2] == 7
    # None continues that sub-env's own generator, as SyncVectorEnv's sub-envs do.
    env.reset(seed=0)
    rng_before = env.unwrapped._rngs[1].bit_generator.state
    _, info = env.reset(seed=[5, None, 7])
    expected = np.random.Generator(np.random.PCG64())
    expected.bit_generator.state = rng_before
    assert info["deal_seed"][1] == expected.integers(2**62)


@pytest.mark.parametrize("seed, match", [([1, 2], "2 seeds for 3"), ([1, -2, 3], "non-negative"),
                                         ([1, 2.5, 3], "non-negative integer"), ("x", "seed must be")])
def test_bad_seeds_raise_and_change_nothing(seed, match):
    env = gym.make_vec("Rainbow-v0", num_envs=3)
    env.reset(seed=0)
    states = env.unwrapped.states.copy()
    with pytest.raises(ValueError, match=match):
        env.reset(seed=seed)
    np.testing.assert_array_equal(env.unwrapped.states, states)


def test_reset_with_per_env_states_and_set_state():
    from solitaire_env import Game

    env = gym.make_vec("NumberTen-v0", num_envs=3, max_episode_steps=50)
    a, b = Game("number_ten", seed=41).get_state(), Game("number_ten", seed=42).get_state()
    _, info = env.reset(seed=0, options={"state": [a, None, b]})
    assert env.unwrapped.get_state(0) == a and env.unwrapped.get_state(2) == b
    assert env.unwrapped.get_state(1) == Game("number_ten", seed=1).get_state()
    assert list(info["deal_seed"]) == [-1, 1, -1]
    _, info = env.reset(options={"state": a})  # one position for every sub-env
    assert all(env.unwrapped.get_state(i) == a for i in range(3))
    # set_state changes one sub-env and restarts its step count only.
    for _ in range(3):
        env.step(np.array([np.flatnonzero(m)[0] for m in env.unwrapped.masks]))
    env.unwrapped.set_state(1, b)
    assert env.unwrapped.get_state(1) == b and env.unwrapped.get_state(0) != a
    assert list(env.unwrapped.steps) == [3, 0, 3]
    single = gym.make("NumberTen-v0")
    obs, info = single.unwrapped.set_state(b)
    np.testing.assert_array_equal(env.unwrapped.codes[1], obs)
    np.testing.assert_array_equal(env.unwrapped.masks[1], info["action_mask"])


@pytest.mark.parametrize("options, match", [
    ({"deal": 1}, "unknown reset option"), ({"state": [None]}, "list of 2 positions"),
    ({"state": [None, {"game": "rainbow"}]}, "options\\['state'\\]\\[1\\]"),
    ({"reset_mask": np.array([1, 0])}, "bool array"), ({"reset_mask": np.array([True])}, "shape \\(2,\\)"),
    ("state", "must be a dict"),
])
def test_bad_reset_options_raise_and_change_nothing(options, match):
    env = gym.make_vec("Rainbow-v0", num_envs=2)
    env.reset(seed=0)
    states = env.unwrapped.states.copy()
    with pytest.raises(ValueError, match=match):
        env.reset(options=options)
    np.testing.assert_array_equal(env.unwrapped.states, states)


def test_state_of_another_game_is_refused():
    from solitaire_env import Game

    env = gym.make_vec("Rainbow-v0", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="Rank and File position"):
        env.unwrapped.set_state(0, Game("rank_and_file", seed=0).get_state())
    with pytest.raises(ValueError, match="sub-env index"):
        env.unwrapped.set_state(2, Game("rainbow", seed=0).get_state())


def test_reset_mask_resets_only_those_sub_envs():
    env = gym.make_vec("RankAndFile-v0", num_envs=3)
    env.reset(seed=0)
    for _ in range(2):
        env.step(np.zeros(3, dtype=np.int64))
    before = [env.unwrapped.get_state(i) for i in range(3)]
    _, info = env.reset(seed=[None, 50, None], options={"reset_mask": np.array([False, True, False])})
    assert env.unwrapped.get_state(0) == before[0] and env.unwrapped.get_state(2) == before[2]
    assert info["deal_seed"][1] == 50 and list(env.unwrapped.steps) == [2, 0, 2]


@pytest.mark.parametrize("value", [-5, 0, 0.5, "10", True])
def test_bad_max_episode_steps_is_refused(value):
    with pytest.raises(ValueError, match="max_episode_steps must be a positive integer"):
        gym.make_vec("Rainbow-v0", num_envs=4, max_episode_steps=value)


def test_action_space_samples_with_the_info_mask():
    env = gym.make_vec("RankAndFile-v0", num_envs=16)
    _, info = env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(30):
        actions = env.action_space.sample(mask=info["action_mask"])
        legal = info["action_mask"][np.arange(16), actions]
        assert legal[info["action_mask"].any(axis=1)].all()
        _, _, _, _, info = env.step(actions)
        assert not info["illegal_action"].any()
    # The tuple form Gymnasium's MultiDiscrete takes still works.
    env.action_space.sample(mask=tuple(info["action_mask"]))


def test_float_actions_say_so():
    env = gym.make_vec("RankAndFile-v0", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="integers, got dtype float64"):
        env.step(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="action 999 is outside"):
        env.step(np.array([0, 999]))


def _near_won_rainbow() -> dict:
    """Rainbow with 51 cards up (base rank A) and the K of spades on pile 0: one move wins."""
    ranks = "A23456789TJQK"
    foundations = [[r + suit for r in ranks] for suit in "cdh"] + [[r + "s" for r in ranks[:-1]]]
    return {"format": 1, "variant": "rainbow", "tableau": [["Ks"], [], [], []], "foundations": foundations,
            "stock": [], "waste": [], "reserve": [], "redeals_left": 0, "base_rank": "A"}


REWARD_OPTIONS = [
    {}, {"win_bonus": 2.5}, {"step_penalty": 0.003}, {"reveal_bonus": 0.07}, {"illegal_penalty": 0.2},
    {"win_bonus": 1.0, "step_penalty": 0.01, "reveal_bonus": 0.05, "illegal_penalty": 0.0},
]


@pytest.mark.parametrize("options", REWARD_OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_batched_rewards_and_info_equal_single_envs_for_every_reward_option(options):
    """Wins, illegal moves, the step after an episode's end and ordinary play, reward option by option."""
    n = 3
    batched = gym.make_vec("Rainbow-v0", num_envs=n, max_episode_steps=40, **options)
    sync = gym.make_vec("Rainbow-v0", num_envs=n, vectorization_mode="sync", max_episode_steps=40, **options)
    near_won = _near_won_rainbow()
    out_b = batched.reset(seed=7, options={"state": near_won})
    out_s = sync.reset(seed=7, options={"state": near_won})
    win = int(np.flatnonzero(out_b[1]["action_mask"][0])[0])  # the one legal move: K of spades up
    illegal = int(np.flatnonzero(out_b[1]["action_mask"][0] == 0)[0])
    script = [np.array([win, illegal, win]), np.array([0, win, 0])]  # then: reset step, win, ...
    rng = np.random.default_rng(1)
    seen = {"won": 0, "illegal": 0, "after_end": 0}
    for t in range(150):
        _assert_same(out_b[0], out_s[0])
        mask = out_b[-1]["action_mask"]
        np.testing.assert_array_equal(mask, out_s[-1]["action_mask"])
        if t < len(script):
            actions = script[t]
        else:
            actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() and rng.random() > 0.2
                                else rng.integers(len(m)) for m in mask])
        ended = batched.unwrapped.prev_done.copy()
        out_b, out_s = batched.step(actions), sync.step(actions)
        _, r_b, term_b, trunc_b, info_b = out_b
        _, r_s, term_s, trunc_s, info_s = out_s
        np.testing.assert_array_equal(r_b, r_s)  # the same function: equal to the bit
        np.testing.assert_array_equal(term_b, term_s)
        np.testing.assert_array_equal(trunc_b, trunc_s)
        for key in ("foundation_cards", "is_won", "illegal_action"):
            expected = np.where(ended, np.zeros_like(info_b[key]), info_s[key]) if key == "illegal_action" \
                else info_s[key]
            np.testing.assert_array_equal(info_b[key], expected, err_msg=key)
        assert not r_b[ended].any()  # the step after an end: reward 0, no end flags
        seen["won"] += int(info_b["is_won"].sum())
        seen["illegal"] += int(info_b["illegal_action"].sum())
        seen["after_end"] += int(ended.sum())
    assert seen["won"] >= 3 and seen["illegal"] > 0 and seen["after_end"] > 0
    assert r_b.dtype == np.float64
