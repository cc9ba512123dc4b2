"""The winnability report and the shipped per-deal answers' making: what ``solitaire-env solve`` prints and
``solitaire-env label-deals`` writes.

The solver layer (:mod:`solitaire_env.solver.winnability`) solves the deals and reads and writes their
rows; this module sums them up (the winnable fraction with its 95% Wilson interval, counting the
undecided deals both ways), parses the command line's deal ranges, and gives the solver the noisy
heuristic agent as the player of its playouts where agent guidance is on.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from solitaire_env.engine.games import get_variant
from solitaire_env.solver import SolveOptions
from solitaire_env.solver.winnability import (
    DATA_DIR,
    DealResult,
    merge_results,
    read_results,
    solve_deals,
    write_results,
)
from solitaire_env.tools.evaluation import wilson_interval

# Deals 0-999 of each game, solved in two node-limited passes, so a re-run gives the same answers on any
# machine (docs/winnability.md): the second pass searches again, from scratch and with a larger budget,
# every deal the first left unknown. The time limits only guard against a stuck run; a pass never
# reaches them on a machine like the one that made the files.
LABEL_DEALS = range(0, 1000)
# FreeCell's deals are Microsoft's numbers, which players count from 1: its shipped answers are for 1-1000.
MS_LABEL_DEALS = range(1, 1001)
LABEL_PASSES = (SolveOptions(max_nodes=4_000_000, time_limit=600.0, memory_mb=128),
                SolveOptions(max_nodes=30_000_000, time_limit=3600.0, memory_mb=1024))


def solver_options(options: SolveOptions, game: str) -> SolveOptions:
    """``options`` with the game's defaults filled in and, where agent guidance is on and no ``playout``
    is given, the noisy heuristic agent (:func:`solitaire_env.agents.heuristic.playout`) as the playouts' player."""
    options = options.for_game(get_variant(game))
    if options.agent_guidance and options.playout is None:
        from solitaire_env.agents.heuristic import playout

        options = replace(options, playout=playout)
    return options


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


def _p95(values: list[float]) -> float:
    """The 95th percentile by nearest rank: the smallest value at least 95% of the values do not exceed."""
    xs = sorted(values)
    return xs[math.ceil(0.95 * len(xs)) - 1] if xs else 0.0


def passes_of(results: list[DealResult]) -> list[dict]:
    """Each pass over the deals (1: the first run, 2: its retry, ...) with its budget per deal, the deals it
    searched and those it decided, read from the rows (a row names the pass that gave its answer)."""
    out = []
    for k in range(1, max((r.attempt for r in results), default=0) + 1):
        mine = [r for r in results if r.attempt == k]
        searched = sum(r.attempt >= k for r in results)  # a pass searches what the earlier ones left unknown
        out.append({"pass": k, "max_nodes": mine[0].max_nodes if mine else None,
                    "time_limit": mine[0].time_limit if mine else None, "searched": searched,
                    "won": sum(r.result == "won" for r in mine), "lost": sum(r.result == "lost" for r in mine)})
    return out


def summarize(game: str, results: list[DealResult], time_limit: float | None) -> dict:
    """Counts, the winnable fraction with its 95% Wilson interval, each pass's budget, and medians (true
    medians: the mean of the two middle values of an even count) and 95th percentiles of positions,
    seconds and winning-line length."""
    n = len(results)
    won = sum(r.result == "won" for r in results)
    lost = sum(r.result == "lost" for r in results)
    unknown = n - won - lost
    times = [r.seconds for r in results]
    nodes = [r.nodes for r in results]
    decided = [r.seconds for r in results if r.result != "unknown"]
    lines = [r.solution_length for r in results if r.result == "won"]
    low = wilson_interval(won, n)
    high = wilson_interval(won + unknown, n)
    return {
        "game": get_variant(game).name,
        "deals": n,
        "seeds": f"{results[0].seed}-{results[-1].seed}" if results else "",
        "time_limit": time_limit,
        "passes": passes_of(results),
        "won": won,
        "lost": lost,
        "unknown": unknown,
        "winnable": won / n if n else 0.0,
        "winnable_ci95": low,
        # If every unknown deal were winnable: the most the winnable fraction can be.
        "winnable_if_unknown_won": (won + unknown) / n if n else 0.0,
        "winnable_if_unknown_won_ci95": high,
        "median_seconds": statistics.median(times) if times else 0.0,
        "p95_seconds": _p95(times),
        "median_seconds_decided": statistics.median(decided) if decided else 0.0,
        "median_nodes": statistics.median(nodes) if nodes else 0,
        "p95_nodes": _p95(nodes),
        "median_line": statistics.median(lines) if lines else 0,
        "max_line": max(lines, default=0),
        "nodes_per_second": sum(nodes) / max(sum(times), 1e-9),
    }


def format_summary(s: dict) -> str:
    lo, hi = s["winnable_ci95"]
    lines = [
        f"{s['game']}: deals {s['seeds']} ({s['deals']}), "
        + (f"time limit {s['time_limit']:g} s per deal" if s["time_limit"] else "budgets per pass below"),
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
    if len(s.get("passes", [])) > 1:
        for p in s["passes"]:
            budget = ", ".join(b for b in (f"{p['max_nodes']:,} positions" if p["max_nodes"] else "",
                                           f"{p['time_limit']:g} s" if p["time_limit"] else "") if b)
            lines.append(f"  pass {p['pass']} ({budget or 'no limit'} per deal): searched {p['searched']} deals, "
                         f"won {p['won']}, lost {p['lost']}")
    lines.append(f"  solve time: median {s['median_seconds']:.3f} s, 95th percentile {s['p95_seconds']:.3f} s; "
                 f"{s['nodes_per_second'] / 1e3:.0f}k nodes/s")
    return "\n".join(lines)


def make_labels(game: str, jobs: int = 1, out_dir: str | os.PathLike = DATA_DIR, progress: bool = False,
                deals: Iterable[int] | None = None) -> dict:
    """Solve ``deals`` of ``game`` (default: :func:`label_deals`) in the passes of :data:`LABEL_PASSES` and
    write ``GAME.csv.gz`` and ``GAME.json`` (the summary) into ``out_dir``. Each pass's rows also go to
    ``GAME-passK.csv`` there as they come, and a complete pass file found there is reused, so an interrupted
    run continues. Returns the summary.
    """
    game = get_variant(game).name
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    deals = list(label_deals(game) if deals is None else deals)
    results: list[DealResult] = []
    each_pass = []  # each pass's own summary, over the deals it searched
    seeds = deals
    for k, options in enumerate(LABEL_PASSES, start=1):
        if not seeds:
            break
        part = out / f"{game}-pass{k}.csv"
        done = read_results(part) if part.exists() else []
        if [r.seed for r in done] != sorted(seeds):
            # resume: a pass cut short keeps the rows it wrote and solves only the rest
            done = solve_deals(game, seeds, solver_options(options, game), jobs=jobs, progress=progress,
                               csv_path=str(part), attempt=k,
                               resume=True)
        each_pass.append(summarize(game, done, options.time_limit))
        results = merge_results(results, done)
        seeds = [r.seed for r in done if r.result == "unknown"]
    write_results(out / f"{game}.csv.gz", results)
    summary = summarize(game, results, None)
    summary["command"] = f"solitaire-env label-deals {game}"
    summary["solver_options"] = [{"max_nodes": o.max_nodes, "time_limit": o.time_limit, "memory_mb": o.memory_mb}
                                 for o in LABEL_PASSES]
    summary["each_pass"] = each_pass
    (out / f"{game}.json").write_text(json.dumps(summary, indent=1) + "\n")
    for k in range(1, len(LABEL_PASSES) + 1):  # the pass files were only there to resume
        (out / f"{game}-pass{k}.csv").unlink(missing_ok=True)
    return summary


def label_deals(game: str) -> range:
    """The deals whose answers are shipped for ``game``: :data:`LABEL_DEALS`, or :data:`MS_LABEL_DEALS` for a
    game dealt by Microsoft's numbers (FreeCell)."""
    return MS_LABEL_DEALS if get_variant(game).shuffle == "microsoft" else LABEL_DEALS


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


__all__ = ["LABEL_DEALS", "LABEL_PASSES", "MS_LABEL_DEALS", "default_jobs", "format_summary", "label_deals",
           "make_labels", "parse_seeds", "passes_of", "solver_options", "summarize"]
