"""What a new user's first slips get: an unsupported ``render_mode`` and a step before ``reset``."""

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.envs.registration import ENV_IDS


@pytest.mark.parametrize("mode", ["human", "video"])
def test_gym_make_refuses_an_unsupported_render_mode_naming_the_supported_ones(mode):
    # "human" used to get Gymnasium's HumanRendering wrapper, failing only at the first render (no pygame).
    for make in (lambda: gym.make("Rainbow-v0", render_mode=mode),
                 lambda: gym.make_vec("Rainbow-v0", num_envs=2, render_mode=mode)):
        with pytest.raises(ValueError, match=rf"render_mode must be None or one of \['ansi', 'rgb_array'\], "
                                             rf"got '{mode}'"):
            make()


def test_render_lists_keep_gymnasium_render_collection():
    env = gym.make("RankAndFile-v0", render_mode="ansi_list")
    _, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    frames = env.render()
    assert len(frames) == 2 and all(isinstance(f, str) for f in frames)
    assert env.unwrapped.render_mode == "ansi"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_step_of_the_unwrapped_env_before_reset_raises_and_changes_nothing(env_id):
    env = gym.make(env_id).unwrapped
    before = env.get_state()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    assert env.get_state() == before
    _, info = env.reset(seed=1)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))  # and after a reset it plays


def test_set_state_counts_as_a_reset():
    state = gym.make("Rainbow-v0").unwrapped
    state.reset(seed=2)
    env = gym.make("Rainbow-v0").unwrapped
    _, info = env.set_state(state.get_state())
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert not info["illegal_action"]


def test_a_step_of_the_vector_env_before_reset_raises():
    envs = gym.make_vec("NumberTen-v0", num_envs=3)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        envs.step(np.zeros(3, dtype=np.int64))
    _, info = envs.reset(seed=0)
    envs.step(envs.action_space.sample(mask=info["action_mask"]))
