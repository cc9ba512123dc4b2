"""Where MaskablePPO's time goes: ``cProfile`` over ``STEPS`` steps of a training config (docs/benchmarks.md,
"Training throughput").

    python benchmarks/ppo_profile.py configs/ablations/rainbow_ppo.yaml 16384 [OPTIMIZER_KWARGS]
    python benchmarks/ppo_profile.py configs/ablations/rainbow_no_teacher.yaml 8192     # MoveScorerPolicy

Builds the config's model and env as ``solitaire-env train`` does (one torch thread), learns 4,096
steps to warm up, then profiles ``STEPS`` more and prints the steps per second and the top of the
profile by cumulative time (``train`` is PPO's update, ``collect_rollouts`` the rollouts).
``OPTIMIZER_KWARGS``: a Python dict for the policy's optimizer, e.g. ``'{"fused": False}'`` (CardCodesPolicy's
default is Adam's fused kernel).
"""

from __future__ import annotations

import ast
import cProfile
import pstats
import sys
import time

import torch

import solitaire_env  # noqa: F401  (registers the ids)
from solitaire_env.envs.sb3 import make_sb3_vec_env
from solitaire_env.tools.training import build_model, load_config


def main() -> None:
    config = load_config(sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 16_384
    torch.set_num_threads(config.torch_threads)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=config.seed, deals=config.deals,
                            **config.env_kwargs)
    if len(sys.argv) > 3:
        config.policy_kwargs["optimizer_kwargs"] = ast.literal_eval(sys.argv[3])
    model = build_model(config, venv)
    model.learn(4096)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    model.learn(steps, reset_num_timesteps=False)
    profiler.disable()
    print(f"{steps / (time.perf_counter() - start):.0f} env steps/s")
    pstats.Stats(profiler).sort_stats("cumtime").print_stats(25)


if __name__ == "__main__":
    main()
