"""What every benchmark section shares: the workload's settings, summaries of repeated figures, how busy
the machine was, a description of it, and fresh-process probes."""

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
