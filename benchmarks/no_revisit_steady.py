"""The batched env with ``no_revisit=True`` against the same env without it, N = 1,024, in the steady
state and as a user runs them: each env plays its own games and deals its ended games itself
(docs/benchmarks.md).

    python benchmarks/no_revisit_steady.py [--sb3] [--steps STEPS] [--block BLOCK]

Two Rank and File envs, one with ``no_revisit=True`` and a default one, each make uniform legal picks
(their time not counted) from their own deals. By default each env resets its ended games on the next
step (Gymnasium's NEXT_STEP autoreset, as ``gym.make_vec`` gives it); with ``--sb3`` both deal them
anew right after the step with ``reset_envs`` (the SB3 adapter's same-step reset, timed with the step).
After 300 steps of warm-up each, the envs take turns in blocks of ``BLOCK`` steps (default 100), which
of them goes first changing every block, until each has stepped ``STEPS`` times (default 3,000): a
change in the machine's load hits both alike, and within a block an env steps as it does alone, its
arrays in cache from its last step (stepping the envs in turn every step instead evicts them, and
by different amounts for the two envs). Prints milliseconds a step of each env, the ratio of their
times (default over ``no_revisit``: the fraction of the default env's speed that the option keeps),
and the median and range of the blocks' ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import solitaire_env  # noqa: F401, E402  (registers the ids)
from benchmarks.kernels import pick_uniform  # noqa: E402

N, WARM_UP = 1024, 300


class Runner:
    """One env, its own uniform legal picks, and the time its steps (and resets) took."""

    def __init__(self, sb3: bool, **kwargs) -> None:
        self.env = gym.make_vec("RankAndFile-v0", num_envs=N, **kwargs)
        self.env.reset(seed=0)
        self.sb3 = sb3
        self.seeds = np.arange(1, N + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        self.picked = np.empty(N, dtype=np.int64)

    def run(self, steps: int) -> float:
        spent = 0.0
        for _ in range(steps):
            actions = pick_uniform(self.env.masks, self.seeds, self.picked).copy()
            t0 = time.perf_counter()
            _, _, terminated, truncated, _ = self.env.step(actions)
            if self.sb3:
                ended = np.flatnonzero(terminated | truncated)
                if ended.size:
                    self.env.reset_envs(ended)
            spent += time.perf_counter() - t0
        return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sb3", action="store_true", help="reset ended games with reset_envs, as the SB3 adapter")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--block", type=int, default=100)
    args = parser.parse_args()
    if args.steps < args.block or args.block < 1:
        parser.error("--steps must be at least --block, and --block at least 1")
    runners = {"no_revisit": Runner(args.sb3, no_revisit=True), "default": Runner(args.sb3)}
    for runner in runners.values():
        runner.run(WARM_UP)
    spent, ratios = dict.fromkeys(runners, 0.0), []
    for block in range(args.steps // args.block):
        order = list(runners) if block % 2 == 0 else list(runners)[::-1]
        times = {name: runners[name].run(args.block) for name in order}
        for name, t in times.items():
            spent[name] += t
        ratios.append(times["default"] / times["no_revisit"])
    steps = args.steps // args.block * args.block
    reset = "reset_envs (SB3 adapter)" if args.sb3 else "autoreset"
    print(f"N = {N}, {steps} steps each after {WARM_UP} of warm-up, {reset}: "
          + ", ".join(f"{name} {t / steps * 1e3:.3f} ms a step" for name, t in spent.items()))
    print(f"ratio {spent['default'] / spent['no_revisit']:.3f}; blocks of {args.block}: median "
          f"{statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f}")


if __name__ == "__main__":
    main()
