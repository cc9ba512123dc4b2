"""Masked PPO with RLlib (new API stack) on Rainbow, through the adapter ``for_rllib``.

Run: pip install "ray[rllib]==2.60.*"          (tested with 2.60.0; it pins gymnasium 1.2.2)
     python examples/rllib_ppo.py                            (a local Ray instance with 2 CPUs)
     python examples/rllib_ppo.py --address auto              (a running cluster: ``ray start --head`` ...)
     SOLITAIRE_ENV_STEPS=2000 python examples/rllib_ppo.py --eval-episodes 10   (a smoke test)

``for_rllib`` puts the legal moves in the observation as ``action_mask``; RLlib's
``ActionMaskingTorchRLModule`` (its PPO module with the mask added to the logits) reads it. The
observation is the one-hot float encoding (``obs_mode="onehot"``): RLlib's default MLP encoder
takes a float vector as it is. The greedy policy plays validation deals before and after training;
the script prints steps per second, mean foundation cards and win rate. Measured figures: docs/libraries.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from dataclasses import dataclass

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from solitaire_env.envs.wrappers import for_rllib


@dataclass
class Args:
    env_id: str = "Rainbow-v0"
    """the game"""
    address: str = ""
    """Ray cluster to join ("auto": the running one); empty: start a local instance with num_cpus"""
    num_cpus: int = 2
    """CPUs of the local Ray instance"""
    seed: int = 0
    """seed of RLlib's runners and learner"""
    total_timesteps: int = 30_720
    """env steps in all (the SOLITAIRE_ENV_STEPS env var overrides it); training stops after the
    iteration that reaches it"""
    num_env_runners: int = 1
    """Ray actors that step envs (0: sample in the driver process)"""
    num_envs_per_env_runner: int = 8
    """envs each runner steps together"""
    train_batch_size: int = 2048
    """env steps per training iteration"""
    minibatch_size: int = 512
    """positions per gradient step"""
    num_epochs: int = 4
    """passes over each iteration's batch"""
    learning_rate: float = 3e-4
    """Adam's learning rate"""
    gamma: float = 0.99
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    clip_coef: float = 0.2
    """PPO's clipping of the probability ratio"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    hidden_dim: int = 256
    """width of the encoder's one hidden layer (the first layer over the one-hot encoding)"""
    head_dim: int = 128
    """hidden layer of the policy and value heads"""
    eval_episodes: int = 200
    """greedy episodes on validation deals (10,000, 10,001, ...) before and after training; 0: none"""


TYPES = {"int": int, "float": float, "str": str}


def parse_args() -> Args:
    """Command-line flags from the fields of Args (``--total-timesteps 50000``, ``--address auto``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument("--" + f.name.replace("_", "-"), type=TYPES[str(f.type)], default=f.default)
    args = Args(**vars(parser.parse_args()))
    if os.environ.get("SOLITAIRE_ENV_STEPS"):
        args.total_timesteps = int(os.environ["SOLITAIRE_ENV_STEPS"])
    if args.train_batch_size % args.minibatch_size:
        parser.error("train_batch_size must be a multiple of minibatch_size")
    return args


def evaluate(module: ActionMaskingTorchRLModule, args: Args) -> tuple[float, float]:
    """Greedy play of validation deals 10,000 .. 10,000 + eval_episodes - 1: mean foundation cards, win rate."""
    envs = [for_rllib(args.env_id, deals="validation", obs_mode="onehot") for _ in range(args.eval_episodes)]
    obs = [env.reset(seed=i)[0] for i, env in enumerate(envs)]  # env i plays validation deal i
    found, won = np.zeros(len(envs)), np.zeros(len(envs), dtype=bool)
    running = list(range(len(envs)))
    with torch.no_grad():
        while running:
            batch = {"obs": {key: torch.as_tensor(np.stack([obs[i][key] for i in running]))
                             for key in ("observations", "action_mask")}}
            acts = module.forward_inference(batch)["action_dist_inputs"].argmax(-1).tolist()  # masked logits
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
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    # The runners (maybe on other machines) build the env by this name: the package must be installed there.
    register_env("solitaire", lambda cfg: for_rllib(cfg["env_id"], **cfg["env_kwargs"]))
    config = (
        PPOConfig()
        .environment("solitaire", env_config={"env_id": args.env_id,
                                              "env_kwargs": {"deals": "train", "obs_mode": "onehot"}})
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs_per_env_runner)
        .training(lr=args.learning_rate, gamma=args.gamma, lambda_=args.gae_lambda, clip_param=args.clip_coef,
                  entropy_coeff=args.ent_coef, train_batch_size_per_learner=args.train_batch_size,
                  minibatch_size=args.minibatch_size, num_epochs=args.num_epochs)
        .rl_module(rl_module_spec=RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config={"fcnet_hiddens": [args.hidden_dim], "fcnet_activation": "relu",
                          "head_fcnet_hiddens": [args.head_dim], "head_fcnet_activation": "tanh"}))
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    if args.eval_episodes:
        cards, wins = evaluate(algo.get_module(), args)
        print(f"before training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")

    steps, start = 0, time.time()
    while steps < args.total_timesteps:
        result = algo.train()
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        returns = result["env_runners"].get("episode_return_mean", float("nan"))
        print(f"step {steps:>8}  steps/s {steps / (time.time() - start):>6.0f}  "
              f"mean return (train episodes) {returns:.3f}", flush=True)
    seconds = time.time() - start
    print(f"trained {steps} steps in {seconds:.0f} s: {steps / seconds:.0f} steps/s")
    if args.eval_episodes:
        cards, wins = evaluate(algo.get_module(), args)
        print(f"after training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")
    algo.stop()
    ray.shutdown()
