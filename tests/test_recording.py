"""Episode recordings: record, save, load, replay; bad files; GIF, HTML and terminal replays."""

from __future__ import annotations

import copy
import io
import json

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

import solitaire_env  # noqa: F401 - registers the envs
from solitaire_env.tools.recording import (
    FORMAT,
    Recorder,
    load_recording,
    record_episode,
    replay,
    replay_states,
    save_recording,
    validate_recording,
)
from solitaire_env.tools.replay import ansi_replay, write_gif, write_html

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"]


def _random_episode(env_id: str, seed: int, steps: int = 300, **env_kwargs):
    """Play random legal actions, recording with a Recorder; returns (recorder, states, rewards, final)."""
    env = gym.make(env_id, **env_kwargs)
    obs, info = env.reset(seed=seed)
    rec = Recorder()
    rec.start(env_id, env.unwrapped.get_state(), seed=seed, agent="random", env_kwargs=env_kwargs)
    rng = np.random.default_rng(seed)
    states, rewards = [env.unwrapped.get_state()], []
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        if legal.size == 0:
            break
        action = rng.choice(legal)  # a numpy integer: the recorder takes those too
        obs, reward, terminated, truncated, info = env.step(action)
        rec.add(action, reward)
        states.append(env.unwrapped.get_state())
        rewards.append(reward)
        if terminated or truncated:
            break
    return rec, states, rewards, info["foundation_cards"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_record_save_load_replay(env_id, tmp_path):
    rec, states, rewards, final = _random_episode(env_id, seed=4)
    path = tmp_path / "episode.json"
    rec.save(path)
    data = load_recording(path)
    assert data["format"] == FORMAT and data["version"] == 1
    assert data["env_id"] == env_id and data["seed"] == 4 and data["agent"] == "random"
    assert data["start_state"] == states[0]
    assert data["rewards"] == rewards
    assert data["final_foundation_cards"] == final
    assert len(data["actions"]) == len(states) - 1
    replayed = replay_states(data)
    assert replayed == states
    assert replayed[-1] == states[-1]  # the final table
    assert replay_states(path) == states  # a path works as well as a dict


def test_record_episode_plays_to_the_end_and_replays():
    data = record_episode("Rainbow-v0", seed=1)
    states, moves = replay(data)
    assert len(states) == len(moves) + 1 == len(data["actions"]) + 1
    env = gym.make("Rainbow-v0").unwrapped
    env.set_state(states[-1])
    assert env.game.is_over() or len(data["actions"]) == 1000
    assert data["agent"] == "random" and data["seed"] == 1


def test_recording_with_an_agent_object():
    class FirstLegal:
        name = "first-legal"

        def reset(self, seed=None):
            pass

        def act(self, observation, info):
            return int(np.flatnonzero(info["action_mask"])[0])

    data = record_episode("NumberTen-v0", agent=FirstLegal(), seed=2, max_steps=40)
    assert data["agent"] == "first-legal" and len(data["actions"]) <= 40
    assert len(replay_states(data)) == len(data["actions"]) + 1


def test_reward_settings_are_kept_and_checked(tmp_path):
    rec, states, rewards, _ = _random_episode("Rainbow-v0", seed=3, steps=60, step_penalty=0.01, obs_mode="dict")
    data = rec.to_dict()
    assert data["env_kwargs"] == {"step_penalty": 0.01}  # obs_mode does not change what happens: left out
    assert replay_states(data) == states
    stripped = copy.deepcopy(data)
    del stripped["env_kwargs"]
    with pytest.raises(ValueError, match="reward"):
        replay_states(stripped)


def test_recording_from_a_saved_position():
    game_state = record_episode("Rainbow-v0", seed=6, max_steps=10)
    mid = replay_states(game_state)[-1]
    data = record_episode("Rainbow-v0", start_state=mid, max_steps=15)
    assert data["seed"] is None and data["start_state"] == mid
    assert replay_states(data)[0] == mid


def test_recorder_refuses_illegal_actions_and_use_before_start():
    rec = Recorder()
    with pytest.raises(RuntimeError):
        rec.add(0, 0.0)
    env = gym.make("RankAndFile-v0")
    _, info = env.reset(seed=0)
    rec.start("RankAndFile-v0", env.unwrapped.get_state(), seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        rec.add(illegal, 0.0)
    with pytest.raises(ValueError):
        rec.add(True, 0.0)
    with pytest.raises(ValueError):
        rec.add("3", 0.0)
    with pytest.raises(ValueError):
        rec.start("Spider-v0", env.unwrapped.get_state())
    with pytest.raises(ValueError, match="Rank and File position"):
        rec.start("Rainbow-v0", env.unwrapped.get_state())


def _good() -> dict:
    return record_episode("Rainbow-v0", seed=9, max_steps=30)


def _broken(change) -> dict:
    data = copy.deepcopy(_good())
    change(data)
    return data


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(format="something-else"), "not a solitaire-env recording"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d.pop("actions"), "lacks actions"),
        (lambda d: d.update(env_id="Spider-v0"), "unknown env_id"),
        (lambda d: d.update(variant="rank_and_file"), "does not match env_id"),
        (lambda d: d.update(seed=-1), "seed"),
        (lambda d: d.update(seed="7"), "seed"),
        (lambda d: d["start_state"]["stock"].pop(), "start_state is not a valid position"),
        (lambda d: d.update(start_state=[]), "start_state"),
        (lambda d: d["rewards"].pop(), "one reward per action"),
        (lambda d: d["actions"].__setitem__(0, 999), "not an action id"),
        (lambda d: d["actions"].__setitem__(0, True), "not an action id"),
        (lambda d: d["rewards"].__setitem__(0, "x"), "not a finite number"),
        (lambda d: d.update(agent=5), "agent"),
        (lambda d: d.update(final_foundation_cards=53), "final_foundation_cards"),
        (lambda d: d.update(env_kwargs={"render_mode": "ansi"}), "env_kwargs"),
    ],
)
def test_bad_structure_raises_value_error(change, message, tmp_path):
    data = _broken(change)
    with pytest.raises(ValueError, match=message):
        validate_recording(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        load_recording(path)


def _first_illegal(data: dict) -> int:
    env = gym.make("Rainbow-v0").unwrapped
    _, info = env.reset(options={"state": data["start_state"]})
    return int(np.flatnonzero(info["action_mask"] == 0)[0])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["actions"].__setitem__(0, _first_illegal(d)), "not legal"),
        (lambda d: d["rewards"].__setitem__(len(d["rewards"]) - 1, 0.5), "reward"),
        (lambda d: d.update(final_foundation_cards=d["final_foundation_cards"] + 1), "foundations"),
        (lambda d: d.update(start_state=record_episode("Rainbow-v0", seed=10, max_steps=1)["start_state"]),
         "does not match|the replay ends with"),
    ],
)
def test_replay_of_a_file_that_does_not_match_raises(change, message):
    data = _broken(change)
    validate_recording(data)  # well-formed...
    with pytest.raises(ValueError, match=message):  # ...but not what happens when replayed
        replay_states(data)


def test_actions_after_the_end_are_refused():
    data = record_episode("Rainbow-v0", seed=1)  # random play to the end of the game
    assert len(data["actions"]) < 1000
    data["actions"].append(0)
    data["rewards"].append(0.0)
    with pytest.raises(ValueError, match="already over"):
        replay_states(data)


def test_not_json_and_missing_files(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{oops")
    with pytest.raises(ValueError, match="not JSON"):
        load_recording(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        load_recording(path)
    with pytest.raises(FileNotFoundError):
        load_recording(tmp_path / "missing.json")


def test_save_recording_checks_first(tmp_path):
    data = _good()
    save_recording(data, tmp_path / "ok.json")
    assert load_recording(tmp_path / "ok.json") == data
    with pytest.raises(ValueError):
        save_recording({"format": "nope"}, tmp_path / "no.json")


@pytest.mark.parametrize("env_id", ["RankAndFile-v0", "Rainbow-v0"])
def test_gif_is_written(env_id, tmp_path):
    data = record_episode(env_id, seed=2, max_steps=12)
    out = tmp_path / "episode.gif"
    n = write_gif(data, out, fps=5, width=500)
    assert n == 13
    with Image.open(out) as gif:
        assert gif.format == "GIF" and gif.n_frames == 13 and gif.size[0] == 500
        first = np.asarray(gif.convert("RGB"))
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert("RGB"))
    assert (first != last).any()


def test_gif_frame_skipping_keeps_first_and_last(tmp_path):
    data = record_episode("Rainbow-v0", seed=2, max_steps=50)
    out = tmp_path / "short.gif"
    assert write_gif(data, out, every=10) == 6  # steps 0, 10, 20, 30, 40, 50
    assert write_gif(data, out, max_frames=4) == 4
    with pytest.raises(ValueError):
        write_gif(data, out, every=0)


def test_gif_of_fifty_moves_is_small(tmp_path):
    data = record_episode("RankAndFile-v0", seed=3, max_steps=50)
    out = tmp_path / "fifty.gif"
    write_gif(data, out)
    assert out.stat().st_size < 1_500_000  # about 0.7 MB at the default 1000 px width


def test_html_is_written_and_self_contained(tmp_path):
    data = record_episode("NumberTen-v0", seed=2, max_steps=20)
    out = tmp_path / "episode.html"
    size = write_html(data, out, width=600)
    page = out.read_text(encoding="utf-8")
    assert size == len(page.encode("utf-8"))
    for element_id in ('id="prev"', 'id="next"', 'id="play"', 'id="frame"', 'id="step"'):
        assert element_id in page
    assert "http://" not in page and "https://" not in page and "<link" not in page and "<script src" not in page
    assert page.count("data:image/png;base64,") == 1 + sum(1 for _ in filter(None, json.loads(
        page.split("const PATCHES = ", 1)[1].split(";\n", 1)[0])))


def test_bad_recording_for_gif_and_html(tmp_path):
    with pytest.raises(ValueError):
        write_gif({"format": "nope"}, tmp_path / "x.gif")
    with pytest.raises(ValueError):
        write_html({"format": "nope"}, tmp_path / "x.html")


def test_ansi_replay_steps_back_and_forth():
    data = record_episode("Rainbow-v0", seed=5, max_steps=4)
    out = io.StringIO()
    rc = ansi_replay(data, io.StringIO("\n\nb\nhuh\n4\n\nq\n"), out)
    text = out.getvalue()
    assert rc == 0
    assert text.count("step 1/4") == 2 and "step 2/4" in text
    assert "unknown command 'huh'" in text
    assert "end of the recording" in text
    assert ansi_replay(data, io.StringIO(""), io.StringIO()) == 0  # end of input is quit
    bad = io.StringIO()
    assert ansi_replay({"format": "nope"}, io.StringIO(""), bad) == 2 and "error:" in bad.getvalue()
