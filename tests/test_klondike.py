"""Klondike's rules (docs/rules.md): the engine against a plain, independent model of them.

:class:`Reference` below knows Klondike from the rules text alone: it reads the JSON state, lists the
legal moves and plays one, sharing nothing with the engine but the JSON format and the canonical
targets (the lowest foundation slot or empty pile that takes the card). Random games in each rule set
compare the two move for move, state for state.
"""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest

from solitaire_env import Game, Move
from solitaire_env.engine import state as state_mod
from solitaire_env.engine.games import KLONDIKE, game_options, get_variant, klondike_variant
from solitaire_env.engine.variant import HIDDEN, observation_fields

RANKS = "A23456789TJQK"
SUITS = "cdhs"  # clubs, diamonds, hearts, spades: diamonds and hearts are red


def rank(card: str) -> int:
    return RANKS.index(card[0])


def red(card: str) -> bool:
    return card[1] in "dh"


def builds(card: str, onto: str) -> bool:
    """Tableau building: one rank lower, the other colour."""
    return red(card) != red(onto) and rank(card) + 1 == rank(onto)


class Reference:
    """Klondike's rules written plainly over the JSON state (draw ``draw``, ``redeals`` or unlimited)."""

    def __init__(self, state: dict, draw: int, unlimited: bool) -> None:
        self.s, self.draw, self.unlimited = copy.deepcopy(state), draw, unlimited

    def _up(self, p: int) -> list[str]:
        return [c for c in self.s["tableau"][p] if not c.startswith("#")]

    def _lowest_empty(self) -> int | None:
        return next((p for p, pile in enumerate(self.s["tableau"]) if not pile), None)

    def _foundation_for(self, card: str) -> int | None:
        for f, cards in enumerate(self.s["foundations"]):
            if not cards and rank(card) == 0:
                return f
            if cards and cards[-1][1] == card[1] and rank(cards[-1]) + 1 == rank(card):
                return f
        return None

    def _single(self, source: str, index: int | None, card: str) -> list[tuple]:
        """Moves of one card from ``source``: to a foundation, onto a pile, into an empty pile (a King)."""
        out = []
        f = self._foundation_for(card)
        if f is not None and source != "foundation":
            out.append((source, index, "foundation", f, 1))
        for j, pile in enumerate(self.s["tableau"]):
            if pile and not pile[-1].startswith("#") and builds(card, pile[-1]):
                out.append((source, index, "tableau", j, 1))
        e = self._lowest_empty()
        if e is not None and rank(card) == 12:
            out.append((source, index, "tableau", e, 1))
        return out

    def legal(self) -> set[tuple]:
        s, moves = self.s, []
        if s["stock"]:
            moves.append(("stock", None, "waste", None, min(self.draw, len(s["stock"]))))
        elif s["waste"] and (self.unlimited or s["redeals_left"] > 0):
            moves.append(("waste", None, "stock", None, len(s["waste"])))
        if s["waste"]:
            moves += self._single("waste", None, s["waste"][-1])
        for f, cards in enumerate(s["foundations"]):
            if cards:
                moves += self._single("foundation", f, cards[-1])
        for i, pile in enumerate(s["tableau"]):
            up = self._up(i)
            if not up:
                continue
            f = self._foundation_for(up[-1])
            if f is not None:
                moves.append(("tableau", i, "foundation", f, 1))
            for m in range(1, len(up) + 1):  # the top m face-up cards, if they form a run
                run = up[-m:]
                if any(not builds(run[k + 1], run[k]) for k in range(m - 1)):
                    break
                for j, other in enumerate(s["tableau"]):
                    if j != i and other and not other[-1].startswith("#") and builds(run[0], other[-1]):
                        moves.append(("tableau", i, "tableau", j, m))
                e = self._lowest_empty()
                if e is not None and rank(run[0]) == 12 and m < len(pile):  # a whole pile only relabels
                    moves.append(("tableau", i, "tableau", e, m))
        assert len(moves) == len(set(moves))
        return set(moves)

    def play(self, move: tuple) -> None:
        source, si, target, ti, count = move
        s = self.s
        if source == "stock":
            for _ in range(count):
                s["waste"].append(s["stock"].pop())
            return
        if target == "stock":
            s["stock"], s["waste"] = s["waste"][::-1], []
            if self.unlimited:
                s["stock_seen"] = True
            else:
                s["redeals_left"] -= 1
            return
        if source == "waste":
            cards = [s["waste"].pop()]
        elif source == "foundation":
            cards = [s["foundations"][si].pop()]
        else:
            pile = s["tableau"][si]
            cards, pile[-count:] = pile[-count:], []
            if pile and pile[-1].startswith("#"):
                pile[-1] = pile[-1][1:]
        if target == "foundation":
            s["foundations"][ti] += cards
        else:
            s["tableau"][ti] += cards


def as_tuple(move: Move) -> tuple:
    return (move.source, move.source_index, move.target, move.target_index, move.count)


RULE_SETS = [(1, None), (3, None), (1, 0), (3, 2)]


@pytest.mark.parametrize("draw,redeals", RULE_SETS)
def test_the_engine_plays_as_the_reference_move_for_move(draw, redeals):
    variant = klondike_variant(draw, redeals)
    rng = np.random.default_rng(draw * 10 + (redeals or 7))
    kinds: Counter = Counter()
    for seed in range(12):
        game = Game(variant, seed=seed)
        ref = Reference(game.get_state(), draw, redeals is None)
        for _ in range(400):
            legal = {as_tuple(m) for m in game.legal_moves()}
            assert legal == ref.legal(), f"deal {seed}: {game.get_state()}"
            if not legal:
                break
            # Up moves first half the time, so that foundations fill and cards come back down.
            ups = sorted(m for m in legal if m[2] == "foundation")
            moves = sorted(legal, key=str)
            move = ups[0] if ups and rng.random() < 0.5 else moves[int(rng.integers(len(moves)))]
            kinds[(move[0], move[2])] += 1
            game.play(Move(*move))
            ref.play(move)
            assert game.get_state() == ref.s
    for kind in [("stock", "waste"), ("waste", "foundation"), ("tableau", "tableau"), ("foundation", "tableau"),
                 ("tableau", "foundation")]:
        assert kinds[kind] > 0, f"random play never made a {kind} move: {kinds}"
    if redeals != 0:
        assert kinds[("waste", "stock")] > 0


def test_deal_shape_and_action_space():
    game = Game("klondike", seed=3)
    s = game.get_state()
    assert [len(p) for p in s["tableau"]] == [1, 2, 3, 4, 5, 6, 7]
    assert [sum(c.startswith("#") for c in p) for p in s["tableau"]] == [0, 1, 2, 3, 4, 5, 6]
    assert len(s["stock"]) == 24 and s["waste"] == [] and s["redeals_left"] is None and s["stock_seen"] is False
    assert KLONDIKE.n_actions == 183  # draw, redeal, 9 waste, 7 + 42 + 91 tableau, 28 + 4 foundation
    assert klondike_variant(1, 0).n_actions == 182  # no redeal action


def test_draw_three_turns_three_and_fewer_at_the_end():
    game = Game(klondike_variant(3, None), seed=0)
    stock = game.get_state()["stock"]
    assert game.play(Move("stock", None, "waste", None, 3)) == 3
    assert game.get_state()["waste"] == stock[::-1][:3]  # the stock's top card first, the third on top
    for _ in range(6):
        game.play(Move("stock", None, "waste", None, 3))
    assert game.decode(0) == Move("stock", None, "waste", None, 3)
    game.play(0)
    assert game.legal_moves()[0] == Move("waste", None, "stock", None, 24)


def _position(tableau, foundations, variant="klondike", **extra) -> Game:
    """A Klondike position: the cards not placed fill the stock (24 at most), the rest go face down under
    the non-empty piles, in turn, as far as the engine's pile storage allows."""
    placed = {c.lstrip("#") for p in tableau for c in p} | {c for f in foundations for c in f}
    rest = [r + s for s in SUITS for r in RANKS if r + s not in placed]
    stock, extra_cards = rest[:24], rest[24:]
    tableau = [list(p) for p in tableau]
    while extra_cards:
        room = [p for p in tableau if p and all(k + 2 + rank(c.lstrip("#")) <= 19 for k, c in enumerate(p))]
        assert room, "no room for the cards left over"
        for pile in room[: len(extra_cards)]:
            pile.insert(0, "#" + extra_cards.pop())
    state = {"format": 1, "variant": variant, "tableau": tableau, "foundations": foundations, "stock": stock,
             "waste": [], "redeals_left": None, "stock_seen": False, **extra}
    return Game.from_state(state)


def test_only_a_king_or_a_run_headed_by_one_goes_into_an_empty_pile():
    game = _position([["#5c", "Kh", "Qs", "Jd"], ["#2c", "Qh"], [], ["9s"], [], [], ["3c"]], [[], [], [], []])
    moves = [as_tuple(m) for m in game.legal_moves()]
    into_empty = [m for m in moves if m[2] == "tableau" and m[3] == 2]
    assert into_empty == [("tableau", 0, "tableau", 2, 3)]  # the King's run, not Qs-Jd, Jd, Qh or 9s


def test_a_foundation_card_comes_back_onto_the_tableau():
    game = _position([["Kh"], ["#2d", "5h"], ["6d"], [], [], [], []],
                     [["Ac", "2c", "3c", "4c"], ["As"], [], []])
    moves = {as_tuple(m) for m in game.legal_moves()}
    assert ("foundation", 0, "tableau", 1, 1) in moves  # 4c onto 5h
    assert ("foundation", 0, "tableau", 2, 1) not in moves  # not onto a red 6
    assert not any(m[0] == "foundation" and m[1] == 1 and m[3] == 3 for m in moves)  # an Ace is no King
    game.play(Move("foundation", 0, "tableau", 1, 1))
    assert game.get_state()["tableau"][1][-3:] == ["#2d", "5h", "4c"]
    assert game.get_state()["foundations"][0] == ["Ac", "2c", "3c"]
    game = _position([["#Qc", "2d"], [], [], [], [], [], ["4h"]],
                     [["Ac"], [f"{r}s" for r in RANKS], [], []])
    king = Move("foundation", 1, "tableau", 1, 1)
    assert king in game.legal_moves()
    game.play(Move("foundation", 0, "tableau", 0, 1))  # the Ace onto 2d empties slot 0
    assert game.get_state()["foundations"][0] == []
    assert game.state.tobytes() == Game.from_state(game.get_state()).state.tobytes()  # a free slot, as dealt


def test_the_stock_is_hidden_until_the_waste_is_turned_over():
    variant = klondike_variant(3, None)
    game = Game(variant, seed=5)
    fields = observation_fields(variant)
    assert "redeals_left" not in fields  # unlimited: nothing to count
    stock = game.observation()[fields["stock"][0]]
    assert (stock[:24] == HIDDEN).all()
    for _ in range(8):
        game.play(0)
    game.play(1)  # the redeal
    assert game.get_state()["stock_seen"] is True
    stock = game.observation()[fields["stock"][0]]
    assert (stock[:24] != HIDDEN).all() and (stock[:24] > 0).all()
    tableau = game.observation()[fields["tableau"][0]].reshape(7, 19)
    assert [int((row == HIDDEN).sum()) for row in tableau] == [0, 1, 2, 3, 4, 5, 6]
    limited = klondike_variant(1, 2)
    assert fields_of(limited) >= {"stock", "redeals_left"}


def fields_of(variant) -> set[str]:
    return set(observation_fields(variant))


def test_json_states_of_the_rule_sets_are_checked():
    state = Game("klondike", seed=1).get_state()
    for bad, words in [({"redeals_left": 2}, "must be null"), ({"stock_seen": None}, "stock_seen must be"),
                       ({"variant": "klondike_redeals2"}, "stock_seen is only")]:
        with pytest.raises(ValueError, match=words):
            Game.from_state({**state, **bad})
    limited = Game(klondike_variant(3, 2), seed=1).get_state()
    assert limited["variant"] == "klondike_draw3_redeals2" and limited["redeals_left"] == 2
    assert "stock_seen" not in limited
    assert Game.from_state(limited).get_state() == limited
    seen = {**state, "stock_seen": True}
    assert Game.from_state(seen).get_state() == seen


def test_a_state_with_face_up_cards_out_of_a_run_is_refused():
    """A pile's face-up part is always a run in Klondike (the solver's key relies on it): a state with a
    card face up on one it cannot be built on is refused, naming the pile, and the game keeps its position."""
    game = Game("klondike", seed=1)
    state, before = game.get_state(), game.state.copy()

    def with_on_pile_0(card: str) -> dict:
        return {**state, "tableau": [[*state["tableau"][0], card], *state["tableau"][1:]],
                "stock": [c for c in state["stock"] if c != card]}

    with pytest.raises(ValueError, match=r"tableau\[0\] has 9c face up on 3h"):
        game.set_state(with_on_pile_0("9c"))
    assert (game.state == before).all()
    game.set_state(with_on_pile_0("2s"))  # the two of spades goes onto the three of hearts
    assert game.get_state()["tableau"][0] == ["3h", "2s"]


def test_rule_set_names_and_options():
    assert klondike_variant() is KLONDIKE and klondike_variant(3, None).name == "klondike_draw3"
    assert game_options(klondike_variant(3, 0)) == (KLONDIKE, {"draw": 3, "redeals": 0})
    assert get_variant("klondike_draw3_redeals0") is klondike_variant(3, 0)
    for draw, redeals, words in [(2, None, "draw must be 1 or 3"), (1, -1, "redeals must be"),
                                 (1, 10, "redeals must be"), (True, None, "draw must be"), (1, 1.0, "redeals")]:
        with pytest.raises(ValueError, match=words):
            klondike_variant(draw, redeals)


def test_the_deal_is_the_same_in_every_rule_set():
    tableaus = {klondike_variant(d, r).name: Game(klondike_variant(d, r), seed=9).get_state()["tableau"]
                for d, r in RULE_SETS}
    assert len({str(t) for t in tableaus.values()}) == 1
    assert state_mod.deal("klondike", 9).tobytes() == Game("klondike", seed=9).state.tobytes()


def test_mask_and_resolve_agree_on_klondike_positions():
    from solitaire_env.engine import core

    rng = np.random.default_rng(0)
    for variant in (KLONDIKE, klondike_variant(3, 0)):
        sp, actions = variant.spec, variant.actions
        fast, slow = np.zeros(variant.n_actions, np.int8), np.zeros(variant.n_actions, np.int8)
        for seed in range(20):
            s = state_mod.deal(variant, seed)
            for _ in range(300):
                n = core.legal_mask(s, sp, actions, fast)
                assert n == core.legal_mask_reference(s, sp, actions, slow)
                assert (fast == slow).all()
                if n == 0:
                    break
                core.apply_action(s, sp, actions, int(rng.choice(np.flatnonzero(fast))))
