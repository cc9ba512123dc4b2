"""The solver on FreeCell: its answers checked against an independent search that moves one card at a time
and knows none of the solver's shortcuts, and Microsoft's deals 1 and 11982 decided as published."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solitaire_env import Game, get_variant
from solitaire_env.engine import core
from solitaire_env.engine.state import build
from solitaire_env.engine.variant import Variant
from solitaire_env.solver import solve

FREECELL = get_variant("freecell")
RED = (1, 2)  # diamonds and hearts, in the engine's suit order c d h s


def _winnable(piles: list[list[tuple[int, int]]], cells: list[tuple[int, int]], found: list[int],
              n_cells: int) -> bool:
    """Whether single-card moves win with ``n_cells`` free cells: an exhaustive depth-first search over
    (rank, suit) cards, with no safe moves, no run moves, nothing shared with the engine; positions are
    remembered with piles and cells as multisets."""
    start = (tuple(tuple(p) for p in piles), tuple(sorted(cells)), tuple(found))
    seen, stack = set(), [start]
    while stack:
        piles_, cells_, found_ = stack.pop()
        if sum(found_) == 52:
            return True
        key = (tuple(sorted(piles_)), cells_, found_)
        if key in seen:
            continue
        seen.add(key)
        # Each card that can move, and the position with it lifted off.
        lifted = [(p[-1], piles_[:i] + (p[:-1],) + piles_[i + 1:], cells_, i) for i, p in enumerate(piles_) if p]
        lifted += [(c, piles_, cells_[:i] + cells_[i + 1:], None) for i, c in enumerate(cells_)]
        for (rank, suit), ps, cs, from_pile in lifted:
            if found_[suit] == rank:
                stack.append((ps, cs, found_[:suit] + (rank + 1,) + found_[suit + 1:]))
            for j, onto in enumerate(ps):
                fits = not onto or (onto[-1][0] == rank + 1 and (onto[-1][1] in RED) != (suit in RED))
                if fits and j != from_pile:
                    stack.append((ps[:j] + (onto + ((rank, suit),),) + ps[j + 1:], cs, found_))
            if from_pile is not None and len(cs) < n_cells:
                stack.append((ps, tuple(sorted(cs + ((rank, suit),))), found_))
    return False


# A small FreeCell: three piles and one cell, so that late positions are often lost, as full games
# hardly ever are (one Microsoft deal in 32,000).
SMALL = Variant(name="freecell_small", title="FreeCell (three piles, one cell)", decks=1, piles=3, deal_down=0,
                deal_up=(18, 17, 17), foundations=4, cells=1, run_limit=True, pile_capacity=26)


def _endgame(rng: random.Random, variant: Variant):
    """A random late position: the foundations well built, 11-15 cards left, some in the cells."""
    while True:
        found = [rng.randint(7, 13) for _ in range(4)]
        left = [(r, s) for s in range(4) for r in range(found[s], 13)]
        if 11 <= len(left) <= 15:
            break
    rng.shuffle(left)
    n_cells = rng.randint(0, variant.cells)
    cells, rest = left[:n_cells], left[n_cells:]
    piles: list[list[tuple[int, int]]] = [[] for _ in range(variant.piles)]
    for card in rest:
        piles[rng.randrange(variant.piles)].append(card)
    return piles, cells, found


def _state(variant: Variant, piles, cells, found):
    card = lambda rank, suit: suit * 13 + rank  # noqa: E731
    return build(variant, [([card(*c) for c in p], 0) for p in piles],
                 [[card(r, s) for r in range(n)] for s, n in enumerate(found)], [], [], ([], 0), 0, 0,
                 [card(*c) for c in cells] + [-1] * (variant.cells - len(cells)))


@pytest.mark.parametrize("variant,n,least", [(FREECELL, 60, {"won": 50}), (SMALL, 200, {"won": 60, "lost": 60})])
def test_the_solver_agrees_with_a_search_of_single_card_moves_on_random_endgames(variant, n, least):
    rng = random.Random(5)
    answers = {"won": 0, "lost": 0}
    for _ in range(n):
        piles, cells, found = _endgame(rng, variant)
        expected = "won" if _winnable(piles, cells, found, variant.cells) else "lost"
        s = _state(variant, piles, cells, found)
        got = solve(variant, state_array=s, time_limit=None, max_nodes=200_000, memory_mb=8)
        assert got.result == expected, (piles, cells, found, got)
        answers[expected] += 1
        if got.result == "won":  # the solver's line wins when the engine plays it, every move legal
            mask = np.zeros(variant.n_actions, dtype=np.int8)
            for a in got.moves:
                core.legal_mask(s, variant.spec, variant.actions, mask)
                assert mask[a]
                core.apply_action(s, variant.spec, variant.actions, a)
            assert core.foundation_cards(s, variant.spec) == 52
    assert all(answers[k] >= n for k, n in least.items()), answers  # both answers are checked


def test_microsoft_deal_1_is_won_and_11982_proved_lost():
    won = solve("freecell", seed=1, time_limit=None, max_nodes=4_000_000, memory_mb=64)
    assert won.result == "won"
    game = Game("freecell", 1)
    for a in won.moves:
        game.play(a)
    assert game.is_won()
    lost = solve("freecell", seed=11982, time_limit=None, max_nodes=4_000_000, memory_mb=64)
    assert lost.result == "lost", lost
