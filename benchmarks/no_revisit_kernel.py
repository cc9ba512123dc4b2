"""The no-revisit kernel alone, on one thread, against the default kernel on the same positions and moves
(docs/results.md, "2026-12-02: indices without wraparound tests").

    python benchmarks/no_revisit_kernel.py [WARM_UP] [REPLAYS]

A batched Rank and File env with ``no_revisit=True`` (N = 1,024) plays ``WARM_UP`` uniform legal picks
(default 600, long enough for its steady mix of short and long stretches; ended games are dealt anew),
then the next 10 steps' moves are recorded. Each replay copies the positions and history tables back
and steps both compiled kernels (``history.step_batch_serial`` and ``batched.step_batch_serial``) through
those 10 steps, timing only the kernel calls. The minimum over ``REPLAYS`` (default 40) replays of each
cuts out most of the host's noise, which half-second slices of whole env steps do not. Prints
microseconds an env-step of each, the history's extra, and the ratio (default time over the option's).
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
from solitaire_env.engine import batched, history  # noqa: E402
from solitaire_env.engine.table import Tables  # noqa: E402

N, STEPS = 1024, 10


def main() -> None:
    warm_up = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    replays = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    env = gym.make_vec("RankAndFile-v0", num_envs=N, no_revisit=True)
    _, info = env.reset(seed=0)
    seeds = np.arange(1, N + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    picked = np.empty(N, dtype=np.int64)
    for _ in range(warm_up):
        _, _, terminated, truncated, info = env.step(pick_uniform(info["action_mask"], seeds, picked))
        ended = terminated | truncated
        if ended.any():
            env.reset_envs(np.flatnonzero(ended))
            info["action_mask"] = env.masks.copy()
    v, h = env.variant, env.history
    start = [x.copy() for x in (env.states, env.masks, env.codes, *h.tables)]
    out = [x.copy() for x in (env.gained, env.revealed, env.n_legal, env.found, env.revisit, env.n_rules)]
    gained, revealed, n_legal, found, revisit, n_rules = out
    clear = np.zeros(N, dtype=bool)
    no_seen, no_features = np.zeros((N, 0), dtype=np.int8), np.zeros((N, 0, 0), dtype=np.float32)

    record = history.Recording(clear, revisit, n_rules, no_seen, no_features)

    def history_step(w, acts):
        history.step_batch_serial(batched.Batch(*w[:3], gained, revealed, n_legal, found), v.spec, v.actions, acts,
                                  Tables(*w[3:]), record, True)

    def core_step(w, acts):
        batched.step_batch_serial(batched.Batch(*w[:3], gained, revealed, n_legal, found), v.spec, v.actions, acts)

    # The moves: uniform picks under the option's mask; a game with no move left gets -1 (no move).
    moves, w, alive = [], [x.copy() for x in start], np.ones(N, dtype=bool)
    for _ in range(STEPS):
        acts = pick_uniform(w[1], seeds, picked).copy()
        acts[~alive] = -1
        moves.append(acts)
        history_step(w, acts)
        alive &= n_legal > 0

    def replay(step) -> float:
        w, spent = [x.copy() for x in start], 0.0
        for acts in moves:
            t0 = time.perf_counter()
            step(w, acts)
            spent += time.perf_counter() - t0
        return spent

    with_history, default = [], []
    for _ in range(replays):  # alternating, so a change in the host's load hits both alike
        with_history.append(replay(history_step))
        default.append(replay(core_step))
    th, tc = (min(x) / STEPS / N * 1e6 for x in (with_history, default))
    print(f"no_revisit kernel {th:.3f} us an env-step, default kernel {tc:.3f} us, history's extra {th - tc:.3f} us, "
          f"ratio {tc / th:.3f}")


if __name__ == "__main__":
    main()
