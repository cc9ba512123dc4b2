"""The no-revisit mask's filter of which card has lain on which pile: it only ever spares keying moves
that cannot lead back, so the mask and the ``seen`` flags equal those of keying every legal move."""

from __future__ import annotations

import numpy as np
import pytest

from solitaire_env import Game
from solitaire_env.engine import core, history


def keyed_every_move(h: history.History, game: Game, mask: np.ndarray) -> set[int]:
    """The legal moves whose result the table of env 0 holds, each move's key computed."""
    v = game.variant
    out = np.zeros(v.n_actions, dtype=np.uint64)
    history.child_keys(game.state, game.observation(), v.spec, v.actions, mask, out)
    return {int(a) for a in np.flatnonzero(mask)
            if out[a] != 0 and history._has(h.small, h.keys, h.meta, h.filt, 0, np.uint64(out[a]))}


@pytest.mark.parametrize("game_name", ["rank_and_file", "number_ten"])
@pytest.mark.parametrize("no_revisit", [False, True])
def test_the_filter_never_spares_a_move_back(game_name, no_revisit):
    """Random play that often moves back (two-deck twins included), with the table's ``seen`` flags
    and the mask against the table probed for every legal move's key."""
    rng = np.random.default_rng(11)
    flagged = 0
    for seed in range(6):
        game = Game(game_name, seed=seed)
        v = game.variant
        h = history.History(v, 1)
        mask, seen = np.zeros(v.n_actions, dtype=np.int8), np.zeros(v.n_actions, dtype=np.int8)
        clear = True
        for _ in range(400):
            n_rules = core.legal_mask(game.state, v.spec, v.actions, mask)
            rules = mask.copy()
            _, left = h.record(0, game.state, game.observation(), mask, n_rules, clear, no_revisit, seen)
            clear = False
            expected = keyed_every_move(h, game, rules)
            assert set(np.flatnonzero(seen).tolist()) == expected
            if no_revisit:
                assert set(np.flatnonzero(rules & ~mask).tolist()) == expected and left == n_rules - len(expected)
            flagged += len(expected)
            legal = np.flatnonzero(rules)
            if not legal.size:
                break
            back = sorted(expected)
            # Half the time a move back when there is one: long stretches with many kept positions.
            game.play(int(rng.choice(back if back and rng.random() < 0.5 else legal)))
    assert flagged > 50
