"""examples/jax_ppo.py: a run end to end on a tiny budget, and its parts (rollout, autoreset, GAE) on their own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

import jax.numpy as jnp  # noqa: E402

from solitaire_env import jax as sj  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import jax_ppo  # noqa: E402

REPORT = r"{} training: validation mean foundation cards ([\d.]+), win rate ([\d.]+) \((\d+) deals\)"


def test_jax_ppo_trains_and_reports(tmp_path: Path) -> None:
    steps = 2048
    env = {**os.environ, "SOLITAIRE_ENV_STEPS": str(steps),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    args = ["--num-envs", "8", "--num-steps", "32", "--eval-episodes", "4", "--save", str(tmp_path / "params.msgpack")]
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "jax_ppo.py"), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    out = done.stdout
    trained = re.search(r"^trained (\d+) steps in \d+ s: (\d+) steps/s$", out, re.MULTILINE)
    assert trained, out
    assert int(trained.group(1)) >= steps and int(trained.group(2)) > 0
    for when in ("before", "after"):
        found = re.search(REPORT.format(when), out)
        assert found, out
        cards, win_rate, n = float(found.group(1)), float(found.group(2)), int(found.group(3))
        assert n == 4 and 0.0 <= cards <= 52.0 and 0.0 <= win_rate <= 1.0
    assert (tmp_path / "params.msgpack").stat().st_size > 0


def test_rollout_samples_legal_moves_and_resets_finished_games() -> None:
    """Over a rollout every sampled action of a running game is legal, and a game cut by the time limit
    (5 steps here) ends that transition and is replaced by a fresh deal, so it ends again 5 steps on."""
    args = jax_ppo.Args(num_envs=8, num_steps=40, embed_dim=16, hidden_dim=8)
    env = sj.make("Rainbow-v0", max_episode_steps=5)
    agent = jax_ppo.make_agent(env, args)
    state = jax.vmap(env.init)(jax.random.split(jax.random.key(1), args.num_envs))
    params = agent.init(jax.random.key(2), state.observation, state.legal_action_mask)
    _, _, traj = jax.jit(jax_ppo.make_rollout(env, agent, args))(params, state, jax.random.key(3))
    mask, action, valid = np.asarray(traj.mask), np.asarray(traj.action), np.asarray(traj.valid)
    picked = np.take_along_axis(mask, action[..., None], axis=2)[..., 0]
    assert valid.all() and picked.all()
    done = np.asarray(traj.done)
    assert done[4::5].all() and done.sum() == done[4::5].size  # no Rainbow game is lost in 5 steps here
    # Episodes ended: their foundation cards are counted (at least the deal's first card), others 0.
    cards = np.asarray(traj.cards)
    assert (cards[done] >= 1).all() and (cards[~done] == 0).all()
    # The embedding gathers max_present entries: never fewer than an observation's non-zero ones.
    assert (np.count_nonzero(np.asarray(traj.obs), axis=2) <= agent.max_present).all()


def test_gae_by_hand() -> None:
    """Three steps of one game, the second ending an episode: the sum is cut there, bootstrapped at the end."""
    t = jax_ppo.Transition(
        obs=None, mask=None, action=None, logp=None, valid=None, cards=None,
        reward=jnp.array([[1.0], [0.0], [2.0]]), value=jnp.array([[0.5], [0.4], [0.3]]),
        done=jnp.array([[False], [True], [False]]),
    )
    adv, ret = jax_ppo.gae(t, jnp.array([0.2]), gamma=0.9, lam=0.8)
    expected = np.array([0.86 + 0.9 * 0.8 * -0.4, -0.4, 2 + 0.9 * 0.2 - 0.3])
    np.testing.assert_allclose(np.asarray(adv)[:, 0], expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ret)[:, 0], expected + [0.5, 0.4, 0.3], rtol=1e-6)
