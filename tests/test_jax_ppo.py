"""The JAX backend's PPO (solitaire_env/tools/jax_ppo.py): examples/jax_ppo.py end to end on a tiny budget (under
``-m slow``; its default-run twin checks the example's flags and imports), and the parts (rollout, autoreset,
GAE, evaluation) on their own."""

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
from solitaire_env.agents.jax_policy import init_params, load_policy, make_network  # noqa: E402
from solitaire_env.tools import jax_ppo  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

REPORT = r"{} training: validation mean foundation cards ([\d.]+), win rate ([\d.]+) \((\d+) deals\)"


def test_the_jax_example_parses_its_flags_and_calls_what_the_package_has() -> None:
    """The default run's twin of the slow test below (whose cost is compiling the programs that
    test_jax_training.py's run compiles too: the same start, update, evaluation and save): the example's
    flags parse, and every name it imports from the package exists."""
    import ast
    import importlib
    import runpy

    path = ROOT / "examples" / "jax_ppo.py"
    tree = ast.parse(path.read_text())
    imported = [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module.startswith("solitaire_env") for alias in node.names]
    assert {name for _, name in imported} >= {"make_update", "make_evaluate", "start", "save_policy"}
    for module, name in imported:
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"
    example = runpy.run_path(str(path))  # defines, runs nothing (its main is under __name__ == "__main__")
    args = example["parse_args"](["--n-envs", "8", "--n-steps", "32", "--eval-episodes", "4", "--save", "p.msgpack"])
    assert (args.n_envs, args.n_steps, args.eval_episodes, args.save) == (8, 32, 4, "p.msgpack")
    assert example["parse_args"]([]).env_id == "Rainbow-v0"


@pytest.mark.slow
def test_jax_ppo_trains_and_reports(tmp_path: Path) -> None:
    """examples/jax_ppo.py end to end on a tiny budget."""
    steps = 2048
    env = {**os.environ, "SOLITAIRE_ENV_STEPS": str(steps),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    args = ["--n-envs", "8", "--n-steps", "32", "--eval-episodes", "4", "--save", str(tmp_path / "policy.msgpack")]
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
    net, _, meta = load_policy(tmp_path / "policy.msgpack")
    assert meta["env_id"] == "Rainbow-v0" and net.net_arch == (128,)


def _docs_loop() -> str:
    """docs/jax.md's few-line training loop, at the sizes of the test above."""
    text = (ROOT / "docs" / "jax.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    (loop,) = [b for b in blocks if "make_update" in b]
    small = {"n_envs=16, n_steps=128, batch_size=512": "n_envs=8, n_steps=32, batch_size=64",
             "range(150)": "range(2)", "np.arange(10_000, 10_200)": "np.arange(10_000, 10_004)"}
    for big, little in small.items():
        assert big in loop, big
        loop = loop.replace(big, little)
    return loop


def test_the_jax_docs_loop_is_python_calling_what_the_package_has() -> None:
    """The default run's twin of the slow test below (whose cost is compiling the update programs the test
    above compiles): the loop parses, and every name it imports from the package exists."""
    import ast
    import importlib

    tree = ast.parse(_docs_loop())
    imported = [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module.startswith("solitaire_env") for alias in node.names]
    assert imported
    for module, name in imported:
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


@pytest.mark.slow
def test_the_jax_docs_loop_trains_and_saves(tmp_path: Path) -> None:
    """docs/jax.md's loop runs as written, at small sizes, and saves a policy."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    loop = _docs_loop()
    done = subprocess.run([sys.executable, "-c", loop], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "validation win rate" in done.stdout
    assert load_policy(tmp_path / "policy.msgpack")[2]["env_id"] == "Rainbow-v0"


def test_rollout_samples_legal_moves_and_resets_finished_games() -> None:
    """Over a rollout every sampled action of a running game is legal, and a game cut by the time limit
    (5 steps here) ends that transition and is replaced by a fresh deal, so it ends again 5 steps on."""
    settings = jax_ppo.PPOSettings(n_envs=8, n_steps=40)
    env = sj.make("Rainbow-v0", max_episode_steps=5)
    net = make_network("Rainbow-v0", features_dim=16, net_arch=[8])
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(1), settings.n_envs))
    params = init_params(net, jax.random.key(2))
    _, _, traj = jax.jit(jax_ppo.make_rollout(env, net, settings))(params, state, jax.random.key(3))
    mask, action, valid = np.asarray(traj.mask), np.asarray(traj.action), np.asarray(traj.valid)
    picked = np.take_along_axis(mask, action[..., None], axis=2)[..., 0]
    assert valid.all() and picked.all()
    done = np.asarray(traj.done)
    assert done[4::5].all() and done.sum() == done[4::5].size  # no Rainbow game is lost in 5 steps here
    # Episodes ended: their foundation cards are counted (at least the deal's first card), others 0.
    cards = np.asarray(traj.cards)
    assert (cards[done] >= 1).all() and (cards[~done] == 0).all()
    # The embedding gathers max_present entries: never fewer than an observation's non-zero ones.
    assert (np.count_nonzero(np.asarray(traj.obs), axis=2) <= net.max_present).all()


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
