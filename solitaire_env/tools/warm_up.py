"""Compile the rules now, for every game, instead of on first use: ``solitaire-env warm-up``.

numba compiles each kernel the first time it runs and keeps the result on disk beside its module
(:mod:`solitaire_env.engine.jit_cache`), so only the first process pays. Several processes starting
together on a fresh checkout (pytest-xdist's workers, a pool of evaluation workers, a cluster's
nodes) would each compile the same kernels at once; one warm-up before them compiles each kernel once.
It plays a few random moves of every game through every env option and the batched env (``envs``)
and a short search of every game (``solver``); ``all`` runs both parts in two processes at once, as
they share few kernels. The heuristic and search agents' Python needs nothing compiled beyond these.
"""

from __future__ import annotations

import subprocess
import sys
import time

import gymnasium as gym
import numpy as np

from solitaire_env.envs.registration import ENV_IDS

# Env options whose kernels differ from the default env's (observations, action features, the history).
ENV_OPTIONS = ({}, {"obs_mode": "piles", "action_features": True}, {"obs_mode": "onehot"}, {"obs_mode": "dict"},
               {"no_revisit": True}, {"track_revisits": True})
PARTS = ("envs", "solver")


def _random_moves(env: gym.Env | gym.vector.VectorEnv, steps: int, rng: np.random.Generator, batched: bool) -> None:
    _, info = env.reset(seed=0)
    for _ in range(steps):
        masks = np.atleast_2d(info["action_mask"])
        actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]
        _, _, _, _, info = env.step(np.array(actions) if batched else actions[0])


def warm_envs(steps: int = 30) -> None:
    """A few random moves of every game in the single and the batched env, under every option."""
    rng = np.random.default_rng(0)
    for env_id in ENV_IDS:
        for options in ENV_OPTIONS:
            for env, batched in ((gym.make(env_id, **options), False),
                                 (gym.make_vec(env_id, num_envs=2, **options), True)):
                _random_moves(env, steps, rng, batched)
                env.close()


def warm_solver(nodes: int = 3000) -> None:
    """A short search of deal 0 of every game, with and without stock macros and the agent's guidance."""
    from solitaire_env.solver import solve

    for env_id in ENV_IDS:
        game = ENV_IDS[env_id][1]
        for macros in (False, True):
            solve(game, seed=0, time_limit=None, max_nodes=nodes, memory_mb=4, stock_macros=macros,
                  agent_guidance=macros)


def warm_up(part: str = "all") -> float:
    """Compile ``part`` (``envs``, ``solver`` or ``all``: both, in two processes); return the seconds it took."""
    start = time.perf_counter()
    if part == "all":
        procs = [subprocess.Popen([sys.executable, "-m", "solitaire_env.tools.warm_up", p]) for p in PARTS]
        failed = [p for p, proc in zip(PARTS, procs, strict=True) if proc.wait() != 0]
        if failed:
            raise RuntimeError(f"warm-up of {', '.join(failed)} failed (its error is above)")
    elif part == "envs":
        warm_envs()
    elif part == "solver":
        warm_solver()
    else:
        raise ValueError(f"part must be one of all, {', '.join(PARTS)}; got {part!r}")
    return time.perf_counter() - start


if __name__ == "__main__":
    warm_up(sys.argv[1] if len(sys.argv) > 1 else "all")
