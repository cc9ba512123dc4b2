"""The batched vector env in each of Gymnasium's autoreset modes against ``SyncVectorEnv`` of single
envs in the same mode, step for step: observations, rewards, end flags and every info key."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import solitaire_env  # noqa: F401  (registers the envs)

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
N, MAX_STEPS, STEPS = 4, 40, 250  # short episodes: many time-outs, so many resets


def _same(a, b, where: str, rows=None) -> None:
    """``a`` (ours) equals ``b`` (SyncVectorEnv's), values and dtypes; ``rows``: only those sub-envs."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in b:
            _same(a[key], b[key], f"{where}[{key!r}]", rows)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
    if rows is not None:
        a, b = a[rows], b[rows]
    np.testing.assert_array_equal(a, b, err_msg=where)


def _same_info(ours: dict, sync: dict, where: str, rows=None) -> None:
    """Ours holds every key for every sub-env (no ``_key`` masks) where the sync env's masks are all
    true (or true for ``rows``, after a partial reset); the final observation and info as Gymnasium's."""
    plain = {key for key in sync if not key.startswith("_") and key not in ("final_obs", "final_info")}
    assert plain == {key for key in ours if not key.startswith("_") and key not in ("final_obs", "final_info")}
    for key in plain:
        assert sync[f"_{key}"][rows if rows is not None else slice(None)].all()
        assert f"_{key}" not in ours
        _same(ours[key], sync[key], f"{where} info[{key!r}]", rows)
    assert ("final_obs" in ours) == ("final_obs" in sync), where
    if "final_obs" in sync:
        _same(ours["_final_obs"], sync["_final_obs"], f"{where} _final_obs")
        _same(ours["final_info"], sync["final_info"], f"{where} final_info")
        _same(ours["_final_info"], sync["_final_info"], f"{where} _final_info")
        for i in np.flatnonzero(sync["_final_obs"]):
            _same(ours["final_obs"][i], sync["final_obs"][i], f"{where} final_obs[{i}]")
        assert all(ours["final_obs"][i] is None for i in np.flatnonzero(~sync["_final_obs"]))


@pytest.mark.parametrize("no_revisit", [False, True])
@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_mode_equals_sync_vector_env(mode, env_id, no_revisit):
    kwargs = dict(illegal_penalty=0.05, no_revisit=no_revisit, max_episode_steps=MAX_STEPS)
    ours = gym.make_vec(env_id, num_envs=N, autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(env_id, num_envs=N, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode},
                        **kwargs)
    assert ours.autoreset_mode == sync.autoreset_mode == mode
    assert ours.metadata["autoreset_mode"] == mode
    obs_o, info_o = ours.reset(seed=11)
    obs_s, info_s = sync.reset(seed=11)
    rng = np.random.default_rng(3)
    ends = partial_resets = 0
    for t in range(STEPS):
        _same(obs_o, obs_s, f"step {t} obs")
        mask = info_o["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() and rng.random() > 0.1
                            else rng.integers(len(m)) for m in mask])
        obs_o, r_o, term_o, trunc_o, info_o = ours.step(actions)
        obs_s, r_s, term_s, trunc_s, info_s = sync.step(actions)
        np.testing.assert_allclose(r_o, r_s, rtol=0, atol=1e-12)
        _same(term_o, term_s, f"step {t} terminated")
        _same(trunc_o, trunc_s, f"step {t} truncated")
        _same(obs_o, obs_s, f"step {t} obs")
        _same_info(info_o, info_s, f"step {t}")
        ended = term_o | trunc_o
        ends += int(ended.sum())
        if mode is AutoresetMode.DISABLED:
            # The ended sub-envs must be reset; now and then others too, some with a seed.
            which = ended | (rng.random(N) < 0.05)
            if which.any():
                seeds = [int(s) if rng.random() < 0.3 else None for s in rng.integers(10**6, size=N)]
                partial_resets += int(not which.all())
                obs_o, info_o = ours.reset(seed=seeds, options={"reset_mask": which.copy()})
                obs_s, info_s = sync.reset(seed=seeds, options={"reset_mask": which.copy()})
                _same_info(info_o, info_s, f"reset after step {t}", rows=which)
    assert ends > 0
    if mode is AutoresetMode.DISABLED:
        assert partial_resets > 0


def test_same_step_final_info_holds_the_last_step():
    env = gym.make_vec("Rainbow-v0", num_envs=2, autoreset_mode="SameStep", max_episode_steps=3)
    _, info = env.reset(seed=0)
    for _ in range(3):
        _, _, _, truncated, info = env.step(env.action_space.sample(mask=info["action_mask"]))
    assert truncated.all() and info["_final_obs"].all()
    # The new games: no move yet, a fresh mask; the last step's move is in the final info.
    assert (info["move"] == -1).all() and (info["final_info"]["move"] >= 0).all()
    assert (info["deal_seed"] != [0, 1]).all() and list(info["final_info"]["deal_seed"]) == [0, 1]


def test_disabled_refuses_to_step_an_ended_sub_env():
    env = gym.make_vec("Rainbow-v0", num_envs=2, autoreset_mode=AutoresetMode.DISABLED, max_episode_steps=2)
    _, info = env.reset(seed=0)
    for _ in range(2):
        _, _, _, truncated, info = env.step(env.action_space.sample(mask=info["action_mask"]))
    assert truncated.all()
    with pytest.raises(ValueError, match="sub-env 0 has ended.*reset_mask"):
        env.step(env.action_space.sample(mask=info["action_mask"]))
    _, info = env.reset(options={"reset_mask": np.array([True, True])})
    env.step(env.action_space.sample(mask=info["action_mask"]))  # fine again


@pytest.mark.parametrize("bad", ["next_step", 1, None])
def test_bad_autoreset_mode_is_refused(bad):
    with pytest.raises(ValueError, match="autoreset_mode must be"):
        gym.make_vec("Rainbow-v0", num_envs=2, autoreset_mode=bad)
