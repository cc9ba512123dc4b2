"""Export deals as input for Solvitaire, an independent solver, to cross-check the winnability figures.

Solvitaire (Blake & Gent, https://github.com/thecharlesblake/Solvitaire) is a C++ solver for
perfect-information solitaire games. Its ``rank-and-file`` preset plays this project's Rank and File
rules: 10 piles built down in alternating colours, any card or run into an empty pile, runs moved
whole or in part, only each pile's top card face up at the deal, a 64-card stock dealt one card at
a time, no redeal, two decks. A deal file holds ``"tableau piles"`` (each bottom card first) and
``"stock"`` (the card dealt first last), with cards written ``AC``, ``10H``, ``QS``::

    solitaire-env solvitaire --seeds 0:20 --out deals/
    ./solvitaire --type rank-and-file --timeout 30000 deals/rank_and_file-0.json

Only fresh Rank and File deals are exported: the preset has no form for Number Ten's second face-up
card or for Rainbow's reserve, base rank and redeals, and a position in mid-game (cards on the
foundations, face-up runs over face-down cards) would not be read back the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from solitaire_env.engine import state
from solitaire_env.engine.games import RANK_AND_FILE
from solitaire_env.engine.variant import O_DOWN, O_FCNT, O_LEN, O_NSTOCK, O_NWASTE, O_STOCK, O_TAB, SP_CAP

_RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
_SUITS = "CDHS"


def card_name(card: int) -> str:
    """Solvitaire's name of a card (``suit * 13 + rank``): ``AC``, ``10H``, ``KS``."""
    return _RANKS[card % 13] + _SUITS[card // 13]


def to_solvitaire(s: np.ndarray) -> dict:
    """The Rank and File position ``s`` (a fresh deal) as a Solvitaire deal dict."""
    v, sp = RANK_AND_FILE, RANK_AND_FILE.spec
    s = np.asarray(s)
    if s.shape != (v.state_size,):
        raise ValueError(f"expected a Rank and File state of {v.state_size} entries, got shape {s.shape}")
    if s[sp[O_FCNT] : sp[O_FCNT] + v.foundations].any() or s[sp[O_NWASTE]]:
        raise ValueError("only a fresh deal can be exported: this position has cards on the foundations or waste")
    piles = []
    for p in range(v.piles):
        n, down = int(s[sp[O_LEN] + p]), int(s[sp[O_DOWN] + p])
        if n and down != n - 1:
            raise ValueError(f"only a fresh deal can be exported: pile {p + 1} has {n - down} face-up cards, "
                             "and Solvitaire's rank-and-file preset deals only the top card face up")
        start = sp[O_TAB] + p * sp[SP_CAP]
        piles.append([card_name(int(c)) for c in s[start : start + n]])
    stock = [card_name(int(c)) for c in s[sp[O_STOCK] : sp[O_STOCK] + s[sp[O_NSTOCK]]]]
    return {"tableau piles": piles, "stock": stock}


def export_deals(seeds, out_dir: str | Path) -> list[Path]:
    """Write ``rank_and_file-SEED.json`` for every deal in ``seeds``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in seeds:
        path = out / f"rank_and_file-{seed}.json"
        path.write_text(json.dumps(to_solvitaire(state.deal(RANK_AND_FILE, seed)), indent=1) + "\n")
        paths.append(path)
    return paths


__all__ = ["card_name", "export_deals", "to_solvitaire"]
