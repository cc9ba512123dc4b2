"""Sections 5-6 of the benchmark: what the batched env holds in memory, and what a fresh process pays
before its first step.

5. ``memory``: bytes per game in the batched env (the state array; every per-env array it holds;
   tracemalloc; and, in the full run, RSS growth in a fresh process creating N=4096); and the bound on
   what ``no_revisit`` adds (each env's table of positions, whose pages cost nothing until used).

6. ``first_use``: a fresh ``python`` timing ``import solitaire_env; gym.make; reset; step`` with an
   empty numba cache directory (cold) and again with the filled one (warm). Full run only.

The fresh processes are ``bench.py`` with a hidden argument (``run_probe`` in :mod:`benchmarks.common`),
which imports nothing of the package before the probe starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ENV_ID, run_probe, summary

RSS_N = 4096


# --- 5. memory ------------------------------------------------------------------------------------

def _per_env_arrays(u, n: int) -> dict[str, int]:
    import numpy as np

    return {k: int(v.nbytes) for k, v in vars(u).items()
            if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n}


def bench_memory(n: int, rss: bool) -> dict:
    import gc
    import tracemalloc

    import gymnasium as gym

    import solitaire_env  # noqa: F401

    warm = gym.make_vec(ENV_ID, num_envs=1)  # compile / load everything first
    _, info = warm.reset(seed=0)
    warm.step(info["action_mask"].argmax(axis=1))
    warm.close()
    gc.collect()
    tracemalloc.start()
    env = gym.make_vec(ENV_ID, num_envs=n)
    _, info = env.reset(seed=0)
    env.step(info["action_mask"].argmax(axis=1))
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    top = tracemalloc.take_snapshot().statistics("lineno")[:6]
    tracemalloc.stop()
    u = env.unwrapped if hasattr(env, "unwrapped") else env
    arrays = _per_env_arrays(u, n)
    out: dict[str, Any] = {
        "num_envs": n,
        "state_bytes_per_game": u.states.nbytes / n,
        "state_shape": list(u.states.shape),
        "state_dtype": str(u.states.dtype),
        "per_env_arrays_bytes_per_game": sum(arrays.values()) / n,
        "per_env_arrays": {k: v / n for k, v in arrays.items()},
        "tracemalloc_bytes_per_game": current / n,
        "tracemalloc_peak_bytes_per_game": peak / n,
        "tracemalloc_top": [{"where": f"{Path(st.traceback[0].filename).name}:{st.traceback[0].lineno}",
                             "bytes_per_game": st.size / n} for st in top],
        "tracemalloc_note": "everything allocated by make_vec + reset + one step and still alive, incl. the "
        "last step's returned obs/info copies and one numpy Generator per sub-env",
    }
    env.close()
    history = gym.make_vec(ENV_ID, num_envs=n, no_revisit=True).unwrapped.history
    out["no_revisit_history_bytes_per_game"] = history.nbytes / n
    # One numpy Generator per sub-env (the vector env keeps them for later deals): their share.
    from gymnasium.utils import seeding

    gc.collect()
    tracemalloc.start()
    rngs = [seeding.np_random(i)[0] for i in range(256)]
    out["numpy_generator_bytes_per_game"] = tracemalloc.get_traced_memory()[0] / len(rngs)
    tracemalloc.stop()
    del rngs
    if rss:
        probe = run_probe(["--_probe-rss", str(RSS_N)], env_extra={})
        out["rss"] = probe
    else:
        out["rss"] = {"skipped": "quick mode"}
    return out


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def probe_rss(n: int) -> dict:
    """In a fresh process: RSS before and after creating, resetting and stepping an N-env batch."""
    import gc

    import gymnasium as gym

    import solitaire_env  # noqa: F401

    warm = gym.make_vec(ENV_ID, num_envs=1)
    _, info = warm.reset(seed=0)
    warm.step(info["action_mask"].argmax(axis=1))
    warm.close()
    del warm
    gc.collect()
    before = _rss_bytes()
    env = gym.make_vec(ENV_ID, num_envs=n)
    _, info = env.reset(seed=0)
    env.step(info["action_mask"].argmax(axis=1))
    gc.collect()
    after = _rss_bytes()
    return {"num_envs": n, "rss_before_bytes": before, "rss_after_bytes": after,
            "rss_growth_bytes_per_game": (after - before) / n}


# --- 6. first_use ---------------------------------------------------------------------------------

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

