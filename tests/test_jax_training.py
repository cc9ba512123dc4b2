"""``backend: jax`` training configs (solitaire_env/tools/jax_training.py) and JAX policies played by the
ordinary env (agents/jax_policy.py): config checks, a run directory, resume, ``solitaire-env evaluate``."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

from solitaire_env import jax as sj  # noqa: E402
from solitaire_env.agents import make_agent  # noqa: E402
from solitaire_env.agents.jax_policy import JaxPolicyAgent, init_params, load_policy, make_network, save_policy  # noqa: E402
from solitaire_env.tools import cli  # noqa: E402
from solitaire_env.tools.config import ConfigError, load_config  # noqa: E402
from solitaire_env.tools.evaluation import evaluate  # noqa: E402
from solitaire_env.tools.jax_ppo import PPOSettings, make_evaluate  # noqa: E402
from solitaire_env.tools.training import train  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "configs" / "quick.yaml"
# A run of a few seconds: 4 games x 16 steps an update, a tiny network, 4 validation deals.
TINY = ["backend=jax", "n_envs=4", "hyperparams.n_steps=16", "hyperparams.batch_size=32", "hyperparams.n_epochs=1",
        "policy_kwargs.features_dim=16", "policy_kwargs.net_arch=[8]", "eval.freq=64", "eval.episodes=4",
        "checkpoint_freq=64"]


def tiny(steps: int, *extra: str):
    return load_config(QUICK, [*TINY, f"total_timesteps={steps}", *extra])


def test_settings_default_to_maskable_ppo_s():
    """A config that leaves a hyperparameter out trains the same on both backends."""
    sb3 = pytest.importorskip("sb3_contrib")
    defaults = inspect.signature(sb3.MaskablePPO.__init__).parameters
    ours = PPOSettings()
    for name in ("n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "gae_lambda", "clip_range",
                 "ent_coef", "vf_coef", "max_grad_norm"):
        assert getattr(ours, name) == defaults[name].default, name


@pytest.mark.parametrize(("override", "words"), [
    ("backend=torch", "backend must be one of sb3, jax"),
    ("policy=MlpPolicy;policy_kwargs=null", "set policy: CardCodesPolicy"),
    ("env_kwargs.no_revisit=true", "no env_kwargs.no_revisit"),
    ("hyperparams.target_kl=0.01", "no hyperparams.target_kl"),
    ("hyperparams.batch_size=500", "must be a multiple of batch_size (500)"),
    ("hyperparams.learning_rate=fast", "hyperparams.learning_rate must be a non-negative number"),
    ("deals=20000:30000", "set deals: train"),
    ("policy_kwargs.net_arch={pi: [8], vf: [8]}", "one list of layer sizes"),
    ("pretrain={agent: heuristic}", "no pretrain"),
])
def test_a_config_the_jax_backend_cannot_train_is_refused(override, words):
    backend = [] if override.startswith("backend") else ["backend=jax"]
    with pytest.raises(ConfigError, match="--set") as err:
        load_config(QUICK, [*backend, *override.split(";")])
    assert words in str(err.value)


def test_the_quick_recipe_reads_on_the_jax_backend():
    config = load_config(QUICK, ["backend=jax"])
    from solitaire_env.tools.jax_training import network_of, settings_of

    settings, net = settings_of(config), network_of(config)
    assert (settings.n_envs, settings.n_steps, settings.batch_size, settings.n_epochs) == (16, 128, 512, 4)
    assert (settings.minibatches, settings.ent_coef) == (4, 0.01)
    assert (net.features_dim, net.net_arch) == (256, (128,))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("jax_run") / "run"
    code = cli.main(["train", str(QUICK), *[f"--set={o}" for o in TINY], "--timesteps", "128", "--output",
                     str(out), "--no-progress"])
    assert code == 0
    return out


def test_a_run_writes_the_run_directory(run: Path):
    for name in ("config.yaml", "summary.json", "evaluations.npz", "best_model.msgpack", "final_model.msgpack",
                 "learning_curve.png", "checkpoints/ppo_64_steps.msgpack", "checkpoints/ppo_128_steps.msgpack"):
        assert (run / name).is_file(), name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["backend"] == "jax" and summary["timesteps"] == 128
    assert "random shuffles" in summary["deals"]["train"] and "10000-10003" in summary["deals"]["validation"]
    log = np.load(run / "evaluations.npz")
    assert log["timesteps"].tolist() == [64, 128]
    assert log["results"].shape == log["foundation_cards"].shape == (2, 4)
    assert ((log["foundation_cards"] >= 1) & (log["foundation_cards"] <= 52)).all()
    net, _, meta = load_policy(run / "best_model.msgpack")
    assert meta["env_id"] == "Rainbow-v0" and meta["env_kwargs"] == {"reveal_bonus": 0.0}
    assert (net.features_dim, net.net_arch) == (16, (8,))


def _params(path: Path) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(load_policy(path)[1])]


def test_a_resumed_run_trains_exactly_as_the_uninterrupted_one(run: Path, tmp_path: Path):
    out = tmp_path / "pieces"
    train(tiny(64), output_dir=out, progress=False)
    train(tiny(128), output_dir=out, progress=False, resume=True)
    for ours, theirs in zip(_params(out / "final_model.msgpack"), _params(run / "final_model.msgpack"), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    log, whole = np.load(out / "evaluations.npz"), np.load(run / "evaluations.npz")
    np.testing.assert_array_equal(log["results"], whole["results"])
    assert json.loads((out / "summary.json").read_text())["resumed_from_timesteps"] == 64


def test_the_ordinary_env_plays_the_policy_as_the_jax_evaluation_does(run: Path):
    """``solitaire-env evaluate``'s agent on the numba env, greedy, reaches the foundation cards the training's
    compiled evaluation reaches on the JAX env, deal for deal."""
    net, params, _ = load_policy(run / "final_model.msgpack")
    env = sj.make("Rainbow-v0")
    deals = list(range(10_000, 10_006))
    cards = np.asarray(make_evaluate(env, net)(params, env.init_deal(deals), jax.random.key(0))[0])
    agent = make_agent(str(run), "Rainbow-v0", seed=0)
    assert isinstance(agent, JaxPolicyAgent) and agent.checkpoint.endswith("best_model.msgpack")
    agent = make_agent(str(run / "final_model.msgpack"), "Rainbow-v0", seed=0)
    result = evaluate("Rainbow-v0", {"jax": agent}, episodes=len(deals), seed=deals[0])
    assert [r.foundation_cards for r in result.records] == cards.tolist()
    # One at a time (act) plays as the batch does (act_batch).
    assert agent.batched
    one = evaluate("Rainbow-v0", {"jax": _Unbatched(agent)}, episodes=3, seed=deals[0])
    assert [r.foundation_cards for r in one.records] == cards[:3].tolist()


class _Unbatched(JaxPolicyAgent):
    """The same policy through act alone."""

    def __init__(self, agent: JaxPolicyAgent) -> None:
        self.__dict__.update(agent.__dict__)

    @property
    def batched(self) -> bool:
        return False


def test_a_sampled_policy_is_legal_and_reproducible(run: Path):
    agent = make_agent("sample:" + str(run / "final_model.msgpack"), "Rainbow-v0", seed=0)
    assert not agent.batched
    first = evaluate("Rainbow-v0", {"s": agent}, episodes=3, seed=10_000)
    again = evaluate("Rainbow-v0", {"s": agent}, episodes=3, seed=10_000)
    assert [r.length for r in first.records] == [r.length for r in again.records]
    assert [r.foundation_cards for r in first.records] == [r.foundation_cards for r in again.records]


def test_a_bad_policy_file_gets_a_clear_error(tmp_path: Path):
    bad = tmp_path / "bad.msgpack"
    bad.write_bytes(b"not msgpack at all")
    with pytest.raises(ValueError, match="bad.msgpack.*damaged or not one"):
        make_agent(str(bad), "Rainbow-v0")
    net = make_network("NumberTen-v0", features_dim=8, net_arch=[4])
    other = tmp_path / "number_ten.msgpack"
    save_policy(other, init_params(net, jax.random.key(0)), "NumberTen-v0", net, {})
    with pytest.raises(ValueError, match="trained on NumberTen-v0, not Rainbow-v0"):
        make_agent(str(other), "Rainbow-v0")
    with pytest.raises(FileNotFoundError, match="checkpoint not found"):
        make_agent(str(tmp_path / "missing.msgpack"), "Rainbow-v0")


def _logits_task(agent: JaxPolicyAgent, n: int) -> list[float]:
    obs, masks = np.zeros((n, len(agent.net.nvec)), np.int16), np.ones((n, agent.net.n_actions), bool)
    return agent.logits(obs, masks)[0].tolist()


def test_a_jax_policy_plays_the_same_in_worker_processes(run: Path):
    """Pickled (as --ray sends it) the agent computes as before; and --jobs workers, which start fresh from a
    fork server once JAX runs here (a fork of JAX's threads hung), compute the same."""
    import pickle

    from solitaire_env.parallel import Backend, run_tasks

    agent = make_agent(str(run / "final_model.msgpack"), "Rainbow-v0", seed=0)
    expected = _logits_task(agent, 1)
    assert _logits_task(pickle.loads(pickle.dumps(agent)), 1) == expected
    results = dict(run_tasks(_logits_task, [1, 1, 1], context=agent, backend=Backend(jobs=2)))
    assert results == {0: expected, 1: expected, 2: expected}
