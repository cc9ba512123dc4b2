"""The batched no-revisit env against the default env on its own games and on the same games, in one
long run (docs/benchmarks.md).

    python benchmarks/no_revisit_games.py [STEPS]

Three Rank and File envs (N = 1,024) step in turn, their order reversed every step: the env with
``no_revisit=True`` (uniform legal picks under its mask; ended games dealt anew with ``reset_envs``),
a default env playing the very same moves from the same deals (dealt anew alike), and a default env
playing its own uniform picks (autoreset at its time limit). After 300 steps of warm-up the next
``STEPS`` (default 2,700) are timed, resets included. Section 8's own-games figure is a median of
half-second slices from the first steps of synchronised games; this is the steady state over many more
steps. Prints milliseconds a step of each env and three ratios: own games (the default env on its own
games over the option's env), same games, and what the option's games cost the default env itself.

Its own-games figure is not the option's cost as a user meets it (``no_revisit_steady.py`` is): only
the option's env deals with ``reset_envs`` here, and stepping three envs in turn every step makes
glibc's malloc hand memory back and fault it in again, hundreds of thousands of times a run
(benchmarks/no_revisit_steady.py measures without that).
"""

from __future__ import annotations

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


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2700
    option = gym.make_vec("RankAndFile-v0", num_envs=N, no_revisit=True)
    same = gym.make_vec("RankAndFile-v0", num_envs=N)
    own = gym.make_vec("RankAndFile-v0", num_envs=N)
    for env in (option, same, own):
        env.reset(seed=0)
    seeds = np.arange(1, N + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    own_seeds = seeds.copy()
    picked, own_picked = np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64)
    ended = np.zeros(N, dtype=bool)
    spent = dict.fromkeys(("option", "same", "own"), 0.0)
    for step in range(WARM_UP + steps):
        if step == WARM_UP:
            spent = dict.fromkeys(spent, 0.0)
        if ended.any():
            for name, env in (("option", option), ("same", same)):
                t0 = time.perf_counter()
                env.reset_envs(np.flatnonzero(ended))
                spent[name] += time.perf_counter() - t0
        acts = pick_uniform(option.masks, seeds, picked).copy()
        own_acts = pick_uniform(own.masks, own_seeds, own_picked).copy()
        order = [("option", option, acts), ("same", same, acts), ("own", own, own_acts)]
        for name, env, a in order if step % 2 else order[::-1]:
            t0 = time.perf_counter()
            result = env.step(a)
            spent[name] += time.perf_counter() - t0
            if name == "option":
                ended = result[2] | result[3]
    if not np.array_equal(option.states, same.states):
        raise RuntimeError("the option's env and its twin reached different positions")
    print(", ".join(f"{name} {t / steps * 1e3:.3f} ms a step" for name, t in spent.items()))
    print(f"ratio, own games: {spent['own'] / spent['option']:.3f}; same games: {spent['same'] / spent['option']:.3f}; "
          f"the default env on the option's games against its own: {spent['own'] / spent['same']:.3f}")


if __name__ == "__main__":
    main()
