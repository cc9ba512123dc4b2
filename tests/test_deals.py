"""Deal sets and the train / validation / test splits (solitaire_env/engine/deals.py) in the single and batched envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.engine.deals import SPLITS, TEST, TRAIN, VALIDATION, deal_set, describe, split_of


def test_splits_are_disjoint_and_cover_the_deal_numbers():
    ordered = sorted(SPLITS.values(), key=lambda r: r.start)
    assert ordered[0].start == 0 and ordered[-1].stop == 2**62
    for a, b in zip(ordered, ordered[1:], strict=False):
        assert a.stop == b.start  # no gap, no overlap
    assert split_of(0, 999) == "test" and split_of(10_000, 10_099) == "validation"
    assert split_of(9_999, 10_000) is None and split_of(1_000_000, 1_000_999) == "train"
    assert describe(0, 999) == "test deals 0-999"


@pytest.mark.parametrize("spec, match", [
    ("tests", "deals must be"), ("5", "deals must be"), ("-3:2", "non-empty range"), ("4:4", "non-empty range"),
    (range(0, 10, 2), "step 1"), ([], "empty list"), ([1, -2], "holds -2"), ([1.5], "holds 1.5"),
    ([True], "holds True"), (3.0, "deals must be"), ({"a": 1}, "deals must be"),
])
def test_bad_deal_sets_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        deal_set(spec)
    with pytest.raises(ValueError, match=match):
        gym.make("Rainbow-v0", deals=spec)
    with pytest.raises(ValueError, match=match):
        gym.make_vec("Rainbow-v0", num_envs=2, deals=spec)


def test_default_env_keeps_seed_as_deal_number():
    env = gym.make("RankAndFile-v0")
    assert env.reset(seed=123)[1]["deal_seed"] == 123


@pytest.mark.parametrize("split", ["test", "validation"])
def test_ordered_split_plays_its_deals_in_order(split):
    env = gym.make("NumberTen-v0", deals=split)
    first = SPLITS[split].start
    assert [env.reset()[1]["deal_seed"] for _ in range(3)] == [first, first + 1, first + 2]
    assert env.reset(seed=7)[1]["deal_seed"] == first + 7
    assert env.reset()[1]["deal_seed"] == first + 8
    # The deal is the numbered deal itself, as in the default env.
    assert env.unwrapped.get_state() == solitaire_env.Game("number_ten", seed=first + 8).get_state()


def test_listed_deals_wrap_around():
    env = gym.make("Rainbow-v0", deals=[5, 3, 11])
    assert [env.reset()[1]["deal_seed"] for _ in range(4)] == [5, 3, 11, 5]
    assert env.reset(seed=2)[1]["deal_seed"] == 11


def test_train_split_is_drawn_at_random_reproducibly_and_never_leaves_it():
    def deals(seed):
        env = gym.make("Rainbow-v0", deals="train")
        return [env.reset(seed=seed)[1]["deal_seed"]] + [env.reset()[1]["deal_seed"] for _ in range(199)]

    a = deals(0)
    assert a == deals(0) and a != deals(1)
    assert all(d in TRAIN for d in a) and len(set(a)) == len(a)
    assert not any(d in TEST or d in VALIDATION for d in a)


def test_vector_env_with_an_ordered_set_plays_each_deal_once():
    n = 4
    venv = gym.make_vec("Rainbow-v0", num_envs=n, deals="validation")
    _, info = venv.reset(seed=0)
    played = list(info["deal_seed"])
    for _ in range(3):  # sub-env i's next deals: positions i + N, i + 2N, ...
        _, info = venv.reset(options={"reset_mask": np.ones(n, dtype=bool)})
        played += list(info["deal_seed"])
    assert sorted(played) == list(range(10_000, 10_000 + 4 * n))
    # Autoresets walk on the same way.
    venv = gym.make_vec("Rainbow-v0", num_envs=2, deals="test", max_episode_steps=1)
    _, info = venv.reset()
    seen = [tuple(info["deal_seed"])]
    for _ in range(2):  # one step ends every episode, the next one deals the next deals
        venv.step(np.zeros(2, dtype=np.int64))
        venv.step(np.zeros(2, dtype=np.int64))
        seen.append(tuple(venv.unwrapped.deal_seeds))
    assert seen == [(0, 1), (2, 3), (4, 5)]


def test_vector_env_train_split_matches_single_envs():
    venv = gym.make_vec("RankAndFile-v0", num_envs=3, deals="train")
    _, info = venv.reset(seed=10)
    for i in range(3):
        env = gym.make("RankAndFile-v0", deals="train")
        assert env.reset(seed=10 + i)[1]["deal_seed"] == info["deal_seed"][i]
        assert int(info["deal_seed"][i]) in TRAIN  # int(): `in range` scans for a numpy integer
