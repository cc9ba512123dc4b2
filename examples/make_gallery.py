"""Make docs/gallery.md and its pictures: each game's opening table, and the heuristic agent winning Rainbow.

    python examples/make_gallery.py            # writes docs/img/* and docs/gallery.md

The opening tables are deal 0 drawn by ``render_rgb``; the GIF is the first Rainbow deal (from 0 up)
that the heuristic agent wins, replayed from its recording (also saved, so
``solitaire_env.tools.replay.ansi_replay`` or ``write_html`` can show it too).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solitaire_env import Game  # noqa: E402
from solitaire_env.envs.render import render_rgb  # noqa: E402
from solitaire_env.tools.recording import record_episode, save_recording  # noqa: E402
from solitaire_env.tools.replay import write_gif  # noqa: E402

VARIANTS = ("rank_and_file", "number_ten", "rainbow")

GALLERY = """# Gallery

Pictures drawn by the env's `rgb_array` renderer (`solitaire_env.envs.render.render_rgb`). Face-down
cards are backs and the stock only a back and a count: a picture shows what a player at the table
sees. This page and its pictures are made by `python examples/make_gallery.py`.

## Opening tables (deal {deal})

**Rank and File**: two decks; ten piles of three cards face down and one face up; eight foundations
built up in suit from the Ace.

![Rank and File, deal {deal}](img/rank_and_file_opening.png)

**Number Ten**: Rank and File dealt two down and two up.

![Number Ten, deal {deal}](img/number_ten_opening.png)

**Rainbow**: one deck; the first card dealt starts the first foundation and fixes the base rank (here
{base}); a reserve of thirteen, four piles of one card, two redeals.

![Rainbow, deal {deal}](img/rainbow_opening.png)

## The heuristic agent wins a Rainbow deal

The rule-based agent (`solitaire_env.agents.make_agent("heuristic", "Rainbow-v0", seed)`; it sees only the
observation) wins Rainbow deal {win_seed} in {win_moves} moves: the first deal, counting from 0, that it
wins. At {fps} moves a second, one frame per move; the caption under the table gives each move in the
notation of the terminal game (`solitaire_env/tools/play.py`).

![The heuristic agent winning Rainbow deal {win_seed}](img/rainbow_heuristic_win.gif)

The episode's recording is [`img/rainbow_heuristic_win.json`](img/rainbow_heuristic_win.json)
([format](recordings.md)). The same from the command line:

```bash
solitaire-env evaluate --env Rainbow-v0 --agent heuristic --episodes 2 --seed 0 --record rec
solitaire-env replay rec/heuristic-deal-1.json --gif win.gif --fps 6    # or --html win.html, or --ansi
```
"""


def heuristic_agent(env_id: str, seed: int):
    try:
        from solitaire_env.agents import make_agent

        return make_agent("heuristic", env_id, seed)
    except (ImportError, AttributeError):  # the agents package without its factory
        from solitaire_env.agents.heuristic import HeuristicAgent

        return HeuristicAgent("rainbow", seed=seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default=str(ROOT / "docs"), help="where gallery.md and img/ go")
    parser.add_argument("--seed", type=int, default=0, help="the deal drawn for the opening tables")
    parser.add_argument("--gif-width", type=int, default=560)
    parser.add_argument("--max-seeds", type=int, default=500)
    args = parser.parse_args(argv)
    out = Path(args.docs) / "img"
    out.mkdir(parents=True, exist_ok=True)

    for variant in VARIANTS:
        picture = Image.fromarray(render_rgb(Game(variant, seed=args.seed).get_state()))
        path = out / f"{variant}_opening.png"
        picture.save(path, optimize=True)
        print(f"{path}: {picture.size[0]}x{picture.size[1]}, {os.path.getsize(path) // 1024} KiB")

    for seed in range(args.max_seeds):
        data = record_episode("Rainbow-v0", agent=heuristic_agent("Rainbow-v0", seed), seed=seed)
        if data["final_foundation_cards"] == 52:
            break
    else:
        print(f"the heuristic agent won none of Rainbow deals 0..{args.max_seeds - 1}")
        return 1
    save_recording(data, out / "rainbow_heuristic_win.json")
    gif = out / "rainbow_heuristic_win.gif"
    fps = 6
    frames = write_gif(data, gif, fps=fps, width=args.gif_width, hold_last=3.0)
    print(f"{gif}: Rainbow deal {seed}, won in {len(data['actions'])} moves; {frames} frames, "
          f"{os.path.getsize(gif) // 1024} KiB")
    base = Game("rainbow", seed=args.seed).get_state()["base_rank"]
    page = GALLERY.format(deal=args.seed, base=base, win_seed=seed, win_moves=len(data["actions"]), fps=fps)
    (Path(args.docs) / "gallery.md").write_text(page, encoding="utf-8")
    print(Path(args.docs) / "gallery.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
