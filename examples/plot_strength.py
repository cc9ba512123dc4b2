"""Win rate against seconds a game, one panel per game, from the table "Strength against seconds" in
docs/baselines.md (the table is the record; this only draws it):

    python examples/plot_strength.py --out docs/img/strength.png

Each point is one agent at one budget, with its 95% Wilson interval; the x axis (seconds a game, log scale)
is the evaluation's own ``s/game``. The section's second table, the anchors (a published figure, the
solver's ceiling), gives the dashed lines.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

BASELINES = Path(__file__).resolve().parent.parent / "docs" / "baselines.md"
HEADING = "## Strength against seconds"


def _section_rows(path: Path) -> list[list[str]]:
    """The cells of every table row of the section (prose lines come back as one cell)."""
    text = path.read_text()
    if HEADING not in text:
        raise ValueError(f"{path} has no section {HEADING!r}")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()]


def read_table(path: Path = BASELINES) -> dict[str, list[dict]]:
    """The rows of the section's table, by game: ``agent``, ``win`` (0-1), ``low``, ``high``, ``seconds``."""
    games: dict[str, list[dict]] = {}
    for cells in _section_rows(path):
        if len(cells) != 5 or not cells[2].endswith("%"):
            continue  # not a row of figures (the header, its rule, or prose)
        game, agent, win, interval, seconds = cells
        low, high = (float(x) for x in re.findall(r"[\d.]+", interval))
        games.setdefault(game, []).append({"agent": agent.replace("`", ""), "win": float(win[:-1]) / 100,
                                           "low": low / 100, "high": high / 100, "seconds": float(seconds)})
    if not games:
        raise ValueError(f"the section {HEADING!r} of {path} has no rows")
    return games


def read_anchors(path: Path = BASELINES) -> dict[str, list[tuple[str, float]]]:
    """The section's anchor rows (three cells: game, what, win rate), by game: ``(what, win)`` pairs."""
    anchors: dict[str, list[tuple[str, float]]] = {}
    for cells in _section_rows(path):
        if len(cells) == 3 and cells[2].endswith("%") and cells[2][:-1].replace(".", "").isdigit():
            anchors.setdefault(cells[0], []).append((cells[1], float(cells[2][:-1]) / 100))
    return anchors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baselines", type=Path, default=BASELINES, help="the markdown file holding the table")
    parser.add_argument("--out", default="strength.png")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    games = read_table(args.baselines)
    anchors = read_anchors(args.baselines)
    cols = min(3, len(games))
    nrows = -(-len(games) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.8 * cols, 3.4 * nrows), dpi=110, squeeze=False)
    for ax in axes.flat[len(games):]:
        ax.set_visible(False)
    for ax, (game, rows) in zip(axes.flat, games.items(), strict=False):  # spare panels stay hidden
        for row in rows:
            err = [[row["win"] - row["low"]], [row["high"] - row["win"]]]
            ax.errorbar([row["seconds"]], [row["win"]], yerr=err, marker="o", capsize=3, label=row["agent"])
        for what, win in anchors.get(game, []):
            ax.axhline(win, linestyle="--", linewidth=0.8, color="grey")
            ax.annotate(what, (0.02, win), xycoords=("axes fraction", "data"), fontsize=6, color="grey",
                        va="bottom")
        ax.set_xscale("log")
        ticks: list[float] = []  # the measured seconds only (log ticks crowd), none within twice the last
        for t in sorted({row["seconds"] for row in rows}):
            if not ticks or t > 2 * ticks[-1]:
                ticks.append(t)
        ax.set_xticks(ticks, [f"{t:.2g}" for t in ticks], fontsize=7)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(game, fontsize=9)
        ax.set_xlabel("seconds a game (log)")
        ax.set_ylabel("win rate, test deals 0-999")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out} ({', '.join(games)})")


if __name__ == "__main__":
    main()
