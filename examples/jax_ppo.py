"""Masked PPO on the JAX backend in one short loop: the package's compiled update, called until the budget is spent.

Run: python examples/jax_ppo.py                        (Rainbow, 300k steps: about 2 minutes on 2 CPU cores)
     python examples/jax_ppo.py --n-envs 64            (4x the games a rollout, a quarter of the updates)
     python examples/jax_ppo.py --env-id NumberTen-v0 --total-timesteps 100000 --save policy.msgpack
     SOLITAIRE_ENV_STEPS=2048 python examples/jax_ppo.py --n-envs 8 --n-steps 32   (a smoke test)

``make_update`` (:mod:`solitaire_env.tools.jax_ppo`) is one ``jax.jit``-ted function: it plays ``n_steps``
steps of ``n_envs`` games (``lax.scan`` over ``jax.vmap(env.step)``, finished games replaced by fresh ones
inside the scan), computes GAE and runs PPO's epochs and minibatches as nested scans. This file only
loops over updates to log; ``solitaire-env train CONFIG --set backend=jax`` is the same loop with
evaluations, checkpoints and a run directory (:mod:`solitaire_env.tools.jax_training`).

The hyperparameters are ``configs/quick.yaml``'s. Training games are ``env.init(key)``'s random shuffles
(a deck order coincides with a test or validation deal with negligible probability); the greedy policy
is scored before and after training on validation deals 10,000 .. 10,000 + eval_episodes - 1
(``env.init_deal`` deals deal ``s`` as ``reset(seed=s)`` does). ``--save`` writes a policy file that
``solitaire-env evaluate --agent FILE`` plays on the ordinary env.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import jax
import numpy as np

from solitaire_env import jax as sj
from solitaire_env.agents.jax_policy import init_params, make_network, save_policy
from solitaire_env.tools.jax_ppo import PPOSettings, make_evaluate, make_update, start


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-id", default="Rainbow-v0", help="the game: Rainbow-v0, NumberTen-v0 or RankAndFile-v0")
    p.add_argument("--seed", type=int, default=0, help="seed of the weights, the sampling and the training deals")
    p.add_argument("--total-timesteps", type=int, default=300_000,
                   help="env steps in all games together, rounded up to whole updates (SOLITAIRE_ENV_STEPS overrides)")
    p.add_argument("--n-envs", type=int, default=16, help="games stepped together (vmap)")
    p.add_argument("--n-steps", type=int, default=128, help="steps per game in each rollout")
    p.add_argument("--eval-episodes", type=int, default=200, help="greedy games on validation deals; 0: none")
    p.add_argument("--save", default="", help="write the trained policy here (a .msgpack file)")
    return p.parse_args(argv)


def main(args: argparse.Namespace) -> None:
    steps = int(os.environ.get("SOLITAIRE_ENV_STEPS", args.total_timesteps))
    env = sj.make(args.env_id)
    net = make_network(args.env_id, features_dim=256, net_arch=[128])
    settings = PPOSettings(n_envs=args.n_envs, n_steps=args.n_steps, batch_size=args.n_envs * args.n_steps // 4,
                           n_epochs=4, ent_coef=0.01)
    k_init, k_run = jax.random.split(jax.random.key(args.seed))
    runner = start(env, net, settings, init_params(net, k_init), k_run)
    update, evaluate = make_update(env, net, settings), make_evaluate(env, net)
    deals = env.init_deal(np.arange(10_000, 10_000 + args.eval_episodes)) if args.eval_episodes else None

    def report(when: str) -> None:
        if deals is not None:
            cards = np.asarray(evaluate(runner.params, deals, jax.random.key(0))[0])
            print(f"{when} training: validation mean foundation cards {cards.mean():.2f}, win rate "
                  f"{(cards == env.layout.n_cards).mean():.3f} ({len(cards)} deals)", flush=True)

    report("before")
    start_time, n_updates = time.time(), max(1, math.ceil(steps / settings.batch))  # compiling included
    for i in range(1, n_updates + 1):
        runner, (cards, ended) = update(runner)
        if i % 10 == 0 or i == n_updates:
            print(f"step {i * settings.batch:>8}  steps/s {i * settings.batch / (time.time() - start_time):>6.0f}  "
                  f"mean foundation cards of the games that ended {float(cards) / max(int(ended), 1):.2f}", flush=True)
    seconds = time.time() - start_time
    print(f"trained {n_updates * settings.batch} steps in {seconds:.0f} s: {n_updates * settings.batch / seconds:.0f} "
          "steps/s")
    report("after")
    if args.save:
        save_policy(args.save, runner.params, args.env_id, net, env_kwargs={})
        print(f"saved the policy to {args.save}")


if __name__ == "__main__":
    main(parse_args())
