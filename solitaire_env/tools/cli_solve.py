"""The solver's subcommands of ``solitaire-env``: ``solve``, ``solvitaire``, ``label-deals`` and ``verify``.

``solve GAME --seeds A:B`` (or ``--retry CSV``) prints the winnable fraction with its 95% interval
(:mod:`solitaire_env.tools.winnability`); ``label-deals`` remakes the shipped per-deal answers;
``verify`` replays their winning lines; ``solvitaire`` writes deals for an independent solver.
"""

from __future__ import annotations

import argparse
import os
import sys

from solitaire_env.envs.registration import ENV_IDS
from solitaire_env.tools.cli_args import add_ray_option, check_resume, make_backend, positive_int, seed_range


def add_solver_commands(commands: argparse._SubParsersAction) -> None:
    """Add the solver's subcommands to the ``solitaire-env`` parser's ``commands``."""
    so = commands.add_parser(
        "solve", help="solve deals with every card known: how winnable is a game",
        description="Solve deals A .. B-1 of GAME with the perfect-information solver, in parallel, writing "
                    "one CSV row per deal and printing the winnable fraction with its 95% interval.")
    so.add_argument("game", metavar="GAME",
                    help="rank_and_file, number_ten, rainbow, freecell (freecell_3cells: 3 cells) or klondike (draw 1, "
                         "unlimited redeals; klondike_draw3, klondike_redeals2, klondike_draw3_redeals0, ...), or an "
                         "env id")
    seeds = so.add_mutually_exclusive_group(required=True)
    seeds.add_argument("--seeds", type=seed_range, metavar="A:B", help="deals A to B-1, e.g. 0:1000")
    seeds.add_argument("--retry", metavar="CSV",
                       help="a second pass over the deals a previous run's CSV left unknown; the new CSV and "
                            "summary cover every deal of the previous run")
    so.add_argument("--time-limit", type=float, default=60.0, metavar="S", help="seconds per deal (default 60)")
    so.add_argument("--max-nodes", type=positive_int, metavar="N", help="positions per deal (default: no limit)")
    so.add_argument("--memory", type=positive_int, default=512, metavar="MB",
                    help="transposition table per job, MB (default 512)")
    so.add_argument("--restart-share", type=float, metavar="F",
                    help="share of each deal's limits given to the restarted searches over promising moves, "
                         "which find wins; the rest goes to the complete search, which alone can prove a loss "
                         "(default 0.9, Klondike 0.2; in [0, 1); Rainbow's first search is complete and ignores it)")
    so.add_argument("--stock-macros", action=argparse.BooleanOptionalAction, default=None,
                    help="search 'draw to a card and play it' as one move instead of single draws: sound, fewer "
                         "positions (default: on for Rainbow, off for the two-deck games)")
    so.add_argument("--agent-guidance", action=argparse.BooleanOptionalAction, default=None,
                    help="between restarts, play whole games with the noisy heuristic agent and, now and "
                         "then, a rollout over a greedy player; every other restart orders moves by the "
                         "agent's rules (default: on for the two-deck games, off for Rainbow, whose search "
                         "never restarts)")
    so.add_argument("--jobs", type=positive_int, metavar="J", help="worker processes (default: one per core)")
    so.add_argument("--csv", metavar="FILE", help="write one row per deal to FILE, as each deal finishes")
    so.add_argument("--json", metavar="FILE", help="write the summary to FILE")
    so.add_argument("--resume", action="store_true",
                    help="--csv FILE holds rows of an interrupted run of this command: solve only the other deals")
    add_ray_option(so)
    so.add_argument("--no-progress", action="store_true", help="no progress bar")
    so.set_defaults(run=_solve, command_parser=so)

    sv = commands.add_parser(
        "solvitaire", help="export Rank and File deals as input files for the Solvitaire solver",
        description="Write deals A .. B-1 of Rank and File as Solvitaire deal files (its rank-and-file "
                    "preset), to cross-check the solver's figures with an independent solver.")
    sv.add_argument("--seeds", required=True, type=seed_range, metavar="A:B", help="deals A to B-1, e.g. 0:20")
    sv.add_argument("--out", required=True, metavar="DIR", help="directory for rank_and_file-SEED.json")
    sv.set_defaults(run=_solvitaire, command_parser=sv)

    ld = commands.add_parser(
        "label-deals", help="remake the shipped per-deal winnability data (docs/winnability.md)",
        description="Solve deals 0-999 of each GAME (Microsoft deals 1-1000 of FreeCell) in the two node-limited "
                    "passes of the shipped data and "
                    "write GAME.csv.gz and GAME.json (by default into the package's data folder, replacing "
                    "the shipped files). An interrupted run reuses every finished pass.")
    ld.add_argument("games", nargs="*", metavar="GAME",
                    help="games to label (default: all six, Klondike's draw 1 and klondike_draw3 among them)")
    ld.add_argument("--out", metavar="DIR", help="write there instead of the package's data folder")
    ld.add_argument("--seeds", type=seed_range, metavar="A:B",
                    help="only deals A to B-1 (default 0:1000; FreeCell 1:1001)")
    ld.add_argument("--jobs", type=positive_int, metavar="J", help="worker processes (default: one per core)")
    ld.add_argument("--no-progress", action="store_true", help="no progress bar")
    ld.set_defaults(run=_label_deals, command_parser=ld)

    ve = commands.add_parser(
        "verify", help="replay every winning line of a solve CSV or of the shipped data",
        description="Replay every 'won' row's winning line through the engine from its deal and check that it "
                    "ends won. SOURCE is a game (its shipped data) or a solve CSV (--game names its game if "
                    "the file name does not start with it).")
    ve.add_argument("source", metavar="GAME_OR_FILE")
    ve.add_argument("--game", metavar="GAME", help="the game of a CSV file")
    ve.set_defaults(run=_verify, command_parser=ve)


def _solve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import json

    from solitaire_env.solver import SolveOptions
    from solitaire_env.solver.api import check_solvable
    from solitaire_env.solver.winnability import merge_results, read_results, solve_deals, write_results
    from solitaire_env.tools.winnability import default_jobs, format_summary, parse_seeds, solver_options, summarize

    game = ENV_IDS[args.game][1] if args.game in ENV_IDS else args.game
    try:
        check_solvable(game)
        earlier = read_results(args.retry) if args.retry else []
        seeds = parse_seeds(args.seeds) if args.seeds else [r.seed for r in earlier if r.result == "unknown"]
    except ValueError as e:
        parser.error(str(e))
    except OSError as e:
        parser.error(f"cannot read {args.retry}: {e.strerror or e}")
    if not seeds:
        parser.error(f"{args.retry} leaves no deal unknown: nothing to retry")
    if not args.time_limit > 0:
        parser.error(f"--time-limit must be positive (seconds), got {args.time_limit}")
    if args.restart_share is not None and not 0 <= args.restart_share < 1:
        parser.error(f"--restart-share must be at least 0 and below 1, got {args.restart_share}")
    for path in (args.csv, args.json):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"cannot write {path}: no such directory")
    check_resume(args, parser)
    backend = make_backend(args, parser, jobs=args.jobs or default_jobs())
    options = solver_options(SolveOptions(time_limit=args.time_limit, max_nodes=args.max_nodes, memory_mb=args.memory,
                                          first_phase=args.restart_share, stock_macros=args.stock_macros,
                                          agent_guidance=args.agent_guidance), game)
    attempt = 1 + max((r.attempt for r in earlier), default=0)
    try:
        results = solve_deals(game, seeds, options, progress=not args.no_progress, csv_path=args.csv,
                              attempt=attempt, backend=backend, resume=args.resume)
    except ValueError as e:  # a --resume CSV that is not a solve CSV
        parser.error(str(e))
    if args.retry:
        # The second pass's answer for every deal of the first: its decided rows plus the new ones.
        decided = sum(r.result != "unknown" for r in results)
        results = merge_results(earlier, results)
        if args.csv:
            write_results(args.csv, results)
    summary = summarize(game, results, args.time_limit)
    failed = [r for r in results if r.reason.startswith("error: ")]
    if args.retry:
        summary.update(retried=len(seeds), decided_on_retry=decided)
    print(format_summary(summary))
    if args.csv:
        print(f"wrote {args.csv}")
    if failed:
        summary["failed"] = len(failed)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
        print(f"wrote {args.json}")
    if failed:
        # Counted as unknown above; their rows say why, and --retry runs them again.
        for r in failed[:20]:
            print(f"failed: deal {r.seed}: {r.reason.removeprefix('error: ')}", file=sys.stderr)
        retry = f": solitaire-env solve {game} --retry {args.csv} ... runs them again" if args.csv else ""
        print(f"{len(failed)} deals failed and count as unknown{retry}", file=sys.stderr)
        return 1
    return 0


def _label_deals(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from solitaire_env.solver.winnability import DATA_DIR, GAMES
    from solitaire_env.tools.winnability import default_jobs, format_summary, make_labels, parse_seeds

    games = []
    for g in args.games or GAMES:
        name = ENV_IDS[g][1].name if g in ENV_IDS else g
        if name not in GAMES:
            parser.error(f"unknown game {g!r}; known: {', '.join(GAMES)}")
        games.append(name)
    deals = parse_seeds(args.seeds) if args.seeds else None  # None: each game's own (make_labels)
    out = args.out or DATA_DIR
    for game in games:
        summary = make_labels(game, jobs=args.jobs or default_jobs(), out_dir=out, progress=not args.no_progress,
                              deals=deals)
        print(format_summary(summary))
        print(f"wrote {os.path.join(out, game + '.csv.gz')} and {game}.json")
    return 0


def _verify(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import time

    from solitaire_env.engine.games import get_variant
    from solitaire_env.solver.winnability import GAMES, data_path, read_results, replay_lines

    source = ENV_IDS[args.source][1].name if args.source in ENV_IDS else args.source
    if source in GAMES:
        game, path = source, data_path(source)
    else:
        path = source
        base = os.path.basename(path)
        game = args.game or next((g for g in GAMES if base.startswith(g)), None)
        if game is None:
            parser.error(f"say which game {path} holds: --game {' | '.join(GAMES)}")
        game = ENV_IDS[game][1].name if game in ENV_IDS else game
        try:  # a solve CSV may hold any game the solver plays (klondike_draw3, freecell_3cells, ...)
            game = get_variant(game).name
        except ValueError as e:
            parser.error(str(e))
    try:
        rows = read_results(path)
    except FileNotFoundError:
        parser.error(f"no such file: {path}")
    except (OSError, ValueError) as e:
        parser.error(str(e))
    start = time.perf_counter()
    replayed, failures = replay_lines(game, rows)
    seconds = time.perf_counter() - start
    for seed, why in failures:
        print(f"deal {seed}: {why}")
    counts = {a: sum(r.result == a for r in rows) for a in ("won", "lost", "unknown")}
    print(f"{path}: {len(rows)} deals of {game} (won {counts['won']}, lost {counts['lost']}, unknown "
          f"{counts['unknown']}); {replayed - len(failures)} of {replayed} winning lines replay to a win "
          f"({seconds:.1f} s)")
    return 1 if failures else 0


def _solvitaire(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from solitaire_env.solver.solvitaire import export_deals
    from solitaire_env.tools.winnability import parse_seeds

    try:
        seeds = parse_seeds(args.seeds)
        paths = export_deals(seeds, args.out)
    except ValueError as e:
        parser.error(str(e))
    except OSError as e:
        parser.error(f"cannot write to {args.out}: {e.strerror or e}")
    print(f"wrote {len(paths)} deals to {args.out}; solve one with: "
          f"solvitaire --type rank-and-file --timeout 30000 {paths[0]}")
    return 0
