"""The batched no-revisit env against the default env on the same games, split into the compiled
kernel, the Python around it and the resets (docs/results.md, "Issue #17 on another host").

    python benchmarks/no_revisit_split.py [STEPS]

Both envs (Rank and File, N = 1,024) start from the same deals; each step the default env plays the
moves the option's env picks (uniform legal picks under the no-revisit mask) and both deal new games
to the sub-envs whose episode ended (``reset_envs``), in alternating order, as section 8's
``same_games`` does. The first 300 steps warm up (random play under the option takes that long to
reach its steady mix of long and short stretches); the next ``STEPS`` (default 1,200) are timed.
Prints milliseconds a step of each part and the ratios (default time over the option's).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

# Run as a script from the repository root: the benchmarks package and the checked-out solitaire_env
# are imported from there (as benchmarks/bench.py does).
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import solitaire_env  # noqa: F401, E402  (registers the ids)
from benchmarks.kernels import pick_uniform  # noqa: E402
from solitaire_env.engine import batched  # noqa: E402

N, WARM_UP = 1024, 300


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1200
    in_kernel = [0.0]
    chunks = batched.in_chunks

    def timed_chunks(*args):  # every batched kernel goes through batched.in_chunks at N = 1,024
        t0 = time.perf_counter()
        chunks(*args)
        in_kernel[0] += time.perf_counter() - t0

    batched.in_chunks = timed_chunks
    try:
        envs = {"no_revisit": gym.make_vec("RankAndFile-v0", num_envs=N, no_revisit=True),
                "default": gym.make_vec("RankAndFile-v0", num_envs=N)}
        for env in envs.values():
            env.reset(seed=0)
        seeds = np.arange(1, N + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        picked = np.empty(N, dtype=np.int64)
        ended = np.zeros(N, dtype=bool)
        spent = {name: [0.0, 0.0, 0.0] for name in envs}  # step, kernel, resets
        for step in range(WARM_UP + steps):
            if step == WARM_UP:
                spent = {name: [0.0, 0.0, 0.0] for name in envs}
            order = list(envs.items()) if step % 2 else list(envs.items())[::-1]
            if ended.any():
                for name, env in order:
                    t0 = time.perf_counter()
                    env.reset_envs(np.flatnonzero(ended))
                    spent[name][2] += time.perf_counter() - t0
            actions = pick_uniform(envs["no_revisit"].masks, seeds, picked).copy()
            for name, env in order:
                in_kernel[0] = 0.0
                t0 = time.perf_counter()
                result = env.step(actions)
                spent[name][0] += time.perf_counter() - t0
                spent[name][1] += in_kernel[0]
                if name == "no_revisit":
                    ended = result[2] | result[3]
        if not np.array_equal(envs["no_revisit"].states, envs["default"].states):
            raise RuntimeError("the two envs reached different positions")
    finally:
        batched.in_chunks = chunks
    for name, (step_s, kernel_s, reset_s) in spent.items():
        print(f"{name}: step {step_s / steps * 1e3:.3f} ms (kernel {kernel_s / steps * 1e3:.3f}, "
              f"Python {(step_s - kernel_s) / steps * 1e3:.3f}), resets {reset_s / steps * 1e3:.3f} ms")
    d, o = spent["default"], spent["no_revisit"]
    print(f"ratio, steps and resets: {(d[0] + d[2]) / (o[0] + o[2]):.3f}; kernels alone: {d[1] / o[1]:.3f}")


if __name__ == "__main__":
    main()
