"""The ``solitaire-env`` command: ``evaluate``, ``train``, ``plot``, ``play``, ``replay``, ``dataset``, and the solver's
``solve``, ``solvitaire``, ``label-deals`` and ``verify`` (:mod:`solitaire_env.tools.cli_solve`).

``solitaire-env evaluate --env ID --agent AGENT [--agent ...] --episodes N --seed S
[--env-kwargs JSON] [--csv FILE] [--json FILE] [--no-progress]`` plays each agent over the same deals (see
:mod:`solitaire_env.tools.evaluation`) and prints a table of the results. Bad input (an unknown env id or
agent, a missing checkpoint, a non-positive number of episodes) prints a one-line error and exits
with status 2. A command that needs a pip extra that is not installed says which in one line, status 1.

``solve`` and ``evaluate`` take ``--ray [ADDRESS]`` (the deals as Ray tasks, on a cluster or on a
Ray instance started here; :mod:`solitaire_env.parallel`) and ``--resume`` (go on from the rows an
interrupted run left in ``--csv``). A deal that fails is reported and the command exits 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import NoReturn

from solitaire_env.engine.deals import SPLITS
from solitaire_env.envs.registration import ENV_IDS
from solitaire_env.tools.cli_args import (
    add_ray_option,
    check_resume,
    json_object,
    make_backend,
    non_negative_int,
    positive_int,
)
from solitaire_env.tools.cli_solve import add_solver_commands
from solitaire_env.tools.extras import importable, stop_for_extra


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line (no usage dump) and status 2."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # argparse takes "-3:2" (a dash, then a digit) for an option and answers "expected one argument";
        # as a value, the option's own check can say what is wrong with it. No option here starts "-<digit>".
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _version() -> str:
    """The installed distribution's version; the package's own when it runs from a source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("solitaire-env")
    except PackageNotFoundError:
        from solitaire_env import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="solitaire-env", description="Rank and File, Number Ten and Rainbow: tools.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    ev = commands.add_parser(
        "evaluate", help="play agents over the same fixed deals and compare them",
        description="Play each agent over deals SEED .. SEED+N-1 (the same deals for every agent) under the "
                    "env's registered time limit, and print win rate (95% Wilson interval), foundation "
                    "cards, episode length and truncation rate per agent.")
    ev.add_argument("--env", required=True, metavar="ID", help=f"env id: {', '.join(ENV_IDS)}")
    ev.add_argument("--agent", required=True, action="append", metavar="AGENT", dest="agents",
                    help="'random', 'heuristic', 'search' (the determinized search agent), 'search:WxN' (W "
                         "guesses of the hidden cards per move, N solver positions each, e.g. search:8x1000), "
                         "'plan', 'plan:WxN' or 'plan:WxNxK' (the planning agent: W guesses whose winning lines "
                         "it keeps between moves, at most N solver positions a solve, K moves its hindsight check "
                         "compares; default 8x1000x3), 'plan-sliced', 'plan-sliced:WxNxK' (the same with the "
                         "solver's own slices: N checked only every 20,000 and 50,000 positions), 'pretrained' "
                         "(the env's shipped policy, "
                         "agents/pretrained/, greedy, in its own env options), PATH: a MaskablePPO .zip played "
                         "greedily or a run directory (its best_model.zip, else final_model.zip), or "
                         "'sample:PATH' (the checkpoint's policy sampled, seeded per "
                         "deal); repeat to compare several. pretrained, PATH and sample:PATH need the train extra")
    ev.add_argument("--episodes", required=True, type=positive_int, metavar="N", help="deals to play")
    ev.add_argument("--deals", choices=("test", "validation", "train"), default="test",
                    help="the split the deals come from (default test: deals 0-9999, what docs/baselines.md "
                         "reports; validation: 10000-19999, for choosing checkpoints; train: 20000 and up)")
    ev.add_argument("--seed", type=non_negative_int, metavar="S",
                    help="first deal, inside the split (default: the split's first deal, e.g. 0 for test)")
    ev.add_argument("--env-kwargs", type=json_object, default={}, metavar="JSON",
                    help='env arguments as a JSON object, e.g. \'{"no_revisit": true}\'')
    ev.add_argument("--csv", metavar="FILE", help="write one row per episode to FILE")
    ev.add_argument("--json", metavar="FILE", help="write the summaries and every episode to FILE")
    ev.add_argument("--record", metavar="DIR", help="write every episode to DIR as a replayable recording")
    ev.add_argument("--winnable-only", action="store_true",
                    help="play the first N deals from --seed on that the shipped solver data proves winnable "
                         "(test deals 0-999, docs/winnability.md); the table's 'wins of winnable' column is there "
                         "whenever some deal played has shipped data")
    ev.add_argument("--resume", action="store_true",
                    help="--csv FILE holds rows of an interrupted run of this command: play only the other episodes")
    add_ray_option(ev)
    ev.add_argument("--torch-threads", type=positive_int, default=1, metavar="N",
                    help="torch threads for the policies' play (default 1: two are about a fifth faster on an "
                         "idle 2-core machine, many times slower on a busy one)")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.set_defaults(run=_evaluate, command_parser=ev)

    tr = commands.add_parser(
        "train", help="train MaskablePPO (or PPO on the JAX backend) from a YAML config",
        description="Train MaskablePPO as CONFIG says (see configs/; backend: jax trains on the JAX backend); "
                    "the run directory gets checkpoints, "
                    "TensorBoard logs, evaluations, the final model and a learning curve.")
    tr.add_argument("config", metavar="CONFIG", help="YAML training config, e.g. configs/rainbow.yaml")
    tr.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                    help="override a config key (VALUE read as YAML; KEY dotted into a section, e.g. "
                         "hyperparams.learning_rate=1e-4; KEY=null removes it); may be repeated")
    tr.add_argument("--output", metavar="DIR", help="run directory (default: the config's output_dir)")
    tr.add_argument("--timesteps", type=positive_int, metavar="N",
                    help="override total_timesteps (as --set total_timesteps=N)")
    tr.add_argument("--evaluate", type=positive_int, metavar="N",
                    help="afterwards, evaluate the trained model beside random and heuristic on test deals 0 .. N-1")
    again = tr.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="the run directory holds this config's run: go on from its last checkpoint")
    again.add_argument("--overwrite", action="store_true",
                       help="the run directory holds a run: delete its files and start anew")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar")
    tr.set_defaults(run=_train, command_parser=tr)

    pl = commands.add_parser("plot", help="learning-curve PNG of a training run",
                             description="Plot mean evaluation return against timesteps for a run directory.")
    pl.add_argument("run_dir", metavar="RUN_DIR")
    pl.add_argument("--out", metavar="FILE", help="PNG path (default RUN_DIR/learning_curve.png)")
    pl.set_defaults(run=_plot, command_parser=pl)

    play = commands.add_parser("play", help="play a game in the terminal",
                               description="Play Rank and File, Number Ten, Rainbow, FreeCell or Klondike in the "
                                           "terminal. Type 'help' at the prompt for the move notation.")
    play.add_argument("game", nargs="?", metavar="GAME",
                      help="rank_and_file, number_ten, rainbow, freecell, freecell_Ncells, klondike, "
                           "klondike_draw3, klondike_redealsN or klondike_draw3_redealsN (or an env id)")
    play.add_argument("--seed", type=non_negative_int, metavar="S", help="deal number (default: a random deal)")
    play.add_argument("--state", metavar="FILE", help="start from a saved JSON position (docs/state_format.md)")
    play.set_defaults(run=_play, command_parser=play)

    add_solver_commands(commands)

    rp = commands.add_parser("replay", help="replay a recorded episode as GIF, HTML or in the terminal",
                             description="Replay a recording (docs/recordings.md) to a GIF, a self-contained "
                                         "HTML page with step buttons, or step through it in the terminal.")
    rp.add_argument("recording", metavar="FILE")
    rp.add_argument("--gif", metavar="OUT.gif", help="write an animated GIF, one frame per step")
    rp.add_argument("--html", metavar="OUT.html", help="write one self-contained HTML page with step buttons")
    rp.add_argument("--ansi", action="store_true", help="step through it in the terminal (Enter, b, a step number, q)")
    rp.add_argument("--fps", type=float, default=4.0, help="frames per second (default 4)")
    rp.set_defaults(run=_replay, command_parser=rp)

    ds = commands.add_parser(
        "dataset", help="write a Minari dataset of an agent's play, for offline RL and imitation",
        description="Play N episodes of GAME with AGENT and write them as a local Minari dataset: observations "
                    "(codes), actions, rewards, terminations, truncations and each step's action mask "
                    "(docs/datasets.md). Read it back with minari.load_dataset(ID).")
    ds.add_argument("game", metavar="GAME",
                    help="rank_and_file, number_ten, rainbow, freecell or klondike (or an env id)")
    ds.add_argument("--agent", required=True, metavar="AGENT",
                    help="random, heuristic, search, search:WxN, pretrained (the shipped policy), or solver: the "
                         "solver's shipped winning lines, perfect-information play on test deals 0-999 only")
    ds.add_argument("--episodes", required=True, type=positive_int, metavar="N", help="episodes to write")
    ds.add_argument("--deals", default="train", metavar="DEALS",
                    help="train (default: a deal drawn at random each episode), validation, test (their first "
                         "N deals in order) or A:B (deals A .. B-1 in order)")
    ds.add_argument("--seed", type=non_negative_int, default=0, metavar="S",
                    help="train deals: episode i draws its deal with reset(seed=S+i) (default 0)")
    ds.add_argument("--out", metavar="DIR",
                    help="Minari's local root to write under (default: $MINARI_DATASETS_PATH, else "
                         "~/.minari/datasets); load from it with MINARI_DATASETS_PATH=DIR")
    ds.add_argument("--id", dest="dataset_id", metavar="ID",
                    help="dataset id (default solitaire/GAME-AGENT-v0, with the deals named unless train)")
    ds.add_argument("--format", dest="data_format", choices=("parquet", "arrow"), default="parquet",
                    help="Minari storage (default parquet: compressed, a fourteenth of arrow's size)")
    ds.add_argument("--no-progress", action="store_true", help="no progress bar")
    ds.set_defaults(run=_dataset, command_parser=ds)
    return parser


def _dataset(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        from solitaire_env.tools.dataset import make_dataset

        _, summary = make_dataset(args.game, args.agent, args.episodes, deals=args.deals, seed=args.seed,
                                  out=args.out, dataset_id=args.dataset_id, data_format=args.data_format,
                                  progress=not args.no_progress)
    except (ImportError, FileNotFoundError, ValueError) as e:
        parser.error(str(e))
    size = f"{summary['bytes'] / 1e6:.1f} MB" if summary["bytes"] >= 1e5 else f"{summary['bytes'] / 1e3:.0f} kB"
    print(f"wrote {summary['dataset_id']}: {summary['episodes']} episodes, {summary['steps']} steps, "
          f"{summary['wins']} won, {size} in {summary['wall_time_s']} s ({summary['path']})")
    root = f"MINARI_DATASETS_PATH={os.path.abspath(args.out)} " if args.out else ""
    print(f"read it: {root}python -c \"import minari; print(minari.load_dataset('{summary['dataset_id']}'))\"")
    return 0


def _evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from solitaire_env.agents import make_agent
    from solitaire_env.tools.evaluation import EpisodeErrors, evaluate

    progress = not args.no_progress and importable("tqdm")  # the base install plays without a bar
    if args.env not in ENV_IDS:
        parser.error(f"unknown env id {args.env!r}; known: {', '.join(ENV_IDS)}")
    split = SPLITS[args.deals]
    first = split.start if args.seed is None else args.seed
    last = first + args.episodes - 1
    if first not in split or last not in split:
        parser.error(f"deals {first}-{last} (--seed, --episodes) are not all {args.deals} deals "
                     f"({split.start}-{split.stop - 1}); choose --deals to match")
    args.seed = first
    if args.winnable_only and args.deals != "test":
        parser.error("--winnable-only plays test deals: the shipped winnability data covers deals 0-999")
    duplicates = sorted({a for a in args.agents if args.agents.count(a) > 1})
    if duplicates:
        parser.error(f"agent {duplicates[0]!r} given twice")
    for path in (args.csv, args.json):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"cannot write {path}: no such directory")
    check_resume(args, parser)
    backend = make_backend(args, parser)
    agents = {}
    for name in args.agents:
        try:
            agents[name] = make_agent(name, args.env, seed=args.seed, env_kwargs=args.env_kwargs)
        except (FileNotFoundError, ValueError) as e:
            parser.error(str(e))
        except ModuleNotFoundError as e:
            stop_for_extra(f"solitaire-env evaluate --agent {name}", e)
    for name, agent in agents.items():  # say which file a run directory (or "x" for "x.zip") stood for
        checkpoint = getattr(agent, "checkpoint", None)
        if checkpoint and checkpoint != name.removeprefix("sample:"):
            print(f"agent {name}: playing {checkpoint}")
    if args.record:
        try:
            os.makedirs(args.record, exist_ok=True)
        except OSError as e:
            parser.error(f"cannot create {args.record}: {e.strerror or e}")
    try:
        result = evaluate(args.env, agents, args.episodes, args.seed, progress=progress,
                          record_dir=args.record, env_kwargs=args.env_kwargs, backend=backend, csv_path=args.csv,
                          resume=args.resume, winnable_only=args.winnable_only, torch_threads=args.torch_threads)
    except EpisodeErrors as e:
        # Every other episode was played (and is in the CSV): say which failed and how to go on.
        for agent, deal, error in e.failures[:20]:
            print(f"failed: agent {agent} on deal {deal}: {error}", file=sys.stderr)
        if len(e.failures) > 20:
            print(f"... {len(e.failures) - 20} more", file=sys.stderr)
        again = f"; {args.csv} has the other episodes: run again with --resume to play only the failed ones" \
            if args.csv else ""
        print(f"{len(e.failures)} of {len(agents) * args.episodes} episodes failed, no table{again}", file=sys.stderr)
        return 1
    except OSError as e:
        parser.error(f"cannot write {args.csv}: {e.strerror or e}")
    except ValueError as e:
        if "env_kwargs" not in str(e) and not args.env_kwargs and "evaluation CSV" not in str(e) \
                and "winnab" not in str(e):
            raise
        parser.error(str(e))
    print(result.table())
    if args.csv:
        print(f"wrote {args.csv}")
    if args.json:
        try:
            result.write_json(args.json)
        except OSError as e:
            parser.error(f"cannot write {args.json}: {e.strerror or e}")
        print(f"wrote {args.json}")
    return 0


def _train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from pathlib import Path

    from solitaire_env.tools.training import ConfigError, RunDirError, load_config, prepare_run_dir, train

    overrides = [*args.overrides, *([f"total_timesteps={args.timesteps}"] if args.timesteps else [])]
    try:
        config = load_config(args.config, overrides)
    except ConfigError as e:
        parser.error(str(e))
    out = Path(args.output or config.output_dir)
    if out.exists() and not out.is_dir():
        parser.error(f"run directory {out} is a file")
    if not (args.resume or args.overwrite):
        try:  # refuse a directory holding a run before any work (train() checks again)
            prepare_run_dir(out, config)
        except RunDirError as e:
            parser.error(str(e))
    try:
        run_dir = train(config, output_dir=out, progress=not args.no_progress, resume=args.resume,
                        overwrite=args.overwrite)
    except RunDirError as e:
        parser.error(str(e))
    print((run_dir / "summary.json").read_text())
    print(f"run directory: {run_dir}")
    if args.evaluate:
        from solitaire_env.agents import make_agent
        from solitaire_env.tools.evaluation import evaluate

        model = run_dir / ("final_model.msgpack" if config.backend == "jax" else "final_model.zip")
        agents = {name: make_agent(name, config.env_id, seed=0) for name in ("random", "heuristic")}
        agents["ppo"] = make_agent(str(model), config.env_id, seed=0)
        result = evaluate(config.env_id, agents, args.evaluate, seed=0, progress=not args.no_progress)
        print(result.table())
        result.write_json(run_dir / "evaluation.json")
        result.write_csv(run_dir / "evaluation.csv")
    return 0


def _plot(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from solitaire_env.tools.training import plot_learning_curve

    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        parser.error(f"cannot write {args.out}: no such directory")
    try:
        print(f"wrote {plot_learning_curve(args.run_dir, args.out)}")
    except (FileNotFoundError, NotADirectoryError, ValueError) as e:
        parser.error(str(e))
    return 0


def _play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from solitaire_env.tools.play import play

    if args.game is None and args.state is None:
        parser.error("name a GAME (rank_and_file, number_ten, rainbow) or give --state FILE")
    return play(args.game, seed=args.seed, state_file=args.state)


def _replay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from solitaire_env.tools.recording import load_recording
    from solitaire_env.tools.replay import ansi_replay, write_gif, write_html

    if not (args.gif or args.html or args.ansi):
        parser.error("say what to make: --gif OUT.gif, --html OUT.html and/or --ansi")
    # The writers make GIF and HTML whatever the name says: a wrong suffix is a slip, caught before any work.
    if args.gif and not args.gif.lower().endswith(".gif"):
        parser.error(f"--gif {args.gif}: the file name must end in .gif")
    if args.html and not args.html.lower().endswith((".html", ".htm")):
        parser.error(f"--html {args.html}: the file name must end in .html or .htm")
    if args.fps <= 0:
        parser.error(f"--fps must be positive, got {args.fps}")
    try:
        recording = load_recording(args.recording)
    except OSError as e:
        parser.error(f"cannot read {args.recording}: {e.strerror or e}")
    except ValueError as e:
        parser.error(str(e))
    try:
        if args.gif:
            frames = write_gif(recording, args.gif, fps=args.fps)
            print(f"wrote {args.gif} ({frames} frames)")
        if args.html:
            size = write_html(recording, args.html, fps=args.fps)
            print(f"wrote {args.html} ({size // 1024} KiB)")
    except (OSError, ValueError) as e:
        parser.error(str(e))
    return ansi_replay(recording) if args.ansi else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``solitaire-env``; returns the exit status (bad input: ``SystemExit(2)``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args, args.command_parser)
    except ModuleNotFoundError as e:  # one line naming the extra to install (re-raised for any other module)
        stop_for_extra(f"solitaire-env {args.command}", e)


if __name__ == "__main__":
    sys.exit(main())
