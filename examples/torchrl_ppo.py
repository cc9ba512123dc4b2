"""Masked PPO with TorchRL on Rainbow, through the adapter ``for_torchrl``.

Run: pip install torchrl            (tested with 0.14.1, tensordict 0.14.3)
     python examples/torchrl_ppo.py                       (41k steps: about 2 minutes on 2 CPU cores)
     SOLITAIRE_ENV_STEPS=1024 python examples/torchrl_ppo.py --eval-episodes 10   (a smoke test)

``for_torchrl`` puts the legal moves in the observation as ``action_mask``; TorchRL's ``ActionMask``
transform masks the action spec with it and the policy samples from a ``MaskedCategorical`` over the
same key. The greedy policy plays validation deals before and after training; the script prints steps
per second, mean foundation cards and win rate. Measured figures: docs/libraries.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
from torchrl.envs import ActionMask, ExplorationType, GymWrapper, SerialEnv, TransformedEnv, set_exploration_type
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from solitaire_env.envs.wrappers import for_torchrl


@dataclass
class Args:
    env_id: str = "Rainbow-v0"
    """the game"""
    seed: int = 0
    """seed of torch and the training deals"""
    total_timesteps: int = 40_960
    """env steps in all (the SOLITAIRE_ENV_STEPS env var overrides it)"""
    num_envs: int = 8
    """single envs in TorchRL's SerialEnv"""
    num_steps: int = 128
    """steps per env in each rollout"""
    learning_rate: float = 3e-4
    """Adam's learning rate"""
    gamma: float = 0.99
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """passes over each rollout"""
    clip_coef: float = 0.2
    """PPO's clipping of the probability ratio"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    max_grad_norm: float = 0.5
    """gradient norm clipping"""
    embed_dim: int = 256
    """width of the card embedding"""
    hidden_dim: int = 128
    """hidden layer of the policy and value heads"""
    eval_episodes: int = 200
    """greedy episodes on validation deals (10,000, 10,001, ...) before and after training; 0: none"""


TYPES = {"int": int, "float": float, "str": str}


def parse_args() -> Args:
    """Command-line flags from the fields of Args (``--total-timesteps 50000``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument("--" + f.name.replace("_", "-"), type=TYPES[str(f.type)], default=f.default)
    args = Args(**vars(parser.parse_args()))
    if os.environ.get("SOLITAIRE_ENV_STEPS"):
        args.total_timesteps = int(os.environ["SOLITAIRE_ENV_STEPS"])
    return args


class CardNet(nn.Module):
    """Card embedding of the int codes (one-hot times a matrix, as a lookup), then an MLP."""

    def __init__(self, nvec: np.ndarray, out_dim: int, embed_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.register_buffer("offsets", torch.as_tensor(np.concatenate(([0], np.cumsum(nvec)[:-1]))))
        self.embed = nn.EmbeddingBag(int(nvec.sum()), embed_dim, mode="sum")
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(embed_dim, hidden_dim), nn.Tanh(),
                                  nn.Linear(hidden_dim, out_dim))

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        flat = codes.long().reshape(-1, codes.shape[-1])  # the collector's batches may have two batch dims
        return self.head(self.embed(flat + self.offsets)).reshape(*codes.shape[:-1], -1)


def make_env(env_id: str, **kwargs: object) -> TransformedEnv:
    return TransformedEnv(GymWrapper(for_torchrl(env_id, **kwargs), categorical_action_encoding=True), ActionMask())


def evaluate(actor: ProbabilisticActor, args: Args) -> tuple[float, float]:
    """Greedy play of validation deals 10,000 .. 10,000 + eval_episodes - 1: mean foundation cards, win rate."""
    envs = [for_torchrl(args.env_id, deals="validation") for _ in range(args.eval_episodes)]
    obs = [env.reset(seed=i)[0] for i, env in enumerate(envs)]  # env i plays validation deal i
    found, won = np.zeros(len(envs)), np.zeros(len(envs), dtype=bool)
    running = list(range(len(envs)))
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        while running:
            td = TensorDict({"observation": torch.as_tensor(np.stack([obs[i]["observation"] for i in running])),
                             "action_mask": torch.as_tensor(np.stack([obs[i]["action_mask"] for i in running]))},
                            batch_size=[len(running)])
            acts = actor(td)["action"].tolist()
            still = []
            for i, a in zip(running, acts, strict=True):
                obs[i], _, terminated, truncated, info = envs[i].step(int(a))
                if terminated or truncated:
                    found[i], won[i] = info["foundation_cards"], info["is_won"]
                else:
                    still.append(i)
            running = still
    return float(found.mean()), float(won.mean())


if __name__ == "__main__":
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small network, small batches
    frames_per_batch = args.num_envs * args.num_steps

    env = SerialEnv(args.num_envs, lambda: make_env(args.env_id, deals="train"))
    env.set_seed(args.seed)
    probe = gym.make(args.env_id)
    nvec, n_actions = np.asarray(probe.observation_space.nvec, dtype=np.int64), int(probe.action_space.n)
    policy_net = TensorDictModule(CardNet(nvec, n_actions, args.embed_dim, args.hidden_dim),
                                  in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(policy_net, in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True, spec=env.action_spec)
    critic = ValueOperator(CardNet(nvec, 1, args.embed_dim, args.hidden_dim), in_keys=["observation"])
    if args.eval_episodes:
        cards, wins = evaluate(actor, args)
        print(f"before training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")

    collector = Collector(env, actor, frames_per_batch=frames_per_batch,
                                  total_frames=max(args.total_timesteps, frames_per_batch))
    advantage = GAE(gamma=args.gamma, lmbda=args.gae_lambda, value_network=critic, average_gae=True)
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=args.clip_coef, entropy_coeff=args.ent_coef)
    # Adam's fused kernel: one pass over the embeddings' millions of weights instead of several.
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=args.learning_rate, fused=True)
    buffer = ReplayBuffer(storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement(),
                          batch_size=frames_per_batch // args.num_minibatches)

    steps, start, rewards = 0, time.time(), []
    for i, data in enumerate(collector):
        steps += data.numel()
        with torch.no_grad():
            advantage(data)
        rewards.append(float(data["next", "reward"].sum()) / data.numel())
        buffer.extend(data.reshape(-1))
        for _ in range(args.update_epochs):
            for _ in range(args.num_minibatches):
                losses = loss_module(buffer.sample())
                loss = sum(v for k, v in losses.items() if k.startswith("loss_"))
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), args.max_grad_norm)
                optimizer.step()
        collector.update_policy_weights_()
        if (i + 1) % 10 == 0 or steps >= args.total_timesteps:
            print(f"step {steps:>8}  steps/s {steps / (time.time() - start):>6.0f}  "
                  f"mean reward per step {np.mean(rewards):.4f}", flush=True)
            rewards = []
    collector.shutdown()

    seconds = time.time() - start
    print(f"trained {steps} steps in {seconds:.0f} s: {steps / seconds:.0f} steps/s")
    if args.eval_episodes:
        cards, wins = evaluate(actor, args)
        print(f"after training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")
