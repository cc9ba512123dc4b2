"""What every benchmark section shares: the workload's settings, summaries of repeated figures, how busy
the machine was, a description of it, fresh-process probes, and the compiled loops.

The compiled loops (numba, xorshift64 generator inside): ``random_play``, random legal play on one game
(section 1), and ``pick_uniform``, a uniform legal pick for every row of a batch of masks (sections 3 and
8, and ``benchmarks/jax_speed.py``). They are compiled, or loaded from numba's cache, on first use
(``from benchmarks.common import pick_uniform``): importing this module loads neither numpy nor numba nor
the package, so the fresh processes of sections 5 and 6 time the package's own imports.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BENCH_SCRIPT = HERE / "bench.py"

ENV_ID = "RankAndFile-v0"
MOVE_CAP = 1000  # engine "game" length cap: random play in Rank and File loops


def median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def summary(samples: list[float]) -> dict:
    return {"median": median(samples), "min": float(min(samples)), "max": float(max(samples)), "samples": samples}


def cpu_snapshot() -> dict | None:
    """Machine-wide busy CPU time (/proc/stat) and this process's own (children included), in seconds."""
    import resource

    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    own = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        own += r.ru_utime + r.ru_stime
    return {"busy_s": (sum(fields[:8]) - idle) / tick, "own_s": own, "wall": time.perf_counter()}


def other_load(start: dict | None, end: dict | None, cores: int) -> float | None:
    """Average number of cores that other processes kept busy between two snapshots."""
    if start is None or end is None:
        return None
    wall = end["wall"] - start["wall"]
    other = (end["busy_s"] - start["busy_s"]) - (end["own_s"] - start["own_s"])
    return max(0.0, min(float(cores), other / wall)) if wall > 0 else None


def machine_info() -> dict:
    import gymnasium
    import numba
    import numpy

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        from importlib.metadata import version

        spiel = version("open_spiel")
    except Exception:
        spiel = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "numba_threads": numba.get_num_threads(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "gymnasium": gymnasium.__version__,
        "open_spiel": spiel,
        "nice": os.nice(0) if hasattr(os, "nice") else None,
        "load_average_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "env": {k: os.environ[k] for k in sorted(os.environ) if k.startswith(("NUMBA_", "OMP_", "GOMP_"))},
    }


def run_probe(args: list[str], env_extra: dict[str, str]) -> dict:
    """Run ``bench.py`` with hidden probe arguments in a fresh process; its last stdout line is JSON."""
    env = dict(os.environ, **env_extra)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, str(BENCH_SCRIPT), *args], capture_output=True, text=True,
                          env=env, cwd=str(REPO), timeout=600)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"probe {args} failed:\n{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    return result


# --- the compiled loops ---------------------------------------------------------------------------
# Written as plain functions and compiled by _compile() on the first use of one of KERNELS (the module's
# __getattr__), which binds the compiled functions and the globals their code reads (np, core, SP_NCARDS).

KERNELS = ("xorshift", "random_play", "pick_uniform")


def _xorshift(x):
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    return x


def _random_play(deals, sp, actions, n_games, cap, seed, with_obs, obs_size):
    """Play n_games random legal games (deal g % len(deals)); return (moves, games at the cap, games won)."""
    mask = np.zeros(actions.shape[0], dtype=np.int8)
    obs = np.zeros(obs_size, dtype=np.int16)
    s = deals[0].copy()
    x = (np.uint64(seed) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    if x == np.uint64(0):
        x = np.uint64(1)
    moves = 0
    capped = 0
    won = 0
    for g in range(n_games):
        s[:] = deals[g % deals.shape[0]]
        m = 0
        while m < cap:
            n = core.legal_mask(s, sp, actions, mask)
            if with_obs:
                core.observe(s, sp, obs)
            if n == 0:
                break
            x = xorshift(x)
            k = np.int64((x >> np.uint64(33)) % np.uint64(n))
            a = 0
            while mask[a] == 0 or k > 0:  # the k-th legal action
                if mask[a] != 0:
                    k -= 1
                a += 1
            core.apply_action(s, sp, actions, a)
            m += 1
        moves += m
        if m >= cap:
            capped += 1
        if core.foundation_cards(s, sp) == sp[SP_NCARDS]:
            won += 1
    return moves, capped, won


def _pick_uniform(masks, seeds, out):
    """For every row, a uniformly random legal action (0 where none is legal); seeds advance in place."""
    for i in range(masks.shape[0]):
        row = masks[i]
        n = 0
        for a in range(row.shape[0]):
            n += row[a]
        x = xorshift(seeds[i])
        seeds[i] = x
        out[i] = 0
        if n == 0:
            continue
        k = np.int64((x >> np.uint64(33)) % np.uint64(n))
        for a in range(row.shape[0]):
            if row[a] != 0:
                if k == 0:
                    out[i] = a
                    break
                k -= 1
    return out


def _compile() -> None:
    global np, core, SP_NCARDS, xorshift, random_play, pick_uniform
    import numpy as np
    from numba import njit

    from solitaire_env.engine import core
    from solitaire_env.engine.jit_cache import drop_stale_cache
    from solitaire_env.engine.variant import SP_NCARDS

    jit = njit(cache=True, nogil=True)
    xorshift, random_play, pick_uniform = jit(_xorshift), jit(_random_play), jit(_pick_uniform)
    # These loops hold the core's code: their cache is dropped when the rules' sources change.
    drop_stale_cache(__name__)


def __getattr__(name: str):
    if name in KERNELS:
        _compile()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
