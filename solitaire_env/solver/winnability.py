"""How winnable is a game: the solver over a range of deals, in parallel; the per-deal answers and their files.

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
import gzip
import io
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from solitaire_env.engine.games import get_variant
from solitaire_env.engine.variant import Variant
from solitaire_env.parallel import Backend, TaskError, run_tasks
from solitaire_env.solver import SolveOptions, solve

# Each worker's transposition table unless told otherwise (the solve command's --memory default).
DEALS_MEMORY_MB = 512
CSV_COLUMNS = ("seed", "result", "reason", "nodes", "seconds", "solution_length", "best_foundation", "attempt",
               "max_nodes", "time_limit", "line")


@dataclass
class DealResult:
    """One deal's answer: a row of a solve CSV (the columns are documented in docs/winnability.md)."""

    seed: int
    result: str  # won, lost or unknown
    reason: str  # for unknown: the limit hit first (time, nodes, memory, depth)
    nodes: int
    seconds: float
    solution_length: int
    best_foundation: int
    attempt: int = 1  # the pass that gave this answer: 1 for the first run, 2 for a --retry of it, ...
    max_nodes: int | None = None  # that pass's budget per deal
    time_limit: float | None = None
    line: str = ""  # a won deal's winning line in the move notation, moves separated by "; "

    @property
    def moves(self) -> list[str]:
        """The winning line as a list of moves in the notation (empty unless won)."""
        return self.line.split("; ") if self.line else []

    def row(self) -> dict[str, Any]:
        return {**asdict(self), "max_nodes": "" if self.max_nodes is None else self.max_nodes,
                "time_limit": "" if self.time_limit is None else self.time_limit}


def read_results(csv_path: str | os.PathLike) -> list[DealResult]:
    """The rows of a solve CSV (``solitaire-env solve --csv``; gzip-compressed if it ends in ``.gz``), in
    seed order. Columns added since the first version (attempt, budget, line) may be missing."""
    opener = gzip.open if str(csv_path).endswith(".gz") else open
    with opener(csv_path, "rt", newline="") as f:
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
                    best_foundation=int(row.get("best_foundation") or 0),
                    attempt=int(row.get("attempt") or 1),
                    max_nodes=int(row["max_nodes"]) if row.get("max_nodes") else None,
                    time_limit=float(row["time_limit"]) if row.get("time_limit") else None,
                    line=row.get("line") or ""))
            except (TypeError, ValueError):
                raise ValueError(f"{csv_path}, line {line}: not a solve CSV row: {row}") from None
            r = rows[-1]
            if r.result not in ("won", "lost", "unknown"):
                raise ValueError(f"{csv_path}, line {line}: result must be won, lost or unknown, "
                                 f"got {row['result']!r}")
            if r.line and len(r.moves) != r.solution_length:
                raise ValueError(f"{csv_path}, line {line}: the line has {len(r.moves)} moves but "
                                 f"solution_length says {r.solution_length}")
    return sorted(rows, key=lambda r: r.seed)


def unknown_seeds(csv_path: str) -> list[int]:
    """The deals a previous run's CSV (``solitaire-env solve --csv``) left ``unknown``."""
    return [r.seed for r in read_results(csv_path) if r.result == "unknown"]


def merge_results(earlier: Iterable[DealResult], later: Iterable[DealResult]) -> list[DealResult]:
    """One row per deal, in seed order: a later pass's row replaces an earlier one for the same deal."""
    rows = {r.seed: r for r in earlier}
    rows.update((r.seed, r) for r in later)
    return [rows[s] for s in sorted(rows)]


def write_results(csv_path: str | os.PathLike, results: Iterable[DealResult]) -> None:
    """One row per deal (gzip-compressed if the path ends in ``.gz``, with no timestamp, so the same rows
    give the same bytes)."""
    # Written beside, then moved over: an interruption never leaves the file with fewer rows than it had.
    partial = f"{os.fspath(csv_path)}.partial"
    if str(csv_path).endswith(".gz"):
        with open(partial, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as z, \
                io.TextIOWrapper(z, newline="") as f:
            _write_rows(f, results)
    else:
        with open(partial, "w", newline="") as f:
            _write_rows(f, results)
    os.replace(partial, csv_path)


def _write_rows(f: Any, results: Iterable[DealResult]) -> None:
    writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(r.row() for r in results)


def winning_line(game: str, seed: int, actions: list[int]) -> str:
    """``actions`` (a winning list of action ids from deal ``seed``) in the move notation, ``"; "`` between
    moves, as ``solitaire-env play`` reads them (:func:`solitaire_env.tools.play.parse_move`)."""
    from solitaire_env.engine.game import Game
    from solitaire_env.engine.notation import notation

    g = Game(game, seed)
    words = []
    for a in actions:
        move = g.decode(a)
        words.append(notation(move, g))
        g.play(a)  # the id itself: encoding the move back searches the whole action table
    return "; ".join(words)


def _solve_one(context: tuple[str, SolveOptions, int], seed: int) -> DealResult:
    game, options, attempt = context
    r = solve(game, seed=seed, options=options)
    line = winning_line(game, seed, r.moves) if r.result == "won" else ""
    return DealResult(seed, r.result, r.reason, r.nodes, round(r.seconds, 4), r.solution_length, r.best_foundation,
                      attempt, options.max_nodes, options.time_limit, line)


def _failed(seed: int, error: str, options: SolveOptions, attempt: int) -> DealResult:
    """The row of a deal whose task failed: undecided, with the error as its reason (``--retry`` runs it again)."""
    return DealResult(seed=seed, result="unknown", reason=f"error: {error}", nodes=0, seconds=0.0, solution_length=0,
                      best_foundation=0, attempt=attempt, max_nodes=options.max_nodes, time_limit=options.time_limit)


def _live_path(csv_path: str) -> str:
    """Where rows go as they come: the CSV itself, or for a ``.gz`` one its plain name (a gzip stream cut
    short cannot be read back); the finished run writes the ``.gz`` and removes it."""
    return csv_path[:-3] if csv_path.endswith(".gz") else csv_path


def solve_deals(game: str, seeds: Iterable[int], options: SolveOptions | None = None, jobs: int = 1,
                progress: bool = False, csv_path: str | None = None, attempt: int = 1, backend: Backend | None = None,
                resume: bool = False, **overrides: Any) -> list[DealResult]:
    """Solve every deal in ``seeds``; results in the order of ``seeds``. ``attempt`` is written in each row:
    which pass over the deals this is (2 for a retry of a first run).

    Where: ``backend`` (:class:`~solitaire_env.parallel.Backend`: this process, local processes or
    Ray), else ``jobs`` worker processes (1: this process). Each deal is solved by
    :func:`~solitaire_env.solver.solve` with ``options`` (default
    ``SolveOptions(memory_mb=DEALS_MEMORY_MB)``), any of whose fields ``overrides`` replace. Playouts run
    only with a ``playout`` in the options: the ``solve`` command gives the noisy heuristic agent's
    (:func:`solitaire_env.tools.winnability.solver_options`).

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
    wanted = set(seeds)
    done: dict[int, DealResult] = {}
    live = _live_path(os.fspath(csv_path)) if csv_path else None
    if resume and csv_path:
        for path in dict.fromkeys((os.fspath(csv_path), live)):  # a finished file, then rows left by a cut run
            if os.path.exists(path):
                done.update((r.seed, r) for r in read_results(path) if r.seed in wanted)
    todo = [s for s in seeds if s not in done]
    if live:
        write_results(live, done.values())  # the header, and what a resumed run keeps (never fewer rows)
    out = open(live, "a", newline="") if live else None  # noqa: SIM115 (rows written as they come)
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS) if out else None
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
        for i, r in run_tasks(_solve_one, todo, context=(variant.name, options, attempt), backend=backend):
            if isinstance(r, TaskError):
                r = _failed(todo[i], r.error, options, attempt)
            results[r.seed] = r
            won += r.result == "won"
            unknown += r.result == "unknown"
            if writer:
                writer.writerow(r.row())
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
        if live != os.fspath(csv_path):
            os.remove(live)
    return ordered


# --- the shipped per-deal answers -------------------------------------------------------------------
# Deals 0-999 of each game, made by ``solitaire-env label-deals`` (solitaire_env.tools.winnability) and read here.

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "winnability"
GAMES = ("rank_and_file", "number_ten", "rainbow", "freecell", "klondike", "klondike_draw3")


def data_path(game: str) -> Path:
    """The shipped CSV of ``game`` (a game name such as ``"rainbow"``, or its :class:`Variant`)."""
    return DATA_DIR / f"{_game_name(game)}.csv.gz"


def _game_name(game: str | Variant) -> str:
    return get_variant(game).name


def load(game: str) -> list[DealResult]:
    """The shipped answers for deals 0-999 of ``game`` (``"rainbow"``, or its :class:`Variant`), in deal order."""
    path = data_path(game)
    if not path.exists():
        raise FileNotFoundError(f"no shipped winnability data for {game!r} at {path}")
    return read_results(path)


def load_summary(game: str) -> dict:
    """The summary written with the shipped answers: counts, each pass's budget, the command that made them."""
    return json.loads(data_path(game).with_suffix("").with_suffix(".json").read_text())


def winnable_seeds(game: str) -> set[int]:
    """The deals the shipped data proves winnable (a ``won`` answer: a winning line is in the file)."""
    return {r.seed for r in load(game) if r.result == "won"}


def replay_lines(game: str, results: Iterable[DealResult]) -> tuple[int, list[tuple[int, str]]]:
    """Replay every ``won`` row's line through the engine from its deal: (lines replayed, failures as
    (deal, what went wrong)). A line fails if a move does not parse as a legal move, or if it ends unwon."""
    from solitaire_env.engine.game import Game
    from solitaire_env.engine.notation import parse_move

    replayed, failures = 0, []
    for r in results:
        if r.result != "won":
            continue
        replayed += 1
        if not r.line:
            failures.append((r.seed, "answer won but no line"))
            continue
        g = Game(game, r.seed)
        try:
            for k, text in enumerate(r.moves):
                try:
                    g.play(parse_move(text, g))
                except ValueError as e:
                    raise ValueError(f"move {k + 1} {text!r}: {e}") from None
        except ValueError as e:
            failures.append((r.seed, str(e)))
            continue
        if not g.is_won():
            failures.append((r.seed, f"the line ends with {g.foundation_cards} of {g.variant.n_cards} cards home"))
    return replayed, failures


__all__ = ["CSV_COLUMNS", "DATA_DIR", "DEALS_MEMORY_MB", "GAMES", "DealResult", "data_path", "load", "load_summary",
           "merge_results", "read_results", "replay_lines", "solve_deals", "unknown_seeds", "winnable_seeds",
           "winning_line", "write_results"]
