"""Klondike-v0: the env, its options (draw, redeals), the vector env, rendering, notation and recordings.

The rules themselves are checked in tests/test_klondike.py; what every env shares, in test_envs.py.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the ids)
from solitaire_env import Game
from solitaire_env.engine.games import KLONDIKE, klondike_variant
from solitaire_env.engine.notation import describe, notation, parse_move

OPTIONS = [{}, {"draw": 3}, {"redeals": 0}, {"draw": 3, "redeals": 2}]


@pytest.mark.parametrize("options", OPTIONS)
def test_klondike_env_passes_gymnasiums_checker(options):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("Klondike-v0", **options)
    check_env(env.unwrapped, skip_render_check=True)
    variant = klondike_variant(options.get("draw", 1), options.get("redeals"))
    assert env.unwrapped.variant is variant and env.action_space.n == variant.n_actions
    assert env.spec.max_episode_steps == 1000


def test_reset_seed_deals_that_deal_and_bad_options_are_refused():
    env = gym.make("Klondike-v0", draw=3)
    _, info = env.reset(seed=42)
    assert info["deal_seed"] == 42
    assert env.unwrapped.game.get_state() == Game(klondike_variant(3, None), seed=42).get_state()
    for bad, words in [({"draw": 2}, "draw must be 1 or 3"), ({"redeals": 10}, "redeals must be None"),
                       ({"redeals": "2"}, "redeals must be None")]:
        with pytest.raises(ValueError, match=words):
            gym.make("Klondike-v0", **bad)
        with pytest.raises(ValueError, match=words):
            gym.make_vec("Klondike-v0", num_envs=2, vectorization_mode="vector_entry_point", **bad)


def test_a_position_of_another_rule_set_is_refused_and_nothing_changes():
    env = gym.make("Klondike-v0")
    env.reset(seed=3)
    before = env.unwrapped.get_state()
    other = Game(klondike_variant(3, None), seed=3).get_state()
    with pytest.raises(ValueError, match="Klondike \\(draw 3, unlimited redeals\\) position"):
        env.unwrapped.set_state(other)
    assert env.unwrapped.get_state() == before


@pytest.mark.parametrize("options", [{}, {"draw": 3, "redeals": 2}])
def test_vector_env_plays_as_the_single_env(options):
    seeds = [1, 617, 9_999]
    vec = gym.make_vec("Klondike-v0", num_envs=3, vectorization_mode="vector_entry_point", **options)
    obs, info = vec.reset(seed=seeds)
    rng = np.random.default_rng(5)
    singles = [gym.make("Klondike-v0", **options) for _ in range(3)]
    single_obs = [e.reset(seed=s)[0] for e, s in zip(singles, seeds, strict=True)]
    for _ in range(150):
        np.testing.assert_array_equal(obs, np.stack(single_obs))
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in info["action_mask"]])
        obs, rewards, term, _, info = vec.step(actions)
        steps = [e.step(int(a)) for e, a in zip(singles, actions, strict=True)]
        single_obs = [s[0] for s in steps]
        np.testing.assert_allclose(rewards, [s[1] for s in steps])
        if term.any():
            break


def test_a_card_taken_back_from_a_foundation_costs_what_it_earned():
    env = gym.make("Klondike-v0")
    state = Game("klondike", seed=0).get_state()
    # Move the Ace of spades up by hand: a position where it can come back onto the red Two.
    for p, pile in enumerate(state["tableau"]):
        state["tableau"][p] = [c for c in pile if c.lstrip("#") not in ("As", "2d")]
        if state["tableau"][p] and state["tableau"][p][-1].startswith("#"):
            state["tableau"][p][-1] = state["tableau"][p][-1][1:]
    # Pile 0 (one card, face up) becomes the red Two alone; its card goes to the stock.
    state["stock"] = [c for c in state["stock"] if c not in ("As", "2d")] + state["tableau"][0]
    state["tableau"][0] = ["2d"]
    state["foundations"][0] = ["As"]
    _, info = env.reset(options={"state": state})
    back = env.unwrapped.encode_action(solitaire_env.Move("foundation", 0, "tableau", 0, 1))
    _, r_down, *_ = env.step(back)
    up = env.unwrapped.encode_action(solitaire_env.Move("tableau", 0, "foundation", 0, 1))
    _, r_up, *_ = env.step(up)
    assert r_down < 0 < r_up and r_down + r_up == pytest.approx(0.0)


def test_text_and_picture_show_the_stock_and_the_redeal():
    env = gym.make("Klondike-v0", draw=3, render_mode="ansi")
    env.reset(seed=0)
    for _ in range(8):  # the whole stock, three at a time
        env.step(0)
    text = env.render()
    assert "stock: 0 cards  waste (24):" in text and text.startswith("klondike_draw3")
    picture = gym.make("Klondike-v0", draw=3, render_mode="rgb_array")
    picture.reset(options={"state": env.unwrapped.get_state()})
    assert picture.render().shape[2] == 3


@pytest.mark.parametrize("options", [{}, {"draw": 3}])
def test_notation_reads_back_every_legal_move(options):
    variant = klondike_variant(options.get("draw", 1), None)
    rng = np.random.default_rng(1)
    kinds = set()
    for seed in range(6):
        game = Game(variant, seed)
        for _ in range(200):
            legal = game.legal_moves()
            state = game.get_state()
            for move in legal:
                assert parse_move(notation(move, game, state), game) == move
                assert describe(move, game, state)
                kinds.add((move.source, move.target))
            ups = [m for m in legal if m.target == "foundation"]
            game.play(ups[0] if ups and rng.random() < 0.5 else legal[int(rng.integers(len(legal)))])
    assert ("foundation", "tableau") in kinds


def test_foundation_notation_says_what_is_wrong():
    game = Game("klondike", 0)
    for text, words in [("f0 t1", "foundation f0 is empty"), ("f7 t1", "no foundation f7"),
                        ("f0 f", "goes back onto a pile")]:
        with pytest.raises(ValueError, match=words):
            parse_move(text, game)
    with pytest.raises(ValueError, match="never come back"):
        parse_move("f0 t1", Game("rank_and_file", 0))


def test_a_recording_of_draw_three_replays(tmp_path):
    from solitaire_env.tools.recording import load_recording, make_env, record_episode, replay_states, save_recording

    data = record_episode("Klondike-v0", seed=5, env_kwargs={"draw": 3, "redeals": 2}, max_steps=60)
    assert data["start_state"]["variant"] == "klondike_draw3_redeals2"
    save_recording(data, tmp_path / "draw3.json")
    loaded = load_recording(tmp_path / "draw3.json")
    states = replay_states(loaded)
    assert len(states) == len(data["actions"]) + 1
    assert make_env(loaded).variant is klondike_variant(3, 2)


def test_maskable_ppo_learns_on_the_sb3_adapter_without_error():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("Klondike-v0", n_envs=4, seed=0, deals="train", draw=3)
    venv.reset()
    masks = venv.env_method("action_masks")
    assert len(masks) == 4 and all(m.shape == (KLONDIKE.n_actions,) and m.any() for m in masks)
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(128)
    assert model.num_timesteps >= 128
