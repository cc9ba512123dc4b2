"""Batched teacher play, DAgger and cloning (solitaire_env/tools/imitation.py)."""

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

import solitaire_env  # noqa: E402,F401
from solitaire_env.agents import make_agent  # noqa: E402
from solitaire_env.agents.move_scorer import MoveScorerPolicy  # noqa: E402
from solitaire_env.envs.sb3 import make_sb3_vec_env  # noqa: E402
from solitaire_env.tools import imitation  # noqa: E402

torch.set_num_threads(1)  # small networks: threads only add contention on a shared machine
KWARGS = {"obs_mode": "piles", "action_features": True, "no_revisit": True}
DEALS = range(3_000_000, 3_000_005)
# Two-deck games cut at 300 steps: long enough for stuck stretches, short enough for the default run.
LIMITS = {"Rainbow-v0": {"no_revisit": True}, "RankAndFile-v0": {"no_revisit": True, "max_episode_steps": 300}}


def _sequential(env_id: str, deals: range, gamma: float, rules: dict | None = None,
                planned: dict | None = None) -> tuple[list, list, list]:
    """The heuristic's games one at a time in a plain env: its labelled moves, their codes and returns.
    ``rules``: the env's options; ``planned``: those the heuristic looks ahead with (default ``rules``)."""
    env = gym.make(env_id, **LIMITS.get(env_id, {}), **(rules or {}))
    agent = make_agent("heuristic", env_id, env_kwargs=rules if planned is None else planned)
    actions, codes, returns = [], [], []
    for deal in deals:
        obs, info = env.reset(seed=deal)
        agent.reset()
        rewards, keep, done = [], [], False
        while not done:
            action = agent.act(obs, info)
            if not agent.stuck:
                actions.append(action)
                codes.append(obs.copy())
                keep.append(len(rewards))
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        to_go = np.zeros(len(rewards) + 1)
        for t in range(len(rewards) - 1, -1, -1):
            to_go[t] = rewards[t] + gamma * to_go[t + 1]
        returns += to_go[keep].tolist()
    return actions, codes, returns


@pytest.mark.parametrize("env_id", list(LIMITS))
def test_batched_teacher_games_are_the_sequential_ones(env_id):
    """Whatever the number of sub-envs, the examples are the heuristic's own games, deal by deal, with
    the returns of those games, and the student's observation of each position."""
    deals = DEALS if env_id == "Rainbow-v0" else range(3_000_000, 3_000_003)
    actions, codes, returns = _sequential(env_id, deals, gamma=0.9)
    for n_envs in (1, 2):
        games = imitation.play(env_id, deals, LIMITS[env_id], n_envs=n_envs, teacher="heuristic", gamma=0.9)
        np.testing.assert_array_equal(games.actions, actions)
        np.testing.assert_array_equal(games.obs, np.stack(codes))
        np.testing.assert_allclose(games.returns, returns, rtol=1e-5, atol=1e-6)
        assert games.masks[np.arange(len(games)), games.actions].all()
        assert games.stats["games"] == len(deals) and games.stats["steps"] >= len(games)
    piles = imitation.play(env_id, deals, {**LIMITS[env_id], **KWARGS}, n_envs=2, teacher="heuristic", gamma=0.9)
    np.testing.assert_array_equal(piles.actions, actions)  # the same games, seen through another observation
    assert piles.obs["cards"].shape[0] == len(actions)
    np.testing.assert_array_equal(piles.obs["action_mask"].astype(bool), piles.masks)


def test_the_teacher_plans_with_the_rules_the_env_plays():
    """Klondike draw 3 is an env option: the teacher gets it too, so its labels are those of a heuristic
    that looks ahead with draw 3 (one with draw 1's rules plays other moves in the same games)."""
    deals = range(3_000_000, 3_000_002)
    draw3 = {"draw": 3, "max_episode_steps": 200}
    actions, _, _ = _sequential("Klondike-v0", deals, gamma=0.9, rules=draw3)
    games = imitation.play("Klondike-v0", deals, draw3, n_envs=2, teacher="heuristic", gamma=0.9)
    np.testing.assert_array_equal(games.actions, actions)
    wrong, _, _ = _sequential("Klondike-v0", deals, gamma=0.9, rules=draw3, planned={"draw": 1})
    assert wrong != actions


def test_the_search_teacher_labels_the_same_games_whatever_the_sub_envs():
    """The determinized search agent as teacher: its guesses are seeded per game, so the examples do not
    depend on the number of sub-envs; it plays its own games (not the heuristic's), every label legal."""
    deals = range(3_000_000, 3_000_006)
    one = imitation.play("Rainbow-v0", deals, n_envs=1, teacher="search:2x200", seed=7)
    three = imitation.play("Rainbow-v0", deals, n_envs=3, teacher="search:2x200", seed=7)
    np.testing.assert_array_equal(one.actions, three.actions)
    np.testing.assert_array_equal(one.obs, three.obs)
    assert one.masks[np.arange(len(one)), one.actions].all()
    heuristic = imitation.play("Rainbow-v0", deals, n_envs=2, teacher="heuristic")
    assert len(one) != len(heuristic) or not np.array_equal(one.actions, heuristic.actions)


def test_dagger_lets_the_student_play_and_the_teacher_label(tmp_path):
    venv = make_sb3_vec_env("Rainbow-v0", n_envs=1, **KWARGS)
    model = MaskablePPO(MoveScorerPolicy, venv, device="cpu", seed=0, policy_kwargs={"dim": 16, "hidden": 32})
    deals = DEALS[:3]
    teacher = imitation.play("Rainbow-v0", deals, KWARGS, n_envs=3, teacher="heuristic")
    student = imitation.play("Rainbow-v0", deals, KWARGS, n_envs=3, teacher="heuristic", policy=model.policy,
                             beta=0.0, seed=1)
    again = imitation.play("Rainbow-v0", deals, KWARGS, n_envs=3, teacher="heuristic", policy=model.policy,
                           beta=0.0, seed=1)
    np.testing.assert_array_equal(student.actions, again.actions)  # reproducible
    # An untrained student plays other games than the teacher, and the labels are the teacher's moves.
    assert student.stats["wins"] <= teacher.stats["wins"] and len(student) != len(teacher)
    assert student.masks[np.arange(len(student)), student.actions].all()
    alone = imitation.play("Rainbow-v0", deals, KWARGS, n_envs=3, policy=model.policy)
    assert len(alone) == 0 and alone.stats["games"] == len(deals)
    path = str(tmp_path / "games.npz")
    student.save(path)
    loaded = imitation.Games.load(path)
    np.testing.assert_array_equal(loaded.obs["cards"], student.obs["cards"])
    np.testing.assert_array_equal(loaded.actions, student.actions)


def test_the_planner_takes_the_students_move_where_it_keeps_a_win():
    """accept_student: the FreeCell planner labels the student's positions with the student's own move
    where that keeps as short a win, and the labels stay legal."""
    kwargs = {**KWARGS, "max_episode_steps": 60}
    venv = make_sb3_vec_env("FreeCell-v0", n_envs=1, **kwargs)
    model = MaskablePPO(MoveScorerPolicy, venv, device="cpu", seed=0, policy_kwargs={"dim": 16, "hidden": 32})
    deals = range(3_000_000, 3_000_003)
    plain = imitation.play("FreeCell-v0", deals, kwargs, n_envs=3, teacher="plan:1x500", policy=model.policy, beta=0.0)
    taking = imitation.play("FreeCell-v0", deals, kwargs, n_envs=3, teacher="plan:1x500", policy=model.policy, beta=0.0,
                            accept_student=True)
    assert taking.stats["student_labels"] > 0 and "student_labels" not in plain.stats
    assert taking.masks[np.arange(len(taking)), taking.actions].all()
    # The student plays the same games either way (beta 0); some labels change (the student's moves taken,
    # and the planner's moves after them, which follow the win it found after the student's move).
    np.testing.assert_array_equal(taking.obs["cards"], plain.obs["cards"])
    assert (taking.actions != plain.actions).any()
    with pytest.raises(ValueError, match="accept_student needs a student policy and a teacher that judges"):
        imitation.play("FreeCell-v0", deals, kwargs, teacher="search:1x500", policy=model.policy,
                       accept_student=True)
    with pytest.raises(ValueError, match="accept_student needs a student policy"):
        imitation.play("FreeCell-v0", deals, kwargs, teacher="plan:1x500", accept_student=True)


def test_cloning_learns_the_teacher():
    venv = make_sb3_vec_env("Rainbow-v0", n_envs=1, **KWARGS)
    model = MaskablePPO(MoveScorerPolicy, venv, device="cpu", seed=0, policy_kwargs={"dim": 32, "hidden": 64})
    data = imitation.play("Rainbow-v0", range(3_000_000, 3_000_030), KWARGS, n_envs=10, teacher="heuristic")
    before = imitation.agreement(model.policy, data)
    losses = imitation.fit(model.policy, data, epochs=3, batch_size=128, seed=0)
    after = imitation.agreement(model.policy, data)
    assert after > max(before + 0.15, imitation.chance_agreement(data) + 0.3, 0.7), (before, after, losses)


def test_the_decayed_rate_moves_the_weights_less_and_each_epoch_is_reported():
    """lr_decay: the rate falls linearly to zero, so Adam (whose steps are about the rate's size) moves the
    weights about half as far as at a constant rate; on_epoch sees each pass end in evaluation mode."""
    venv = make_sb3_vec_env("Rainbow-v0", n_envs=1, **KWARGS)
    data = imitation.play("Rainbow-v0", range(3_000_000, 3_000_010), KWARGS, n_envs=5, teacher="heuristic")
    moved, seen = {}, []
    for decay in (False, True):
        model = MaskablePPO(MoveScorerPolicy, venv, device="cpu", seed=0, policy_kwargs={"dim": 16, "hidden": 32})
        start = torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach().clone()
        imitation.fit(model.policy, data, epochs=2, batch_size=64, seed=0, lr_decay=decay,
                      on_epoch=lambda e, p=model.policy: seen.append((e, p.training)))
        end = torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach()
        moved[decay] = float((end - start).abs().sum())
        assert not model.policy.training
    assert seen == [(0, False), (1, False)] * 2
    assert 0.3 * moved[False] < moved[True] < 0.75 * moved[False], moved


def test_bad_arguments():
    with pytest.raises(ValueError, match="needs a teacher, a policy or both"):
        imitation.play("Rainbow-v0", DEALS)
    with pytest.raises(ValueError, match="beta must be in"):
        imitation.play("Rainbow-v0", DEALS, teacher="heuristic", beta=2.0)
    with pytest.raises(ValueError, match="unknown env id"):
        imitation.play("Spider-v0", DEALS, teacher="heuristic")
