"""How winnable is a game: the solver over a range of deals, in parallel, with a summary.

``solitaire-env solve GAME --seeds A:B [--time-limit S] [--jobs J] [--csv FILE]`` (or ``--retry
FILE``: a second pass over the deals an earlier run's CSV left unknown, whose CSV and summary then
cover every deal of the earlier run) runs
:func:`solve_deals`: each deal is solved in a worker process (one per job, each with its own
transposition table of ``memory_mb``), one CSV row per deal is written as results come in, and the
summary gives the winnable fraction with its 95% Wilson interval. Deals the solver could not decide
within the limits count as ``unknown``: the summary states how many, and the interval of the
winnable fraction is given both ways (all unknown deals lost, all won).
"""

from __future__ import annotations

import csv
import os
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any

from solitaire_env.engine.games import get_variant
from solitaire_env.parallel import Backend, TaskError, run_tasks
from solitaire_env.solver import SolveOptions, solve
from solitaire_env.tools.evaluation import wilson_interval

# Each worker's transposition table unless told otherwise (the solve command's --memory default).
DEALS_MEMORY_MB = 512
CSV_COLUMNS = ("seed", "result", "reason", "nodes", "seconds", "solution_length", "best_foundation")


@dataclass
class DealResult:
    seed: int
    result: str
    reason: str
    nodes: int
    seconds: float
    solution_length: int
    best_foundation: int


def parse_seeds(text: str) -> range:
    """``"A:B"`` -> deals A .. B-1 (like a Python slice); ``"N"`` -> deal N alone."""
    try:
        if ":" in text:
            a, b = text.split(":")
            start, stop = int(a), int(b)
        else:
            start = int(text)
            stop = start + 1
    except ValueError:
        raise ValueError(f"bad seed range {text!r}: write A:B (deals A to B-1) or one deal number") from None
    if start < 0 or stop <= start:
        raise ValueError(f"bad seed range {text!r}: need 0 <= A < B")
    return range(start, stop)


def read_results(csv_path: str) -> list[DealResult]:
    """The rows of a previous run's CSV (``solitaire-env solve --csv``), in seed order."""
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not {"seed", "result"} <= set(reader.fieldnames):
            raise ValueError(f"{csv_path} is not a solve CSV (needs 'seed' and 'result' columns)")
        rows = []
        for line, row in enumerate(reader, start=2):
            try:
                rows.append(DealResult(
                    seed=int(row["seed"]), result=row["result"], reason=row.get("reason") or "",
                    nodes=int(row.get("nodes") or 0), seconds=float(row.get("seconds") or 0.0),
                    solution_length=int(row.get("solution_length") or 0),
                    best_foundation=int(row.get("best_foundation") or 0)))
            except (TypeError, ValueError):
                raise ValueError(f"{csv_path}, line {line}: not a solve CSV row: {row}") from None
            if rows[-1].result not in ("won", "lost", "unknown"):
                raise ValueError(f"{csv_path}, line {line}: result must be won, lost or unknown, "
                                 f"got {row['result']!r}")
    return sorted(rows, key=lambda r: r.seed)


def unknown_seeds(csv_path: str) -> list[int]:
    """The deals a previous run's CSV (``solitaire-env solve --csv``) left ``unknown``."""
    return [r.seed for r in read_results(csv_path) if r.result == "unknown"]


def merge_results(earlier: Iterable[DealResult], later: Iterable[DealResult]) -> list[DealResult]:
    """One row per deal, in seed order: a later pass's row replaces an earlier one for the same deal."""
    rows = {r.seed: r for r in earlier}
    rows.update((r.seed, r) for r in later)
    return [rows[s] for s in sorted(rows)]


def write_results(csv_path: str, results: Iterable[DealResult]) -> None:
    # Written beside, then moved over: an interruption never leaves the file with fewer rows than it had.
    partial = f"{csv_path}.partial"
    with open(partial, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(asdict(r) for r in results)
    os.replace(partial, csv_path)


def _solve_one(context: tuple[str, SolveOptions], seed: int) -> DealResult:
    game, options = context
    r = solve(game, seed=seed, options=options)
    return DealResult(seed, r.result, r.reason, r.nodes, round(r.seconds, 4), r.solution_length, r.best_foundation)


def _failed(seed: int, error: str) -> DealResult:
    """The row of a deal whose task failed: undecided, with the error as its reason (``--retry`` runs it again)."""
    return DealResult(seed=seed, result="unknown", reason=f"error: {error}", nodes=0, seconds=0.0, solution_length=0,
                      best_foundation=0)


def solve_deals(game: str, seeds: Iterable[int], options: SolveOptions | None = None, jobs: int = 1,
                progress: bool = False, csv_path: str | None = None, backend: Backend | None = None,
                resume: bool = False, **overrides: Any) -> list[DealResult]:
    """Solve every deal in ``seeds``; results in the order of ``seeds``.

    Where: ``backend`` (:class:`~solitaire_env.parallel.Backend`: this process, local processes or
    Ray), else ``jobs`` worker processes (1: this process). Each deal is solved by
    :func:`~solitaire_env.solver.solve` with ``options`` (default
    ``SolveOptions(memory_mb=DEALS_MEMORY_MB)``), any of whose fields ``overrides`` replace. With agent
    guidance and no ``playout`` given, the noisy heuristic agent plays the playouts
    (:func:`agents.heuristic.playout`): this layer, unlike the solver, may use the agents.

    ``csv_path`` gets one row per deal as each finishes (an interrupted run keeps every finished
    deal), then, at the end, all rows in the order of ``seeds``. ``resume``: the deals already in
    ``csv_path`` are kept, not solved again. A deal whose task failed (an exception, or under Ray a
    worker that died on every retry) is ``unknown`` with reason ``error: ...``.
    """
    variant = get_variant(game)
    seeds = list(dict.fromkeys(seeds))  # a deal named twice is solved once
    if backend is None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        backend = Backend(jobs=jobs)
    options = replace(options or SolveOptions(memory_mb=DEALS_MEMORY_MB), **overrides).for_game(variant)
    if options.agent_guidance and options.playout is None:
        from agents.heuristic import playout  # the agents import the engine: loaded only when needed

        options = replace(options, playout=playout)
    wanted = set(seeds)
    done: dict[int, DealResult] = {}
    if resume and csv_path and os.path.exists(csv_path):
        done = {r.seed: r for r in read_results(csv_path) if r.seed in wanted}
    todo = [s for s in seeds if s not in done]
    out = open(csv_path, "a" if done else "w", newline="") if csv_path else None  # noqa: SIM115 (rows as they come)
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS) if out else None
    if writer and not done:
        writer.writeheader()
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=len(seeds), initial=len(seeds) - len(todo), desc=f"solve {variant.name}", unit="deal")
        except ImportError:
            bar = None
    results = dict(done)
    won = sum(r.result == "won" for r in done.values())
    unknown = sum(r.result == "unknown" for r in done.values())
    try:
        for i, r in run_tasks(_solve_one, todo, context=(variant.name, options), backend=backend):
            if isinstance(r, TaskError):
                r = _failed(todo[i], r.error)
            results[r.seed] = r
            won += r.result == "won"
            unknown += r.result == "unknown"
            if writer:
                writer.writerow(asdict(r))
                out.flush()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(won=won, unknown=unknown)
    finally:
        if bar is not None:
            bar.close()
        if out:
            out.close()
    ordered = [results[s] for s in seeds]
    if csv_path:
        write_results(csv_path, ordered)  # finished: the rows in seed order, as a one-process run writes them
    return ordered


def summarize(game: str, results: list[DealResult], time_limit: float | None) -> dict:
    """Counts, the winnable fraction with its 95% Wilson interval, and solve-time percentiles."""
    n = len(results)
    won = sum(r.result == "won" for r in results)
    lost = sum(r.result == "lost" for r in results)
    unknown = n - won - lost
    times = sorted(r.seconds for r in results)
    decided = sorted(r.seconds for r in results if r.result != "unknown")
    low = wilson_interval(won, n)
    high = wilson_interval(won + unknown, n)
    return {
        "game": get_variant(game).name,
        "deals": n,
        "seeds": f"{results[0].seed}-{results[-1].seed}" if results else "",
        "time_limit": time_limit,
        "won": won,
        "lost": lost,
        "unknown": unknown,
        "winnable": won / n if n else 0.0,
        "winnable_ci95": low,
        # If every unknown deal were winnable: the most the winnable fraction can be.
        "winnable_if_unknown_won": (won + unknown) / n if n else 0.0,
        "winnable_if_unknown_won_ci95": high,
        "median_seconds": statistics.median(times) if times else 0.0,
        "p95_seconds": times[min(len(times) - 1, int(0.95 * len(times)))] if times else 0.0,
        "median_seconds_decided": statistics.median(decided) if decided else 0.0,
        "nodes_per_second": sum(r.nodes for r in results) / max(sum(times), 1e-9),
    }


def format_summary(s: dict) -> str:
    lo, hi = s["winnable_ci95"]
    lines = [
        f"{s['game']}: deals {s['seeds']} ({s['deals']}), time limit {s['time_limit']} s per deal",
        f"  won {s['won']}, lost {s['lost']}, unknown {s['unknown']}",
        f"  winnable: {100 * s['winnable']:.1f}% (95% CI {100 * lo:.1f}% - {100 * hi:.1f}%) counting unknown as lost",
    ]
    if s["unknown"]:
        lo2, hi2 = s["winnable_if_unknown_won_ci95"]
        lines.append(f"  at most {100 * s['winnable_if_unknown_won']:.1f}% (95% CI {100 * lo2:.1f}% - "
                     f"{100 * hi2:.1f}%) if every unknown deal is winnable")
    if "retried" in s:
        lines.append(f"  this pass retried the {s['retried']} deals the earlier run left unknown and decided "
                     f"{s['decided_on_retry']} of them; the figures above count every deal of both")
    lines.append(f"  solve time: median {s['median_seconds']:.3f} s, 95th percentile {s['p95_seconds']:.3f} s; "
                 f"{s['nodes_per_second'] / 1e3:.0f}k nodes/s")
    return "\n".join(lines)


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


__all__ = ["CSV_COLUMNS", "DEALS_MEMORY_MB", "DealResult", "format_summary", "merge_results", "parse_seeds",
           "read_results", "solve_deals", "summarize", "unknown_seeds", "write_results"]
