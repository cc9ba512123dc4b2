"""The info schema: the same keys with the same types on every reset and step, over whole episodes
(illegal actions, wins, stuck ends, time-outs, given positions), single and vector env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.engine.game import Game

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", "FreeCell-v0"]
BASE_KEYS = {"action_mask", "foundation_cards", "is_won", "illegal_action", "move", "deal_seed"}
OPTIONS = [  # the env's keyword arguments, and the keys they add
    ({}, set()),
    ({"no_revisit": True}, {"revisit", "stuck"}),
    ({"track_revisits": True, "action_features": True}, {"revisit", "action_features"}),
    ({"obs_mode": "dict", "action_features": True}, {"revisit"}),  # the features are in the observation
]


def _near_won(env_id: str) -> dict:
    """A position one move from a win: the last card in the waste (Rank and File, Number Ten) or
    alone on pile 0 (Rainbow)."""
    ranks, suits = "A23456789TJQK", "cdhs"
    if env_id == "FreeCell-v0":  # the King of spades alone on pile 0
        foundations = [[r + s for r in ranks] for s in suits]
        foundations[3].pop()
        return {"format": 1, "variant": "freecell", "tableau": [["Ks"]] + [[] for _ in range(7)],
                "foundations": foundations, "stock": [], "waste": [], "reserve": [], "redeals_left": 0,
                "base_rank": None, "cells": [None] * 4}
    if env_id == "Rainbow-v0":
        base = ranks.index("7")
        foundations = [[ranks[(base + k) % 13] + s for k in range(13)] for s in suits]
        last = foundations[3].pop()
        return {"format": 1, "variant": "rainbow", "tableau": [[last], [], [], []], "foundations": foundations,
                "stock": [], "waste": [], "reserve": [], "redeals_left": 0, "base_rank": "7"}
    state = Game("rank_and_file" if env_id == "RankAndFile-v0" else "number_ten", seed=0).get_state()
    foundations = [[r + s for r in ranks] for s in suits for _ in range(2)]
    foundations[7] = foundations[7][:-1]
    state.update(tableau=[[] for _ in range(10)], foundations=foundations, stock=[], waste=["Ks"])
    return state


# The games with a two-cycle position below. In Rainbow no move leads back; FreeCell's free cells
# always offer another move, so a stuck end needs more than two positions there.
TWO_CYCLES = ("RankAndFile-v0", "NumberTen-v0")


def _two_cycle(env_id: str) -> dict:
    """Rank and File or Number Ten: Qh can go from Kc to Ks and back and nothing else moves, so with
    ``no_revisit`` the second move ends the episode stuck."""
    ranks = "A23456789TJQK"
    heights = {"c": (11, 13), "d": (4, 13), "h": (10, 13), "s": (11, 13)}
    tableau = [["#5d", "Kc", "Qh"], ["#Qd", "Ks"], ["#Qc", "6d"], ["#Qs", "7d"], ["#Jh", "8d"],
               ["9d"], ["Td"], ["Jd"], ["Kd"], ["Kh"]]
    return {"format": 1, "variant": "rank_and_file" if env_id == "RankAndFile-v0" else "number_ten",
            "tableau": tableau, "foundations": [[ranks[k] + s for k in range(n)] for s in "cdhs" for n in heights[s]],
            "stock": [], "waste": [], "reserve": [], "redeals_left": 0, "base_rank": None}


def _schema(info: dict) -> dict:
    """Each key's type: ``(dtype, shape)`` for an array, else the Python type."""
    return {key: (v.dtype, v.shape) if isinstance(v, np.ndarray) else type(v) for key, v in info.items()}


@pytest.mark.parametrize("kwargs, extra", OPTIONS, ids=["plain", "no_revisit", "features", "dict"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_single_env_info_keeps_its_schema(env_id, kwargs, extra):
    env = gym.make(env_id, max_episode_steps=150, **kwargs)
    u = env.unwrapped
    n = u.action_space.n
    obs, info = env.reset(seed=0)
    expected = _schema(info)
    assert set(expected) == BASE_KEYS | extra
    assert expected["action_mask"] == (np.dtype(np.int8), (n,))
    assert {key: expected[key] for key in ("foundation_cards", "move", "deal_seed")} == dict.fromkeys(
        ("foundation_cards", "move", "deal_seed"), int)
    assert all(expected[key] is bool for key in ("is_won", "illegal_action", "revisit", "stuck") if key in info)
    assert info["move"] == -1 and info["deal_seed"] == 0 and info["illegal_action"] is False
    rng = np.random.default_rng(1)
    seen = dict.fromkeys(("illegal", "won", "stuck", "no_move", "truncated"), 0)
    for episode in range(8):
        if episode == 0:
            obs, info = env.reset(seed=0)
        elif episode % 3 == 0:  # a given position, one move from a win: deal_seed is -1
            obs, info = env.reset(options={"state": _near_won(env_id)})
            assert info["deal_seed"] == -1
        elif episode == 2 and env_id in TWO_CYCLES:  # a two-cycle: a stuck end with no_revisit
            obs, info = env.reset(options={"state": _two_cycle(env_id)})
        else:
            obs, info = env.reset()
        assert _schema(info) == expected
        deal = info["deal_seed"]
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            illegal = len(legal) == 0 or rng.random() < 0.1
            action = int(rng.integers(n) if illegal else rng.choice(legal))
            illegal = not info["action_mask"][action]
            move = u.decode_action(action)  # the Move, for an id of this position
            obs, reward, terminated, truncated, info = env.step(action)
            assert _schema(info) == expected, f"step info {_schema(info)} != reset info {expected}"
            assert info["illegal_action"] is illegal and info["deal_seed"] == deal
            assert info["move"] == (-1 if illegal else action)
            if not illegal:
                assert move.count is not None  # decode_action still gives the Move of a played id
            seen["illegal"] += illegal
            seen["won"] += info["is_won"]
            seen["stuck"] += info.get("stuck", False)
            seen["no_move"] += terminated and not info["is_won"] and not info.get("stuck", False)
            seen["truncated"] += truncated and not terminated
            done = terminated or truncated
    assert seen["illegal"] and seen["won"] and (seen["truncated"] or seen["no_move"] or seen["stuck"])
    if kwargs.get("no_revisit") and env_id in TWO_CYCLES:
        assert seen["stuck"], seen


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_set_state_info_has_the_schema(env_id):
    env = gym.make(env_id)
    _, info = env.reset(seed=3)
    expected = _schema(info)
    _, info = env.unwrapped.set_state(_near_won(env_id))
    assert _schema(info) == expected and info["deal_seed"] == -1 and info["move"] == -1


@pytest.mark.parametrize("kwargs, extra", OPTIONS, ids=["plain", "no_revisit", "features", "dict"])
def test_vector_env_info_keeps_its_schema(kwargs, extra):
    """Every key for every sub-env on every reset and step (no ``_key`` masks), types as on the first reset."""
    n = 3
    env = gym.make_vec("RankAndFile-v0", num_envs=n, max_episode_steps=30, **kwargs)
    single = gym.make("RankAndFile-v0", **kwargs)
    _, one = single.reset(seed=0)
    obs, info = env.reset(seed=0)
    expected = _schema(info)
    assert set(expected) == set(one) == BASE_KEYS | extra
    for key, value in one.items():  # the single env's types, stacked
        dtype = value.dtype if isinstance(value, np.ndarray) else np.dtype(type(value))
        assert expected[key] == (dtype, (n, *np.shape(value))), key
    rng = np.random.default_rng(2)
    ends = 0
    for _ in range(100):
        actions = np.array([rng.integers(len(m)) if rng.random() < 0.1 or not m.any() else rng.choice(np.flatnonzero(m))
                            for m in info["action_mask"]])
        obs, _, terminated, truncated, info = env.step(actions)
        assert _schema(info) == expected
        ends += int((terminated | truncated).sum())
    assert ends > 0
