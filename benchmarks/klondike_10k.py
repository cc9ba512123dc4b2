"""Thoughtful Klondike on deals 0-9999: the figures of docs/winnability.md, "Deals 0-9999".

Reads the rows ``benchmarks/klondike_10k.sh`` keeps in DIR (deals 1000-9999, each pass a plain or gzip CSV; a
pass still running counts with the rows it has) and the shipped answers for deals 0-999, and prints, for draw 3
and draw 1, the deals won, proved lost and undecided, the winnable fraction with its 95% interval, and each pass.
It fails (exit status 1) on a deal won in draw 3 and proved lost in draw 1: drawing one card at a time reaches
every position that drawing three does, so that would be a bug.

    python -m benchmarks.klondike_10k [DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from solitaire_env.solver.winnability import DealResult, load, merge_results, read_results
from solitaire_env.tools.winnability import format_summary, summarize

DEFAULT_DIR = Path(__file__).resolve().parent / "results" / "klondike_10k"
# The passes of each rule set, in order: a later one's row replaces an earlier one's for the same deal.
PASSES = {
    "klondike_draw3": (("draw3_pass1", "draw3_pass2", "draw3_pass3"), ("shipped_draw3_pass3",)),
    "klondike": (("draw1_pass1", "draw1_pass2"), ()),
}


def _rows(directory: Path, name: str) -> list[DealResult]:
    """A pass's rows: the plain CSV a run writes to, else the committed snapshot, else none."""
    for path in (directory / f"{name}.csv", directory / f"{name}.csv.gz"):
        if path.exists():
            return read_results(path)
    return []


def deals_0_9999(game: str, directory: Path = DEFAULT_DIR) -> list[DealResult]:
    """One row per deal of 0-9999 that has an answer: the shipped one for 0-999 (replaced by a later pass's where
    the directory holds one), the latest pass's for 1000-9999."""
    later, shipped_later = PASSES[game]
    rows = load(game)
    for name in (*shipped_later, *later):
        rows = merge_results(rows, _rows(directory, name))
    return rows


def contradictions(draw3: list[DealResult], draw1: list[DealResult]) -> list[int]:
    """Deals won in draw 3 and proved lost in draw 1."""
    lost1 = {r.seed for r in draw1 if r.result == "lost"}
    return [r.seed for r in draw3 if r.result == "won" and r.seed in lost1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR, help="the script's DIR")
    args = parser.parse_args(argv)
    results = {game: deals_0_9999(game, args.dir) for game in PASSES}
    for game, rows in results.items():
        print(format_summary(summarize(game, rows, None)))
    bad = contradictions(results["klondike_draw3"], results["klondike"])
    print(f"deals won in draw 3 and proved lost in draw 1: {len(bad)} {bad[:20] if bad else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
