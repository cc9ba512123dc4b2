"""The adapters of solitaire_env.envs.wrappers against the real RLlib, Tianshou and TorchRL.

Per library: a masked rollout with zero illegal actions, and one training iteration. Needs the
``integrations`` extra (``.ci/setup-integrations`` makes CI's venv for it); each test skips without its
library. The adapter tests take the mask from the observation only, never from the env's info keys.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the ids)
from solitaire_env.envs.wrappers import MaskInObservation, for_rllib, for_tianshou, for_torchrl

pytestmark = pytest.mark.integrations

ENV_ID = "Rainbow-v0"
STEPS = 300
EXTRA = "needs the integrations extra: pip install -e '.[integrations]' (see .ci/setup-integrations)"


# --- the wrapper itself (no library needed) ------------------------------------------------------

def test_mask_in_observation_matches_the_env() -> None:
    """Step the wrapped env and a plain twin alike: the same observation (cast) and the twin's mask."""
    env = MaskInObservation(gym.make(ENV_ID), "obs", "mask", obs_dtype=np.float32, mask_dtype=np.float32)
    twin = gym.make(ENV_ID)
    (obs, _), (plain, info) = env.reset(seed=3), twin.reset(seed=3)
    for _ in range(60):
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(obs["obs"], plain.astype(np.float32))
        np.testing.assert_array_equal(obs["mask"], info["action_mask"])
        action = int(np.flatnonzero(obs["mask"])[-1])
        obs, _, terminated, truncated, _ = env.step(action)
        plain, _, done, cut, info = twin.step(action)
        assert (terminated, truncated) == (done, cut)
        if terminated or truncated:
            (obs, _), (plain, info) = env.reset(seed=4), twin.reset(seed=4)


def test_adapter_spaces() -> None:
    rllib = for_rllib(ENV_ID).observation_space
    assert set(rllib) == {"observations", "action_mask"}
    assert rllib["observations"].dtype == np.float32 and rllib["action_mask"].dtype == np.float32
    assert for_tianshou(ENV_ID).observation_space["mask"].dtype == np.bool_
    assert set(for_torchrl(ENV_ID, obs_mode="onehot").observation_space) == {"observation", "action_mask"}
    with pytest.raises(ValueError, match="obs_mode='codes' or 'onehot'"):
        for_rllib(ENV_ID, obs_mode="dict")
    with pytest.raises(ValueError, match="must differ"):
        MaskInObservation(gym.make(ENV_ID), "x", "x")


# --- RLlib (new API stack, local env runner, no cluster) ----------------------------------------

@pytest.fixture(scope="module")
def ppo_algo():
    pytest.importorskip("ray.rllib.algorithms.ppo", reason=EXTRA)
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    register_env("solitaire_rllib", lambda cfg: for_rllib(ENV_ID, **cfg))
    config = (
        PPOConfig()
        .environment("solitaire_rllib", env_config={})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1, rollout_fragment_length=64)
        .learners(num_learners=0)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                               model_config={"fcnet_hiddens": [32], "head_fcnet_hiddens": [32]}))
        .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    yield algo
    algo.stop()
    ray.shutdown()


def test_rllib_masked_rollout(ppo_algo) -> None:
    episodes = ppo_algo.env_runner.sample(num_timesteps=STEPS, explore=True)
    steps = illegal = 0
    for episode in episodes:
        masks = episode.get_observations()["action_mask"]
        for i, action in enumerate(episode.get_actions()):
            steps += 1
            illegal += masks[i][action] == 0
    assert steps >= STEPS and illegal == 0


def test_rllib_ppo_trains_one_iteration(ppo_algo) -> None:
    result = ppo_algo.train()
    assert result["training_iteration"] == 1
    assert np.isfinite(result["learners"]["default_policy"]["total_loss"])


# --- Tianshou 2 (DQN over a DummyVectorEnv) ------------------------------------------------------

def test_tianshou_dqn_masked_rollout_and_training() -> None:
    pytest.importorskip("tianshou", reason=EXTRA)
    import torch
    from tianshou.algorithm.modelfree.dqn import DQN, DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    torch.manual_seed(0)
    envs = DummyVectorEnv([lambda: for_tianshou(ENV_ID) for _ in range(2)])
    envs.seed(0)
    env = for_tianshou(ENV_ID)
    net = Net(state_shape=env.observation_space["obs"].shape, action_shape=env.action_space.n, hidden_sizes=[32])
    # eps 0.5: half the moves are Tianshou's masked random exploration, half the masked argmax.
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                     observation_space=env.observation_space, eps_training=0.5)
    algo = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3))
    buffer = VectorReplayBuffer(2 * STEPS, len(envs))
    collector = Collector(algo, envs, buffer, exploration_noise=True)
    collector.reset()
    assert collector.collect(n_step=STEPS).n_collected_steps == STEPS
    batch, _ = buffer.sample(0)  # all of it
    assert len(batch) == STEPS
    assert batch.obs.mask[np.arange(len(batch)), batch.act].all()

    before = [p.detach().clone() for p in net.parameters()]
    stats = algo.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=20, collection_step_num_env_steps=10,
        batch_size=16, test_in_training=False, show_progress=False, verbose=False))
    assert stats.update_step > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))
    envs.close()


# --- TorchRL (GymWrapper + ActionMask; GymEnv's AsyncVectorEnv; the native vector env) --------

def _masked_torchrl_env():
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.envs.transforms import ActionMask

    return TransformedEnv(GymWrapper(for_torchrl(ENV_ID), categorical_action_encoding=True), ActionMask())


def _illegal(td) -> int:
    return int((~td["action_mask"].gather(-1, td["action"].unsqueeze(-1))).sum())


def test_torchrl_masked_rollout_and_specs() -> None:
    pytest.importorskip("torchrl", reason=EXTRA)
    from torchrl.envs import check_env_specs

    env = _masked_torchrl_env()
    check_env_specs(env, seed=0)
    td = env.rollout(STEPS, break_when_any_done=False)  # random actions, drawn from the masked action spec
    assert td.batch_size == (STEPS,) and _illegal(td) == 0


def test_torchrl_ppo_loss_backward() -> None:
    pytest.importorskip("torchrl", reason=EXTRA)
    import torch
    from tensordict.nn import TensorDictModule
    from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    torch.manual_seed(0)
    env = _masked_torchrl_env()
    n_obs, n_actions = env.observation_spec["observation"].shape[-1], env.action_spec.space.n

    class Float(torch.nn.Module):  # the card codes are int16: cast them, as Tianshou's Net does
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.float()

    def mlp(n_out: int) -> torch.nn.Module:
        return torch.nn.Sequential(Float(), torch.nn.Linear(n_obs, 32), torch.nn.Tanh(), torch.nn.Linear(32, n_out))

    actor = ProbabilisticActor(
        TensorDictModule(mlp(n_actions), in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"], spec=env.action_spec,
        distribution_class=MaskedCategorical, return_log_prob=True)
    value = ValueOperator(mlp(1), in_keys=["observation"])
    with torch.no_grad():  # collecting, as a collector does
        td = env.rollout(64, actor, break_when_any_done=False)
        GAE(gamma=0.99, lmbda=0.95, value_network=value)(td)
    assert _illegal(td) == 0
    losses = ClipPPOLoss(actor, value)(td)
    total = sum(losses[key] for key in losses.keys() if key.startswith("loss_"))
    total.backward()
    grads = [p.grad for p in actor.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads) and any(g.abs().sum() > 0 for g in grads)


@pytest.mark.parametrize("obs_mode", ["codes", "dict"])
def test_torchrl_gym_env_async_vector(obs_mode: str) -> None:
    """The issue's recipe: ``GymEnv("solitaire_env:Rainbow-v0", num_envs=4)``, an AsyncVectorEnv.

    TorchRL stacks the sub-envs' infos into its specs, so this needs the same info keys and dtypes on
    every reset and step (before, ``deal_seed`` on resets only failed at the first autoreset)."""
    pytest.importorskip("torchrl", reason=EXTRA)
    from torchrl.envs import GymEnv, check_env_specs

    # Episodes of 10 steps, so the 30-step rollout crosses Gymnasium's autoresets.
    env = GymEnv(f"solitaire_env:{ENV_ID}", num_envs=4, obs_mode=obs_mode, max_episode_steps=10)
    try:
        check_env_specs(env, seed=0)
        td = env.rollout(30, break_when_any_done=False)
        assert td.batch_size == (4, 30) and td["next", "truncated"].any()
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["SAME_STEP", "DISABLED"])
def test_torchrl_native_vector_env(mode: str) -> None:
    """The batched env itself under ``GymWrapper`` (which takes SAME_STEP or DISABLED autoresets), masked:
    its ``dict`` observation holds the int8 ``action_mask``, cast to the bool that ``ActionMask`` reads."""
    pytest.importorskip("torchrl", reason=EXTRA)
    import torch
    from gymnasium.vector import AutoresetMode
    from torchrl.envs import Compose, GymWrapper, TransformedEnv, check_env_specs
    from torchrl.envs.transforms import ActionMask, DTypeCastTransform

    venv = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", obs_mode="dict",
                        autoreset_mode=AutoresetMode[mode], max_episode_steps=10)
    # GymWrapper gives a TransformedEnv for SAME_STEP; auto_unwrap adds ours to its transforms.
    env = TransformedEnv(GymWrapper(venv, categorical_action_encoding=True),
                         Compose(DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]), ActionMask()),
                         auto_unwrap=True)
    check_env_specs(env, seed=0)
    td = env.rollout(30, break_when_any_done=False)  # 10-step episodes: it crosses resets
    assert td.batch_size == (4, 30) and td["next", "truncated"].any()
    assert _illegal(td) == 0
