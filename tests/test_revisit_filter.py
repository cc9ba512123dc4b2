"""The no-revisit mask's filter of which card has lain on which pile: it only ever spares keying moves
that cannot lead back, so the mask and the ``seen`` flags equal those of keying every legal move."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from numba import njit

from solitaire_env import Game
from solitaire_env.engine import batched, core, history, keys, table
from solitaire_env.engine.hashing import mix, nonzero
from solitaire_env.engine.variant import HIDDEN, OB_TAB


def keyed_every_move(h: history.History, game: Game, mask: np.ndarray) -> set[int]:
    """The legal moves whose result the table of env 0 holds, each move's key computed."""
    v = game.variant
    out = np.zeros(v.n_actions, dtype=np.uint64)
    history.child_keys(game.state, game.observation(), v.spec, v.actions, mask, out)
    return {int(a) for a in np.flatnonzero(mask)
            if out[a] != 0 and table.has(h.tables, 0, np.uint64(out[a]))}


@pytest.mark.parametrize("game_name", ["rank_and_file", "number_ten", "freecell", "klondike", "klondike_draw3"])
@pytest.mark.parametrize("no_revisit", [False, True])
def test_the_filter_never_spares_a_move_back(game_name, no_revisit):
    """Random play that often moves back (two-deck twins included; in Klondike cards to and from the
    foundations, draws and redeals too), with the table's ``seen`` flags and the mask against the table
    probed for every legal move's key."""
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


@pytest.mark.parametrize("env_id", ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", "FreeCell-v0"])
@pytest.mark.parametrize("options", [{"no_revisit": True}, {"track_revisits": True, "action_features": True}])
def test_the_batched_step_keeps_the_tables_of_recording_each_position_afresh(env_id, options):
    """The batched step keeps each env's pile hashes between steps (hashing again only the piles a move
    changed) and adds only the changed piles' pairs to the filter: over long random games, with resets
    (in the step and by ``reset_envs``) and illegal picks, its hashes equal those of each position hashed
    from scratch, and its tables, mask and ``seen`` flags equal those of :meth:`History.record` given
    every position afresh."""
    n = 6
    env = gym.make_vec(env_id, num_envs=n, **options)
    v = env.variant
    no_revisit = options.get("no_revisit", False)
    fresh = history.History(v, n)
    rng = np.random.default_rng(5)
    _, info = env.reset(seed=21)
    clear = np.ones(n, dtype=bool)
    cap, tab = v.pile_capacity, int(v.spec[OB_TAB])
    rules, seen = np.zeros(v.n_actions, dtype=np.int8), np.zeros(v.n_actions, dtype=np.int8)
    moved_back = 0
    for step in range(1500):
        h = env.history.tables
        for i in range(n):
            codes = env.codes[i]
            # Each pile's hashes from scratch, as the key's definition has them.
            for p in range(v.piles):
                pile = codes[tab + p * cap : tab + (p + 1) * cap].astype(np.uint64)
                salt = keys.PILE_SALT[p] if pile[0] == HIDDEN else np.uint64(0)
                linear = np.append(pile * keys.DEPTH[:cap], salt).sum(dtype=np.uint64)  # (wraps silently)
                assert h.hashes[i, p] == linear and h.hashes[i, v.piles + p] == mix(linear)
            assert nonzero(h.hashes[i, v.piles :].sum(dtype=np.uint64)) == keys.tableau_key(codes, v.spec)
            n_rules = core.legal_mask(env.states[i], v.spec, v.actions, rules)
            mask = rules.copy()
            revisit, left = fresh.record(i, env.states[i], codes, mask, n_rules, bool(clear[i]), no_revisit, seen)
            assert revisit == env.revisit[i] and left == env.n_legal[i] and n_rules == env.n_rules[i]
            np.testing.assert_array_equal(mask, env.masks[i])
            if env.action_features:
                np.testing.assert_array_equal(seen, env.seen[i])
                moved_back += int(seen.sum())
            else:
                moved_back += int((rules != mask).sum())
        for name in ("small", "keys", "filt", "meta"):
            np.testing.assert_array_equal(getattr(fresh.tables, name), getattr(h, name), err_msg=name)
        acts = np.array([int(rng.choice(np.flatnonzero(row))) if row.any() and rng.random() < 0.95
                         else int(rng.integers(v.n_actions)) for row in info["action_mask"]])
        _, _, _, _, info = env.step(acts)
        clear = env.steps == 0
        if step % 97 == 50:  # a new game outside the batched step (as the SB3 adapter deals them)
            j = step % n  # the position the step left is recorded here too before it goes
            n_rules = core.legal_mask(env.states[j], v.spec, v.actions, rules)
            fresh.record(j, env.states[j], env.codes[j], rules.copy(), n_rules, bool(clear[j]), no_revisit, seen)
            env.reset_envs(np.array([j]))
            info["action_mask"] = env.masks
            clear = env.steps == 0
    if env_id != "Rainbow-v0":  # (random play in Rainbow seldom goes back)
        assert moved_back > 100


@njit
def _through_borrowed(x, n):
    work = np.empty(n, dtype=np.int64)
    w, y = batched.borrowed(work), batched.borrowed(x)
    for k in range(n):
        w[k] = 3 * k
    for k in range(n):
        y[k] = w[k] + 1
    batched.keep_alive(work)


def test_borrowed_arrays_are_the_arrays_themselves():
    """What the batched history step relies on: a borrowed array reads and writes the array's own
    memory (no copy), and a work array kept alive keeps its contents."""
    x = np.zeros(1000, dtype=np.int64)
    _through_borrowed(x, 1000)
    assert np.array_equal(x, 3 * np.arange(1000) + 1)
