"""What running the deals as Ray tasks costs: ``solve --ray`` against ``solve --jobs J``, one after the other.

Run from the repository root (needs ``pip install -e '.[ray]'``)::

    python benchmarks/ray_overhead.py                     # Rainbow deals 0-999, 4M positions
    python benchmarks/ray_overhead.py --seeds 0:40        # a try in about a minute
    python benchmarks/ray_overhead.py --json out.json     # also the figures as JSON

Each run is the command a user types, ``solitaire-env solve rainbow --seeds A:B --max-nodes 4000000
--time-limit 600 --memory 128`` in a fresh process, timed from start to exit: first with ``--jobs J``
(local worker processes), then with ``--ray`` (a local Ray cluster of this machine's cores, started
by the command and counted in its time). Under the node limit every deal's answer is the same
anywhere, so the script also checks the two CSVs agree deal for deal (everything but the seconds)
and exits 1 if they do not. The target (issue #19): the Ray run takes at most 1.15x the local
run's wall time. Other processes skew both runs; the report says how many cores they kept busy.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# As bench.py: the checked-out package is the one measured, installed or not.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.common import cpu_snapshot, other_load  # noqa: E402

TARGET = 1.15


def _solve(args: argparse.Namespace, extra: list[str], csv_path: Path) -> dict:
    command = [sys.executable, "-m", "solitaire_env.tools.cli", "solve", args.game, "--seeds", args.seeds,
               "--max-nodes", str(args.max_nodes), "--time-limit", str(args.time_limit), "--memory",
               str(args.memory), "--no-progress", "--csv", str(csv_path), *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    before = cpu_snapshot()
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    # Child processes are this process's own time: other_load counts only what else ran.
    return {"command": " ".join(["solitaire-env", *command[3:]]), "wall_s": wall,
            "other_processes_cores": other_load(before, cpu_snapshot(), os.cpu_count() or 1),
            "summary": proc.stdout.strip().splitlines()[1:3]}


def _answers(csv_path: Path) -> dict[int, tuple]:
    with open(csv_path, newline="") as f:
        return {int(r["seed"]): tuple(v for k, v in sorted(r.items()) if k != "seconds") for r in csv.DictReader(f)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="rainbow")
    parser.add_argument("--seeds", default="0:1000", metavar="A:B")
    parser.add_argument("--max-nodes", type=int, default=4_000_000)
    parser.add_argument("--time-limit", type=float, default=600)
    parser.add_argument("--memory", type=int, default=128, metavar="MB")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="local processes (default: cores)")
    parser.add_argument("--address", default="", help="--ray's ADDRESS (default: start a local cluster)")
    parser.add_argument("--json", metavar="OUT.json")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        local = _solve(args, ["--jobs", str(args.jobs)], Path(tmp, "local.csv"))
        ray = _solve(args, ["--ray", *([args.address] if args.address else [])], Path(tmp, "ray.csv"))
        a, b = _answers(Path(tmp, "local.csv")), _answers(Path(tmp, "ray.csv"))
    differ = sorted(s for s in a.keys() | b.keys() if a.get(s) != b.get(s))
    ratio = ray["wall_s"] / local["wall_s"]
    result = {"seeds": args.seeds, "deals": len(a), "cores": os.cpu_count(), "jobs": args.jobs,
              "local": local, "ray": ray, "ratio": ratio, "target": TARGET, "deals_that_differ": differ}
    print(f"{args.game} deals {args.seeds} ({len(a)}), {args.max_nodes} positions per deal, {os.cpu_count()} cores")
    for name, run in (("--jobs", local), ("--ray", ray)):
        busy = run["other_processes_cores"]
        print(f"  {name:7} {run['wall_s']:8.1f} s   (other processes: {busy:.2f} cores)   {run['command']}")
    print(f"  ratio   {ratio:8.3f}     target at most {TARGET} ({'met' if ratio <= TARGET else 'NOT met'})")
    print(f"  answers: {'the same for every deal' if not differ else f'{len(differ)} deals differ: {differ[:20]}'}")
    print(f"  | {args.game}, deals {args.seeds} | {local['wall_s']:.1f} s | {ray['wall_s']:.1f} s | "
          f"{ratio:.3f} | {'same' if not differ else 'DIFFER'} |")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
