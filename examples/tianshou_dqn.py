"""Masked double DQN with Tianshou 2 on Rainbow, through the adapter ``for_tianshou``.

Run: pip install tianshou          (tested with 2.0.1)
     python examples/tianshou_dqn.py                      (100k steps: a few minutes on 2 CPU cores)
     SOLITAIRE_ENV_STEPS=2000 python examples/tianshou_dqn.py --eval-episodes 10   (a smoke test)

``for_tianshou`` puts the legal moves in the observation as ``obs.mask``; Tianshou's DQN policy reads it
and never picks (nor bootstraps from) an illegal move. The greedy policy plays validation deals before
and after training; the script prints steps per second, mean foundation cards and win rate.
Measured figures: docs/libraries.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import TorchOptimizerFactory
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode
from torch import nn

from solitaire_env.envs.wrappers import for_tianshou


@dataclass
class Args:
    env_id: str = "Rainbow-v0"
    """the game"""
    seed: int = 0
    """seed of torch, numpy and the training deals"""
    total_timesteps: int = 100_000
    """env steps in all (the SOLITAIRE_ENV_STEPS env var overrides it)"""
    num_envs: int = 8
    """single envs in Tianshou's DummyVectorEnv"""
    buffer_size: int = 100_000
    """replay buffer transitions"""
    learning_rate: float = 5e-4
    """Adam's learning rate"""
    gamma: float = 0.99
    """discount factor"""
    n_step: int = 3
    """n-step returns"""
    target_update_freq: int = 500
    """gradient steps between target network copies"""
    batch_size: int = 128
    """transitions per gradient step"""
    collect_steps: int = 256
    """env steps collected between updates"""
    updates_per_step: float = 0.25
    """gradient steps per collected env step"""
    eps_start: float = 1.0
    """epsilon of the exploration at the start"""
    eps_end: float = 0.05
    """epsilon after the decay"""
    eps_fraction: float = 0.4
    """fraction of the budget over which epsilon decays linearly"""
    embed_dim: int = 128
    """width of the card embedding (its gradient is dense: its size sets the cost of a gradient step)"""
    hidden_dim: int = 128
    """hidden layer of the Q head"""
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


class QNet(nn.Module):
    """Card embedding of the int codes (one-hot times a matrix, as a lookup), then an MLP to Q-values."""

    def __init__(self, nvec: np.ndarray, n_actions: int, embed_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.register_buffer("offsets", torch.as_tensor(np.concatenate(([0], np.cumsum(nvec)[:-1]))))
        self.embed = nn.EmbeddingBag(int(nvec.sum()), embed_dim, mode="sum")
        # Initialized as nn.Linear over the one-hot would be (uniform, 1 / sqrt(fan-in)). The embedding's
        # default N(0, 1) rows, summed over ~300 entries, give features of std 16 and Q-values of about 3
        # where the returns are below 1: the TD targets chased that noise, and 100k steps learned nothing.
        bound = 1.0 / np.sqrt(float(nvec.sum()))
        nn.init.uniform_(self.embed.weight, -bound, bound)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(embed_dim, hidden_dim), nn.ReLU(),
                                  nn.Linear(hidden_dim, n_actions))

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        codes = torch.as_tensor(np.asarray(obs), dtype=torch.long)
        return self.head(self.embed(codes + self.offsets)), state


def evaluate(policy: DiscreteQLearningPolicy, args: Args) -> tuple[float, float]:
    """Greedy play of validation deals 10,000 .. 10,000 + eval_episodes - 1: mean foundation cards, win rate."""
    envs = [for_tianshou(args.env_id, deals="validation") for _ in range(args.eval_episodes)]
    obs = [env.reset(seed=i)[0] for i, env in enumerate(envs)]  # env i plays validation deal i
    found, won = np.zeros(len(envs)), np.zeros(len(envs), dtype=bool)
    running = list(range(len(envs)))
    with torch.no_grad(), torch_train_mode(policy, False):
        while running:
            batch = Batch(obs=Batch(obs=np.stack([obs[i]["obs"] for i in running]),
                                    mask=np.stack([obs[i]["mask"] for i in running])), info=Batch())
            acts = policy(batch).act
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
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small network, small batches

    train_envs = DummyVectorEnv([lambda: for_tianshou(args.env_id, deals="train") for _ in range(args.num_envs)])
    train_envs.seed(args.seed)
    probe = gym.make(args.env_id)
    nvec = np.asarray(probe.observation_space.nvec, dtype=np.int64)
    net = QNet(nvec, int(probe.action_space.n), args.embed_dim, args.hidden_dim)
    policy = DiscreteQLearningPolicy(model=net, action_space=probe.action_space, eps_training=args.eps_start)
    # Adam's fused kernel: one pass over the embedding's millions of weights instead of several (10x faster here).
    optim = TorchOptimizerFactory(torch.optim.Adam, lr=args.learning_rate, fused=True)
    algorithm = DQN(policy=policy, optim=optim, gamma=args.gamma,
                    n_step_return_horizon=args.n_step, target_update_freq=args.target_update_freq)
    if args.eval_episodes:
        cards, wins = evaluate(policy, args)
        print(f"before training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")

    collector = Collector(algorithm, train_envs, VectorReplayBuffer(args.buffer_size, args.num_envs),
                          exploration_noise=True)
    collector.reset()
    steps, updates, start, returns = 0, 0.0, time.time(), []
    while steps < args.total_timesteps:
        frac = min(1.0, steps / (args.eps_fraction * args.total_timesteps))
        policy.set_eps_training(args.eps_start + frac * (args.eps_end - args.eps_start))
        with policy_within_training_step(policy), torch_train_mode(policy, False):
            stats = collector.collect(n_step=args.collect_steps)
        steps += stats.n_collected_steps
        returns.extend(stats.returns.tolist())
        if len(collector.buffer) >= args.batch_size:
            updates += stats.n_collected_steps * args.updates_per_step
            with policy_within_training_step(policy), torch_train_mode(policy):
                while updates >= 1:
                    algorithm.update(buffer=collector.buffer, sample_size=args.batch_size)
                    updates -= 1
        if steps // 10_240 != (steps - stats.n_collected_steps) // 10_240 or steps >= args.total_timesteps:
            mean_return = f"{np.mean(returns):.3f}" if returns else "-"
            print(f"step {steps:>8}  steps/s {steps / (time.time() - start):>6.0f}  eps {policy.eps_training:.3f}  "
                  f"mean return (train episodes) {mean_return}  ({len(returns)} episodes)", flush=True)
            returns = []

    seconds = time.time() - start
    print(f"trained {steps} steps in {seconds:.0f} s: {steps / seconds:.0f} steps/s")
    if args.eval_episodes:
        cards, wins = evaluate(policy, args)
        print(f"after training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")
