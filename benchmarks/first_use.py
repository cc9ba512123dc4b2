"""6. ``first_use``: a fresh ``python`` timing ``import solitaire_env; gym.make; reset; step`` with an
empty numba cache directory (cold) and again with the filled one (warm). Full run only.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import ENV_ID, run_probe, summary


def probe_first_use() -> dict:
    """Timed in a fresh process: import, make, reset, step."""
    t0 = time.perf_counter()
    import gymnasium as gym

    import solitaire_env  # noqa: F401

    t1 = time.perf_counter()
    env = gym.make(ENV_ID)
    t2 = time.perf_counter()
    _, info = env.reset(seed=0)
    t3 = time.perf_counter()
    env.step(int(info["action_mask"].argmax()))
    t4 = time.perf_counter()
    return {"import_s": t1 - t0, "make_s": t2 - t1, "reset_s": t3 - t2, "step_s": t4 - t3, "total_s": t4 - t0}


def bench_first_use(reps: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="solitaire-bench-numba-"))
    cold, warm = [], []
    try:
        for rep in range(reps):
            cache = root / f"cache{rep}"
            cache.mkdir()
            cold.append(run_probe(["--_probe-first-use"], {"NUMBA_CACHE_DIR": str(cache)}))
            if rep == 0:
                for _ in range(reps):
                    warm.append(run_probe(["--_probe-first-use"], {"NUMBA_CACHE_DIR": str(cache)}))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    def agg(runs: list[dict]) -> dict:
        keys = ("import_s", "make_s", "reset_s", "step_s", "total_s", "process_wall_s")
        return {k: summary([r[k] for r in runs]) for k in keys}

    return {
        "what": "fresh python: import gymnasium + solitaire_env, gym.make, reset(seed=0), one step",
        "cold": agg(cold),
        "warm": agg(warm),
        "note": "total_s is timed inside the process (from before the imports); process_wall_s adds interpreter "
        "start-up and exit",
    }

