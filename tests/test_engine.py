"""Engine-wide properties over many random games: validity after every move, the fast mask agrees with
the per-action rules, determinism, and the engine's bookkeeping (foundation and hidden counts)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from solitaire_env import VARIANTS, Game
from solitaire_env.engine import batched, core
from solitaire_env.engine.state import deal, from_json, to_json
from solitaire_env.engine.variant import O_DOWN, O_LEN, observation_fields

VARIANT_NAMES = list(VARIANTS)


def _random_games(variant, games, max_moves, seed=0):
    """Yield (game number, move number, state array) along random legal play."""
    v = VARIANTS[variant]
    rng = np.random.default_rng(seed)
    mask = np.zeros(v.n_actions, dtype=np.int8)
    for g in range(games):
        s = deal(v, g)
        yield g, 0, s
        for m in range(1, max_moves + 1):
            if core.legal_mask(s, v.spec, v.actions, mask) == 0:
                break
            core.apply_action(s, v.spec, v.actions, int(rng.choice(np.flatnonzero(mask))))
            yield g, m, s


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize("games", [300, pytest.param(1000, marks=pytest.mark.slow)])
def test_every_position_of_random_games_is_valid(variant, games):
    v = VARIANTS[variant]
    found_before, positions = {}, 0
    for g, _, s in _random_games(variant, games=games, max_moves=40):
        state = to_json(v, s)
        _, rebuilt = from_json(state)  # every validity rule of docs/state_format.md, cards conserved
        np.testing.assert_array_equal(rebuilt, s)
        found = core.foundation_cards(s, v.spec)
        assert found == sum(len(f) for f in state["foundations"])
        if not v.foundation_to_tableau:  # (in Klondike they may come back)
            assert found >= found_before.get(g, 0)  # cards never leave a foundation
        found_before[g] = found
        positions += 1
    assert positions > 20 * games


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize("games", [80, pytest.param(400, marks=pytest.mark.slow)])
def test_fast_mask_agrees_with_per_action_rules(variant, games):
    v = VARIANTS[variant]
    fast = np.zeros(v.n_actions, dtype=np.int8)
    slow = np.zeros(v.n_actions, dtype=np.int8)
    for g, m, s in _random_games(variant, games=games, max_moves=300, seed=1):
        n_fast = core.legal_mask(s, v.spec, v.actions, fast)
        n_slow = core.legal_mask_reference(s, v.spec, v.actions, slow)
        assert n_fast == n_slow == fast.sum()
        np.testing.assert_array_equal(fast, slow, err_msg=f"game {g} move {m}: {to_json(v, s)}")


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_hidden_cards_count_matches_the_state(variant):
    v = VARIANTS[variant]
    for _, _, s in _random_games(variant, games=50, max_moves=200, seed=2):
        state = to_json(v, s)
        marked = sum(c.startswith("#") for pile in state["tableau"] + [state["reserve"]] for c in pile)
        assert core.hidden_cards(s, v.spec) == marked


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_same_seed_same_deal_different_seeds_differ(variant):
    assert Game(variant, 5).get_state() == Game(variant, 5).get_state()
    deals = {str(Game(variant, seed).get_state()) for seed in range(50)}
    assert len(deals) == 50


def test_deal_is_pinned_across_machines():
    # The deal of a seed must never change: published results and saved games depend on it.
    state = Game("rank_and_file", 0).get_state()
    assert [pile[-1] for pile in state["tableau"]] == PINNED_RANK_AND_FILE_TOPS
    rainbow = Game("rainbow", 0).get_state()
    assert rainbow["foundations"][0] == PINNED_RAINBOW_BASE_CARD


PINNED_RANK_AND_FILE_TOPS = ["Qs", "6c", "5h", "Qd", "Qd", "Js", "8s", "8c", "8h", "9h"]
PINNED_RAINBOW_BASE_CARD = ["2s"]


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_random_play_ends_only_where_the_rules_leave_no_move(variant):
    v = VARIANTS[variant]
    reference = np.zeros(v.n_actions, dtype=np.int8)
    ends = 0
    for g in range(100):
        game = Game(variant, g)
        for _ in range(3000):
            legal = game.legal_actions()
            if len(legal) == 0:
                # Checked on the state itself, not through the engine's own counts: no card to draw, no
                # redeal left to take, and the per-action rules agree that nothing is legal.
                state = game.get_state()
                redeal_left = v.redeals is None or state["redeals_left"]
                assert state["stock"] == [] and not (state["waste"] and redeal_left)
                assert core.legal_mask_reference(game.state, v.spec, v.actions, reference) == 0
                on_foundations = sum(len(f) for f in state["foundations"])
                assert game.is_won() == (on_foundations == v.n_cards)
                assert game.is_lost() == (on_foundations < v.n_cards) and game.is_over()
                ends += 1
                break
            game.play(int(legal[(g * 7919 + len(legal)) % len(legal)]))
    assert ends > 0 or v.redeals is None  # (with unlimited redeals the stock can always be turned over)


def _observe_reference(v, s):
    """The observation written out slot by slot, plainly (what core.observe must give)."""
    from solitaire_env.engine import variant as L

    sp, s = v.spec, [int(x) for x in s]
    obs = np.zeros(v.obs_size, dtype=np.int64)

    def codes(ob, o, size, down, n):  # HIDDEN below `down`, card code below `n`, then 0
        for k in range(size):
            obs[ob + k] = L.HIDDEN if k < down else (s[o + k] + 1 if k < n else 0)

    cap = v.pile_capacity
    for p in range(v.piles):
        codes(sp[L.OB_TAB] + p * cap, sp[L.O_TAB] + p * cap, cap, s[sp[L.O_DOWN] + p], s[sp[L.O_LEN] + p])
    codes(sp[L.OB_WASTE], sp[L.O_WASTE], v.stock_capacity, 0, s[sp[L.O_NWASTE]])
    base = s[sp[L.O_BASE]]
    for f in range(v.foundations):
        n = s[sp[L.O_FCNT] + f]
        obs[sp[L.OB_FOUND] + f] = s[sp[L.O_FSUIT] + f] * 13 + (base + n - 1) % 13 + 1 if n else 0
    ns = s[sp[L.O_NSTOCK]]
    if v.stock_capacity:
        obs[sp[L.OB_NSTOCK]] = ns
    if v.redeals is None:  # unlimited: the slot says whether the waste was ever turned over
        codes(sp[L.OB_STOCK], sp[L.O_STOCK], v.stock_capacity, 0 if s[sp[L.O_REDEALS]] else ns, ns)
    elif v.redeals:
        seen = s[sp[L.O_REDEALS]] < v.redeals  # after a redeal the stock is the seen waste
        codes(sp[L.OB_STOCK], sp[L.O_STOCK], v.stock_capacity, 0 if seen else ns, ns)
        obs[sp[L.OB_REDEALS]] = s[sp[L.O_REDEALS]]
    if v.reserve:
        codes(sp[L.OB_RES], sp[L.O_RES], v.reserve, s[sp[L.O_RESDOWN]], s[sp[L.O_NRES]])
    if v.base_from_deal:
        obs[sp[L.OB_BASE]] = base
    for c in range(v.cells):
        card = s[sp[L.O_CELLS] + c]
        obs[sp[L.OB_CELLS] + c] = card + 1 if card >= 0 else 0
    return obs


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_observe_agrees_with_a_slot_by_slot_reference(variant):
    v = VARIANTS[variant]
    obs = np.full(v.obs_size, -7, dtype=np.int16)
    for g, m, s in _random_games(variant, games=40, max_moves=400, seed=3):
        core.observe(s, v.spec, obs)
        np.testing.assert_array_equal(obs, _observe_reference(v, s), err_msg=f"game {g} move {m}")


def test_observe_writes_no_base_rank_where_the_deal_fixes_none():
    # A reserve without a dealt base card has no base_rank field: observe must not write past the end.
    v = dataclasses.replace(VARIANTS["rainbow"], name="rainbow-fixed-base", base_from_deal=False)
    assert "base_rank" not in observation_fields(v)
    s = deal(v, 1)
    obs = np.full(v.obs_size + 1, -7, dtype=np.int16)
    core.observe(s, v.spec, obs)
    assert obs[-1] == -7
    np.testing.assert_array_equal(obs[:-1], _observe_reference(v, s))


# --- batches in threads ---------------------------------------------------------------------------


def _batch(v, n, seed0=0):
    """``n`` fresh deals with their masks, observations and counts, as the vector env holds them."""
    states = np.stack([deal(v, seed0 + i) for i in range(n)])
    masks = np.zeros((n, v.n_actions), dtype=np.int8)
    obs = np.zeros((n, v.obs_size), dtype=np.int16)
    b = batched.new_batch(states, masks, obs)
    batched.step_batch_serial(b, v.spec, v.actions, np.full(n, -1, dtype=np.int64))  # no move: observed
    return b


def _play_batch(step, v, b, moves):
    """``moves`` steps of every game, each taking its last legal action, through ``step``."""
    for _ in range(moves):
        acts = np.where(b.n_legal > 0, v.n_actions - 1 - np.argmax(b.masks[:, ::-1], axis=1), -1).astype(np.int64)
        step(b, v.spec, v.actions, acts)
    return b.states, b.masks, b.codes, b.found


def test_two_threads_stepping_large_batches_at_once_match_serial_play(monkeypatch):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    v = VARIANTS["rank_and_file"]
    n = batched.PARALLEL_MIN_BATCH + 44
    expected = _play_batch(batched.step_batch_serial, v, _batch(v, n), moves=30)

    built = []

    class CountingPool(ThreadPoolExecutor):
        def __init__(self, *args, **kwargs):
            built.append(self)
            threading.Event().wait(0.05)  # widen the window in which a second thread could build a pool too
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(batched, "_pool", None)  # the first large batch of the process builds the pool
    monkeypatch.setattr(batched, "ThreadPoolExecutor", CountingPool)
    monkeypatch.setattr(batched, "usable_cpus", lambda: 3)  # threads even on a one-CPU machine
    start = threading.Barrier(2)
    results = [None, None]

    def run(i):
        batch = _batch(v, n)
        start.wait()
        results[i] = _play_batch(batched.step_batch, v, batch, moves=30)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for pool in built:
            pool.shutdown()
    assert len(built) == 1
    for got in results:
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)


def test_usable_cpus_is_the_affinity_set_where_there_is_one():
    import os

    if hasattr(os, "sched_getaffinity"):
        assert batched.usable_cpus() == len(os.sched_getaffinity(0))
    assert 1 <= batched.usable_cpus() <= (os.cpu_count() or 1)


def test_builds_table_is_builds_on_and_run_length_walks_it():
    """core.BUILDS (what run walks read) holds builds_on for every pair of cards, with and without wrap,
    and run_length agrees with a walk that calls builds_on card by card, over random play."""
    for wrap in (False, True):
        table = np.array([[core.builds_on(c, o, wrap) for o in range(52)] for c in range(52)])
        np.testing.assert_array_equal(core.BUILDS[int(wrap), :52, :52].astype(bool), table)
    assert core.BUILDS[:, 52:, :].sum() == 0 and core.BUILDS[:, :, 52:].sum() == 0
    for variant in VARIANT_NAMES:
        v = VARIANTS[variant]
        sp, runs = v.spec, set()
        for _, _, s in _random_games(variant, games=20, max_moves=200, seed=2):
            for p in range(v.piles):
                n, down = int(s[sp[O_LEN] + p]), int(s[sp[O_DOWN] + p])
                k = 0 if n == down else 1
                while 0 < k < n - down and core.builds_on(int(core.pile_card(s, sp, p, n - k)),
                                                          int(core.pile_card(s, sp, p, n - k - 1)), v.wrap):
                    k += 1
                assert core.run_length(s, sp, p) == k
                runs.add(k)
        assert max(runs) >= 3  # some runs were walked, not only single cards
