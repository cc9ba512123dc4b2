"""Agents beside the solver's ceiling, over the same deals: one table.

Run (everything from scratch; long: the solver and the agents play every deal):
    python examples/ceiling.py --env Rainbow-v0 --episodes 1000 --agent random --agent heuristic \\
        --agent search --agent runs/rainbow/best_model.zip --solve-nodes 4000000 --jobs 2
Or from saved runs (as docs/baselines.md does):
    python examples/ceiling.py --env Rainbow-v0 --eval-json rainbow.json --solve-csv solve_rainbow.csv

The solver row counts the deals it proved winnable (every card known); its upper bound counts the
undecided ones as winnable too. An agent's win is a proof as well (its moves went through the env),
so undecided deals some agent won are counted in one more row. It also checks the two agree: a deal
the solver calls lost must not have been won by any agent (exit status 1 if one was).
"""

import argparse
import csv
import json
import sys

from solitaire_env.envs.registration import ENV_IDS
from solitaire_env.tools.evaluation import wilson_interval


def agent_rows(args) -> tuple[list[dict], dict[str, set[int]], range]:
    """One summary per agent (evaluated now or loaded), and the deals each agent won."""
    summaries, records = {}, []
    if args.agent:
        from solitaire_env.agents import make_agent
        from solitaire_env.tools.evaluation import evaluate

        agents = {name: make_agent(name, args.env, seed=args.seed) for name in args.agent}
        result = evaluate(args.env, agents, args.episodes, args.seed, progress=True).to_dict()
        summaries.update(result["summaries"])
        records += result["records"]
    for path in args.eval_json or []:
        with open(path) as f:
            result = json.load(f)
        if result["env_id"] != args.env:
            sys.exit(f"{path} evaluates {result['env_id']}, not {args.env}")
        summaries.update(result["summaries"])
        records += result["records"]
    won: dict[str, set[int]] = {}
    for r in records:
        if r["won"]:
            won.setdefault(r["agent"], set()).add(int(r["deal_seed"]))
    seeds = sorted({int(r["deal_seed"]) for r in records})
    deals = range(seeds[0], seeds[-1] + 1) if seeds else range(args.seed, args.seed + args.episodes)
    return list(summaries.values()), won, deals


def solver_rows(args, seeds: range) -> list[dict]:
    if args.solve_csv:
        with open(args.solve_csv) as f:
            rows = [{**r, "seed": int(r["seed"])} for r in csv.DictReader(f)]
        return [r for r in rows if r["seed"] in seeds]
    from dataclasses import asdict

    from solitaire_env.solver import SolveOptions
    from solitaire_env.solver.winnability import DEALS_MEMORY_MB, solve_deals
    from solitaire_env.tools.winnability import solver_options

    game = ENV_IDS[args.env][1].name
    options = solver_options(SolveOptions(time_limit=None, max_nodes=args.solve_nodes, memory_mb=DEALS_MEMORY_MB), game)
    results = solve_deals(game, seeds, options, jobs=args.jobs, progress=True)
    return [asdict(r) for r in results]


def _seed_list(seeds: set[int]) -> str:
    return ", ".join(str(s) for s in sorted(seeds))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", required=True, choices=list(ENV_IDS))
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agent", action="append", help="an agent to evaluate now (repeat)")
    parser.add_argument("--eval-json", action="append", help="a saved `solitaire-env evaluate --json` file (repeat)")
    parser.add_argument("--solve-csv", help="a saved `solitaire-env solve --csv` file")
    parser.add_argument("--solve-nodes", type=int, default=4_000_000, help="solver positions per deal")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    summaries, won_by, seeds = agent_rows(args)
    solved = solver_rows(args, seeds)
    lines = [f"{args.env}, deals {seeds.start}-{seeds.stop - 1}", "",
             "| player | wins | win rate | 95% CI | foundation cards (mean) |", "|---|---:|---:|---:|---:|"]
    for s in summaries:
        lo, hi = s["win_rate_ci95"]
        lines.append(f"| {s['agent']} | {s['wins']} | {100 * s['win_rate']:.1f}% | {100 * lo:.1f}% - {100 * hi:.1f}% "
                     f"| {s['mean_foundation_cards']:.2f} |")
    n = len(solved)
    won = sum(r["result"] == "won" for r in solved)
    unknown = sum(r["result"] == "unknown" for r in solved)
    lo, hi = wilson_interval(won, n)
    lines.append(f"| solver, every card known: proved winnable | {won} | {100 * won / n:.1f}% | "
                 f"{100 * lo:.1f}% - {100 * hi:.1f}% | |")
    undecided = {r["seed"] for r in solved if r["result"] == "unknown"}
    won_by_agent = undecided & set().union(*won_by.values())
    if won_by_agent:
        lo, hi = wilson_interval(won + len(won_by_agent), n)
        lines.append(f"| winnable: proved by the solver or won by an agent (deals {_seed_list(won_by_agent)}) "
                     f"| {won + len(won_by_agent)} | {100 * (won + len(won_by_agent)) / n:.1f}% | "
                     f"{100 * lo:.1f}% - {100 * hi:.1f}% | |")
    lo, hi = wilson_interval(won + unknown, n)
    lines.append(f"| solver: winnable or undecided ({unknown} undecided) | {won + unknown} | "
                 f"{100 * (won + unknown) / n:.1f}% | {100 * lo:.1f}% - {100 * hi:.1f}% | |")
    print("\n".join(lines))
    lost = {r["seed"] for r in solved if r["result"] == "lost"}
    clashes = {agent: sorted(lost & deals) for agent, deals in won_by.items() if lost & deals}
    if clashes:
        print(f"INCONSISTENT: deals the solver calls lost were won: {clashes}")
        return 1
    print(f"\nconsistency: none of the {len(lost)} deals the solver proved lost was won by an agent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
