"""7. ``solver``: positions per second of :mod:`solitaire_env.solver` with a fixed node budget (1M, quick
20k) on deals it cannot settle within it, Rank and File and Rainbow: a fixed, repeatable workload.
"""

from __future__ import annotations

from typing import Any

from benchmarks.common import summary


def bench_solver(reps: int, nodes: int) -> dict:
    """Positions searched per second, on deals the solver cannot settle within ``nodes`` (a fixed workload).

    The search alone: without the two-deck games' agent guidance, whose playouts are not search positions.
    """
    from solitaire_env.solver import solve

    out: dict[str, Any] = {"nodes_per_solve": nodes}
    for game, seeds in (("rank_and_file", (14, 84)), ("rainbow", (5, 13))):  # not settled by the search in 60 s
        solve(game, seed=seeds[0], time_limit=None, max_nodes=1000, agent_guidance=False)  # compile or load
        rates = []
        for rep in range(reps):
            seed = seeds[rep % len(seeds)]
            r = solve(game, seed=seed, time_limit=None, max_nodes=nodes, agent_guidance=False)
            rates.append(r.nodes / r.seconds)
        out[game] = {"nodes_per_s": summary(rates), "seeds": list(seeds)}
    return out

