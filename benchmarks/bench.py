"""Speed and memory of solitaire-env's Rank and File, measured (never asserted).

Run from the repository root::

    python benchmarks/bench.py                  # the full run: a few minutes
    python benchmarks/bench.py --quick          # a few seconds (once numba's caches are warm), for CI
    python benchmarks/bench.py --json out.json  # also write every figure as JSON

Sections (each figure is the median of several repetitions; the JSON keeps every repetition; each
module's docstring says what its sections measure and how):

1. ``engine`` (:mod:`benchmarks.env`): random legal play in a numba loop on one state array, with and
   without observations, and ``deal()``; the same play from Python through :class:`solitaire_env.Game`
   for reference.
2. ``single_env`` (:mod:`benchmarks.env`): one ``gym.make("RankAndFile-v0")`` env.
3. ``vector_env`` (:mod:`benchmarks.env`): the batched ``gym.make_vec`` env at several N, its
   autoreset, and the compiled ``batched.step_batch`` alone.
4. ``openspiel`` (:mod:`benchmarks.openspiel`): OpenSpiel's ``solitaire`` for comparison (optional).
5. ``memory`` (:mod:`benchmarks.footprint`): bytes per game in the batched env.
6. ``first_use`` (:mod:`benchmarks.footprint`): import to first step in a fresh process, cold and warm
   numba cache. Full run only.
7. ``solver`` (:mod:`benchmarks.solver`): positions per second of the solver on a fixed workload.
8. ``options`` (:mod:`benchmarks.options`): what the env options (``no_revisit``, ...) cost, the batched
   env at N = 1024 (quick: 64) and the single env, each against the default env.

The table and the targets are in :mod:`benchmarks.report`; shared helpers and the compiled loops in
:mod:`benchmarks.common`.

Other processes skew everything (the two vCPUs of a small VM most of all): the report states how many
cores other processes kept busy during each section, from ``/proc/stat``, and warns when it was not
quiet. ``nice -n -10 python benchmarks/bench.py`` helps somewhat on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# Run as a script, Python puts this folder first on the path; the sections are imported as
# benchmarks.<name> from the repository root instead (so they shadow no installed module of the same
# name), and the checked-out package is the one benchmarked, installed or not.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.common import ENV_ID, MOVE_CAP, cpu_snapshot, machine_info, other_load  # noqa: E402
from benchmarks.env import VECTOR_NS_FULL, VECTOR_NS_QUICK, bench_engine, bench_single_env, bench_vector_env  # noqa: E402
from benchmarks.footprint import bench_first_use, bench_memory, probe_first_use, probe_rss  # noqa: E402
from benchmarks.openspiel import bench_openspiel  # noqa: E402
from benchmarks.options import bench_options  # noqa: E402
from benchmarks.report import table, targets  # noqa: E402
from benchmarks.solver import bench_solver  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny durations, N up to 64, no cold start (for CI)")
    parser.add_argument("--json", metavar="OUT.json", help="also write the results as JSON here")
    parser.add_argument("--reps", type=int, help="repetitions per figure (default 5, quick 3)")
    parser.add_argument("--duration", type=float, help="seconds per repetition (default 1.0, quick 0.05)")
    parser.add_argument("--_probe-first-use", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--_probe-rss", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._probe_first_use:
        print(json.dumps(probe_first_use()))
        return 0
    if args._probe_rss:
        print(json.dumps(probe_rss(args._probe_rss)))
        return 0

    start = time.perf_counter()
    cpu_start = cpu_snapshot()
    reps = args.reps or (3 if args.quick else 5)
    duration = args.duration or (0.05 if args.quick else 1.0)
    ns = VECTOR_NS_QUICK if args.quick else VECTOR_NS_FULL
    results: dict[str, Any] = {
        "machine": machine_info(),
        "settings": {"quick": bool(args.quick), "reps": reps, "duration_s": duration, "env_id": ENV_ID,
                     "move_cap": MOVE_CAP, "vector_num_envs": list(ns)},
    }
    cores = os.cpu_count() or 1

    def section(fn, *a) -> dict:
        before = cpu_snapshot()
        out = fn(*a)
        out["other_processes_cores"] = other_load(before, cpu_snapshot(), cores)
        return out

    results["engine"] = section(bench_engine, reps, duration)
    results["single_env"] = section(bench_single_env, reps, duration)
    results["vector_env"] = section(bench_vector_env, ns, reps, duration, not args.quick)
    results["openspiel"] = section(bench_openspiel, reps, duration)
    spiel = results["openspiel"]
    if spiel.get("available"):
        base = spiel["steps_per_s"]["median"]
        spiel["ratio_single_env"] = results["single_env"]["gym_make"]["steps_per_s"]["median"] / base
        single_step = results["single_env"]["gym_make"]["step_only_steps_per_s"]["median"]
        spiel["ratio_single_env_step_only"] = single_step / spiel["step_only_steps_per_s"]["median"]
        spiel["ratio_vector_env"] = {
            k: v["env_steps_per_s"]["median"] / base for k, v in results["vector_env"]["by_num_envs"].items()
        }
    results["memory"] = section(bench_memory, max(ns), not args.quick)
    results["solver"] = section(bench_solver, reps, 20_000 if args.quick else 1_000_000)
    results["options"] = section(bench_options, 64 if args.quick else 1024, reps, duration)
    results["first_use"] = {"skipped": "quick mode"} if args.quick else bench_first_use(3)
    results["targets"] = targets(results)
    results["machine"]["load_average_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    results["machine"]["other_processes_cores"] = other_load(cpu_start, cpu_snapshot(), cores)
    results["settings"]["total_s"] = time.perf_counter() - start

    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
