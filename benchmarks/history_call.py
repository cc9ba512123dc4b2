"""The single env's step with the position history, against other checkouts of the package, in one run.

Each run is a fresh process per checkout (``PYTHONPATH`` set to it), the checkouts alternating; each
process times, in CPU seconds (``time.process_time``), a fixed masked-random action sequence on the
unwrapped single env (default, ``no_revisit``, ``track_revisits``) and a few steps of the batched env
(default and ``no_revisit``). Prints each checkout's median and range of steps per second.

    python benchmarks/history_call.py --runs 5 old=/path/to/checkout new=/path/to/other
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SINGLE = (("rainbow no_revisit", "Rainbow-v0", {"no_revisit": True}),
          ("rank_and_file track_revisits", "RankAndFile-v0", {"track_revisits": True}),
          ("rank_and_file no_revisit", "RankAndFile-v0", {"no_revisit": True}),
          ("rank_and_file default", "RankAndFile-v0", {}))
BATCHED = (("vec 1024 default", {}), ("vec 1024 no_revisit", {"no_revisit": True}))


def _single(env_id: str, kwargs: dict, steps: int) -> float:
    import gymnasium as gym
    import numpy as np

    env = gym.make(env_id, **kwargs).unwrapped
    uniforms = np.random.default_rng(0).random(steps)

    def play(n: int) -> float:
        _, info = env.reset(seed=0)
        mask, done = info["action_mask"], 0
        t = time.process_time()
        for k in range(n):
            legal = np.flatnonzero(mask)
            _, _, terminated, truncated, info = env.step(int(legal[int(uniforms[k] * len(legal))]))
            mask, done = info["action_mask"], done + 1
            if terminated or truncated or done >= 1000:  # (the unwrapped env has no time limit)
                _, info = env.reset()
                mask, done = info["action_mask"], 0
        return n / (time.process_time() - t)

    play(1000)  # warm up: the compiled kernels load from the cache
    return play(steps)


def _batched(kwargs: dict, steps: int) -> float:
    import gymnasium as gym
    import numpy as np

    env = gym.make_vec("RankAndFile-v0", num_envs=1024, **kwargs)
    rng = np.random.default_rng(0)
    uniforms = [rng.random((1024, env.single_action_space.n)) for _ in range(8)]

    def play(n: int) -> float:
        _, info = env.reset(seed=0)
        t = time.process_time()
        for k in range(n):
            actions = np.argmax(info["action_mask"] * (uniforms[k & 7] + 1.0), axis=1)
            _, _, _, _, info = env.step(actions)
        return n * 1024 / (time.process_time() - t)

    play(10)
    return play(steps)


def child(steps: int, vec_steps: int) -> None:
    import solitaire_env  # noqa: F401  (registers the envs)

    out = {name: _single(env_id, kwargs, steps) for name, env_id, kwargs in SINGLE}
    out.update({name: _batched(kwargs, vec_steps) for name, kwargs in BATCHED})
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="NAME=PATH: a checkout of the package")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--vec-steps", type=int, default=100)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.steps, args.vec_steps)
        return
    trees = dict(tree.split("=", 1) for tree in args.trees)
    results: dict[str, list[dict]] = {name: [] for name in trees}
    for run in range(args.runs):
        for name, path in trees.items():
            env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
            # cwd "/": the checkout on PYTHONPATH, not an editable install's or the current folder's.
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "x", "--child", "--steps",
                                   str(args.steps), "--vec-steps", str(args.vec_steps)], env=env, cwd="/",
                                  capture_output=True, text=True, check=True)
            results[name].append(json.loads(done.stdout.splitlines()[-1]))
            print(f"run {run + 1} {name}: " + ", ".join(f"{k} {v:,.0f}" for k, v in results[name][-1].items()),
                  flush=True)
    print("\nsteps per second (CPU time), median [min, max] over", args.runs, "runs")
    for key in results[next(iter(trees))][0]:
        cells = []
        for name in trees:
            xs = [r[key] for r in results[name]]
            cells.append(f"{name} {statistics.median(xs):>9,.0f} [{min(xs):,.0f}, {max(xs):,.0f}]")
        print(f"{key:<30}" + "   ".join(cells))


if __name__ == "__main__":
    main()
