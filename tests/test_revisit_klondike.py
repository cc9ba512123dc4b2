"""Positions seen in Klondike, through the engine (Klondike has no env here): a foundation card down and
back up, a full round of the stock and back, the batched step against recording each position afresh
(tables, mask, ``seen`` flags and action features), and twins with other hidden cards.

In Klondike foundation cards come back and, with unlimited redeals, the stock cycles: the history's
stretches leave the foundation count out and count the stock and waste as one there
(:mod:`solitaire_env.engine.history`). ``test_revisit.py`` checks random play against every position
seen in four rule sets."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from solitaire_env import Game, Move
from solitaire_env.engine import batched, core, features, history, keys
from solitaire_env.engine.cards import RANKS
from solitaire_env.engine.games import klondike_variant
from solitaire_env.engine.hashing import mix, nonzero
from solitaire_env.engine.state import deal
from solitaire_env.engine.variant import (
    A_FIRST,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    HIDDEN,
    O_NSTOCK,
    OB_TAB,
    REDEAL,
    TABLEAU_TO_FOUNDATION,
)


def position(variant, tableau: list[list[str]], heights: dict[str, int], stock: list[str], seen: bool = False,
             waste: list[str] | None = None) -> Game:
    """A Klondike position: ``heights[suit]`` cards of each suit on its foundation (slots in the order
    given), the stock bottom first; a valid position (every card once) or ``ValueError``."""
    foundations = [[RANKS[k] + suit for k in range(n)] for suit, n in heights.items()]
    state = {"format": 1, "variant": variant.name, "tableau": tableau, "foundations": foundations, "stock": stock,
             "waste": waste or [], "reserve": [], "base_rank": None}
    state.update({"redeals_left": None, "stock_seen": seen} if variant.redeals is None
                 else {"redeals_left": variant.redeals})
    return Game.from_state(state)


class Recorder:
    """One episode's history as the single env keeps it: :meth:`step` plays a move and records the
    position, with the rules' mask (``rules``), the mask left (``mask``) and the ``seen`` flags."""

    def __init__(self, game: Game, no_revisit: bool) -> None:
        v = self.variant = game.variant
        self.game, self.no_revisit = game, no_revisit
        self.history = history.History(v, 1)
        self.mask, self.seen = np.zeros(v.n_actions, dtype=np.int8), np.zeros(v.n_actions, dtype=np.int8)
        self.revisit = self._record(clear=True)

    def _record(self, clear: bool) -> bool:
        v, game = self.variant, self.game
        n = core.legal_mask(game.state, v.spec, v.actions, self.mask)
        self.rules = self.mask.copy()
        revisit, self.left = self.history.record(0, game.state, game.observation(), self.mask, n, clear,
                                                 self.no_revisit, self.seen)
        return revisit

    def step(self, move: Move | int) -> bool:
        self.game.play(move)
        self.revisit = self._record(clear=False)
        return self.revisit

    def action(self, move: Move) -> int:
        return self.game.encode(move)


# --- hand-built positions ----------------------------------------------------------------------------


def foundations_nearly_full(variant) -> Game:
    """Clubs and diamonds all up, hearts and spades to their 5; 5h can come down onto 6s, 5s onto 6h,
    and either King of the full foundations into the empty pile 3."""
    tableau = [["#Kh", "6s"], ["#Ks", "6h"], ["7h"], [], ["#Qh", "8h"], ["#Qs", "8s"],
               ["#Jh", "#Js", "#Th", "#Ts", "#9h", "#7s", "9s"]]
    return position(variant, tableau, {"c": 13, "d": 13, "h": 5, "s": 5}, [])


@pytest.mark.parametrize("redeals", [None, 2])
def test_a_foundation_card_down_and_back_up_is_a_move_back(redeals):
    v = klondike_variant(1, redeals)
    down, king = Move("foundation", 2, "tableau", 0, 1), Move("foundation", 0, "tableau", 3, 1)
    for move, back in ((down, Move("tableau", 0, "foundation", 2, 1)), (king, Move("tableau", 3, "foundation", 0, 1))):
        # Without the option: flagged, played, a revisit.
        r = Recorder(foundations_nearly_full(v), no_revisit=False)
        assert not r.seen.any() and not r.revisit
        assert not r.step(move)
        up = r.action(back)
        assert np.flatnonzero(r.seen).tolist() == [up] and r.mask[up]
        assert r.step(up)  # the same position as at the start
        assert r.game.get_state() == foundations_nearly_full(v).get_state()
        # With it: the move back is masked, and the one that came down too once back up.
        r = Recorder(foundations_nearly_full(v), no_revisit=True)
        r.step(move)
        assert not r.mask[up] and r.rules[up] and r.left == int(r.rules.sum()) - 1
    start = foundations_nearly_full(v)
    kinds = {int(v.actions[start.encode(m), 0]) for m in (down, king)}
    assert kinds == {FOUNDATION_TO_TABLEAU, FOUNDATION_TO_EMPTY}


def small_stock(variant, seen: bool = False) -> Game:
    """Hearts and spades short of their top cards, 3 of them in the stock (draw 1) or 5 (draw 3)."""
    if variant.draw == 1:
        heights, stock = {"c": 13, "d": 13, "h": 10, "s": 10}, ["Jh", "Js", "Qh"]
    else:
        heights, stock = {"c": 13, "d": 13, "h": 8, "s": 10}, ["9h", "Th", "Jh", "Js", "Qh"]
    return position(variant, [["Kh"], ["Ks"], ["Qs"], [], [], [], []], heights, stock, seen)


@pytest.mark.parametrize("draw", [1, 3])
@pytest.mark.parametrize("no_revisit", [False, True])
def test_a_full_round_of_the_stock_comes_back_where_redeals_are_unlimited(draw, no_revisit):
    """Round the stock, redeal, round again: the second round's last draw lands on the first round's
    last position (an empty stock shows nothing of whether it was seen), and the second redeal on the
    first one's result. Not the first round's draws: the stock was hidden then, shown now."""
    v = klondike_variant(draw, None)
    r = Recorder(small_stock(v), no_revisit)
    d, rd = int(v.spec[A_FIRST + DRAW]), int(v.spec[A_FIRST + REDEAL])
    draws = 3 if draw == 1 else 2
    for _ in range(draws):  # the first round: nothing seen
        assert r.mask[d] and not r.seen[d]
        assert not r.step(d)
    assert r.mask[rd] and not r.seen[rd]
    r.step(rd)
    assert r.game.get_state()["stock_seen"]
    for k in range(draws):
        last = k == draws - 1
        assert r.seen[d] == last and r.mask[d] == (not (last and no_revisit))
        if last and no_revisit:
            assert r.left == int(r.rules.sum()) - 1
            return
        assert r.step(d) == last
    assert r.seen[rd] and r.step(rd)  # back to the first redeal's result


def test_a_full_round_of_the_stock_is_not_a_move_back_where_redeals_are_counted():
    v = klondike_variant(1, 2)
    r = Recorder(small_stock(v), no_revisit=False)
    d, rd = int(v.spec[A_FIRST + DRAW]), int(v.spec[A_FIRST + REDEAL])
    for _ in range(2):
        for _ in range(3):
            assert not r.seen[d] and not r.step(d)
        assert not r.seen[rd] and not r.step(rd)  # the redeals left tell the rounds apart
    assert r.game.get_state()["redeals_left"] == 0


def test_a_round_after_a_waste_card_is_played_comes_back_to_where_it_was_played():
    """A card off the waste leaves the stock and waste for good (a new stretch); the round after it
    comes back to the position it left, the two cards' stock turned over."""
    v = klondike_variant(1, None)
    r = Recorder(small_stock(v, seen=True), no_revisit=False)
    d, rd = int(v.spec[A_FIRST + DRAW]), int(v.spec[A_FIRST + REDEAL])
    r.step(d)  # Qh on the waste: onto Ks
    assert not r.step(Move("waste", None, "tableau", 1, 1))
    after = r.game.get_state()
    assert not r.step(d) and not r.step(d)
    assert r.seen[rd] and r.step(rd)
    assert r.game.get_state() == after


# --- the batched step --------------------------------------------------------------------------------


@pytest.mark.parametrize("draw, redeals", [(1, None), (3, None), (1, 2)])
@pytest.mark.parametrize("no_revisit", [False, True])
def test_the_batched_step_equals_recording_each_position_afresh(draw, redeals, no_revisit):
    """The batched step with the history and the action features (:func:`history.step_batch_serial`, the
    batched env's kernel), keeping pile hashes and pairs between steps, against :meth:`History.record`
    and :class:`~solitaire_env.engine.features.FeatureArrays` given each position afresh, over random
    games with rounds of the stock, cards to and from the foundations, steps without a move and new deals."""
    v = klondike_variant(draw, redeals)
    n, sp, cap, tab = 6, v.spec, v.pile_capacity, int(v.spec[OB_TAB])
    states = np.stack([deal(v, seed) for seed in range(n)])
    batch = batched.new_batch(states, np.zeros((n, v.n_actions), dtype=np.int8), np.zeros((n, v.obs_size),
                                                                                               dtype=np.int16))
    h, fresh = history.History(v, n), history.History(v, n)
    rec = history.Recording(np.ones(n, dtype=bool), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64),
                            np.zeros((n, v.n_actions), dtype=np.int8), np.zeros((n, v.n_actions, 11), dtype=np.int8))
    arrays = features.FeatureArrays(v, 1, False, True)
    rules, seen = np.zeros(v.n_actions, dtype=np.int8), np.zeros(v.n_actions, dtype=np.int8)
    acts = np.full(n, -1, dtype=np.int64)
    rng = np.random.default_rng(draw + 3 * (redeals or 0))
    back = came_down = 0
    next_deal = n
    for step in range(500):
        history.step_batch_serial(batch, sp, v.actions, acts, h.tables, rec, no_revisit)
        for i in range(n):
            s, codes = batch.states[i], batch.codes[i]
            for p in range(v.piles):  # the kept pile hashes, against each pile hashed from scratch
                pile = codes[tab + p * cap : tab + (p + 1) * cap].astype(np.uint64)
                salt = keys.PILE_SALT[p] if pile[0] == HIDDEN else np.uint64(0)
                linear = np.append(pile * keys.DEPTH[:cap], salt).sum(dtype=np.uint64)
                assert h.tables.hashes[i, p] == linear and h.tables.hashes[i, v.piles + p] == mix(linear)
            n_rules = core.legal_mask(s, sp, v.actions, rules)
            mask = rules.copy()
            revisit, left = fresh.record(i, s, codes, mask, n_rules, bool(rec.clear[i]), no_revisit, seen)
            assert revisit == rec.revisit[i] and left == batch.n_legal[i] and n_rules == rec.n_rules[i]
            np.testing.assert_array_equal(mask, batch.masks[i])
            np.testing.assert_array_equal(seen, rec.seen[i])
            single = arrays.compute(s[None], codes[None], mask[None], seen[None])["action_features"][0]
            np.testing.assert_array_equal(single, rec.act_out[i])
            back += int(seen.sum())
        for name in ("small", "keys", "filt", "meta"):
            np.testing.assert_array_equal(getattr(fresh.tables, name), getattr(h.tables, name), err_msg=name)
        rec.clear[:] = False
        for i in range(n):
            legal = np.flatnonzero(batch.masks[i])
            stock = [a for a in legal if v.actions[a, 0] in (DRAW, REDEAL)]
            ups = [a for a in legal if v.actions[a, 0] == TABLEAU_TO_FOUNDATION]
            if not legal.size or rng.random() < 0.01:  # a new deal, as the batched env deals one
                batch.states[i] = deal(v, next_deal)
                next_deal += 1
                rec.clear[i], acts[i] = True, -1
            elif rng.random() < 0.03:
                acts[i] = -1  # no move
            elif stock and (step // 40) % 2:  # rounds of the stock now and then
                acts[i] = stock[0]
            elif ups and rng.random() < 0.3:
                acts[i] = ups[0]
            else:
                acts[i] = int(rng.choice(legal))
            came_down += v.actions[acts[i], 0] in (FOUNDATION_TO_TABLEAU, FOUNDATION_TO_EMPTY) if acts[i] >= 0 else 0
    assert back > 100 and came_down > 5


# --- hidden cards --------------------------------------------------------------------------------------


def twin(state: dict) -> dict:
    """The same table with the face-down cards shifted among their places and, while the player has not
    seen it, the stock reversed."""
    other = copy.deepcopy(state)
    places = [(p, k) for p, pile in enumerate(other["tableau"]) for k, c in enumerate(pile) if c.startswith("#")]
    cards = [other["tableau"][p][k] for p, k in places]
    for (p, k), card in zip(places, cards[1:] + cards[:1], strict=True):
        other["tableau"][p][k] = card
    unseen = not other["stock_seen"] if "stock_seen" in other else other["redeals_left"] == 2
    if unseen:
        other["stock"] = other["stock"][::-1]
    return other


@pytest.mark.parametrize("draw, redeals", [(1, None), (3, None), (1, 2)])
def test_hidden_cards_never_change_the_mask(draw, redeals):
    """Twins (the same table, other face-down cards and unseen stock) played with the same moves give the
    same masks, ``seen`` flags and revisit flags for as long as they look the same."""
    v = klondike_variant(draw, redeals)
    rng = np.random.default_rng(draw)
    steps = unseen_stock = 0
    for seed in range(12):
        game = Game(v, seed=seed)
        if seed % 2:  # round the stock first, so that it is seen (where it can be turned over)
            while game.state[v.spec[O_NSTOCK]] > 0:
                game.play(int(v.spec[A_FIRST + DRAW]))
            if v.can_redeal:
                game.play(int(v.spec[A_FIRST + REDEAL]))
        for _ in range(4):  # a few moves in
            game.play(int(game.legal_actions()[-1]))
        a = Recorder(game, no_revisit=True)
        b = Recorder(Game.from_state(twin(game.get_state())), no_revisit=True)
        assert a.game.get_state() != b.game.get_state()
        unseen_stock += a.game.get_state()["stock"] != b.game.get_state()["stock"]
        while np.array_equal(a.game.observation(), b.game.observation()):
            np.testing.assert_array_equal(a.mask, b.mask)
            np.testing.assert_array_equal(a.seen, b.seen)
            assert a.revisit == b.revisit and a.left == b.left
            moves = np.flatnonzero(a.mask).tolist()
            if not moves:
                break
            quiet = [m for m in moves if not _shows_a_card(a.game, m)]
            move = int(rng.choice(quiet if quiet and rng.random() < 0.95 else moves))
            a.step(move)
            b.step(move)
            steps += 1
    assert steps > 150 and unseen_stock >= 6


def _shows_a_card(game: Game, move: int) -> bool:
    """Whether ``move`` turns a face-down card up or draws from a stock not seen yet."""
    child = game.copy()
    child.play(move)
    before = game.get_state()
    hidden_stock = before["stock"] and not before.get("stock_seen", before["redeals_left"] != game.variant.redeals)
    return child.hidden_cards < game.hidden_cards or bool(hidden_stock and game.variant.actions[move, 0] == DRAW)


def test_the_table_key_holds_the_stock_only_where_it_cycles():
    """The table key is the tableau's alone (as in the other games) but where redeals are unlimited, where
    it adds the stock's size and whether its cards are shown."""
    for draw, redeals in ((1, 0), (3, 2)):
        game = Game(klondike_variant(draw, redeals), seed=1)
        assert keys.table_key(game.state, game.observation(), game.variant.spec) == \
            keys.tableau_key(game.observation(), game.variant.spec)
    v = klondike_variant(1, None)
    found = {}
    for seen in (False, True):
        for drawn in range(4):
            game = small_stock(v, seen)
            for _ in range(drawn):
                game.play(0)
            codes = game.observation()
            found[seen, drawn] = int(keys.table_key(game.state, codes, v.spec))
            tableau = keys.pile_sums(codes, v.spec, np.zeros(2 * v.piles, dtype=np.uint64))
            stock = mix(np.uint64(2 * (3 - drawn) + (seen and drawn < 3)) ^ np.uint64(0x57 << 56))
            assert found[seen, drawn] == int(nonzero(np.array([tableau, stock], dtype=np.uint64).sum(dtype=np.uint64)))
    assert found[False, 3] == found[True, 3]  # an empty stock looks the same either way
    assert len({found[k] for k in found if k[1] < 3}) == 6
