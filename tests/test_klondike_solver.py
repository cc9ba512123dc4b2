"""The solver on Klondike: its answers checked against an independent exhaustive search that shares nothing
with the engine and knows none of the solver's shortcuts (safe moves, stock macros, stock dominance,
canonical keys), on random late positions in draw 1 and draw 3; the safe-move rule checked move by move
against the same search; and a position where the two-deck games' safe rule would lose a won game."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from solitaire_env.engine import core
from solitaire_env.engine.games import KLONDIKE, klondike_variant
from solitaire_env.engine.state import build, deal
from solitaire_env.engine.variant import Variant
from solitaire_env.solver import solve
from solitaire_env.solver.safe import is_safe
from solitaire_env.solver.stuck import stuck
from solitaire_env.solver.winnability import load

RED = (1, 2)  # diamonds and hearts, in the engine's suit order c d h s
KING = 12

# --- the independent search ------------------------------------------------------------------------
# A position: (piles, found, stock, waste, redeals). piles: per pile (face-down cards, face-up cards),
# bottom first; found: cards home per suit; stock: bottom first (its last card is dealt first); waste:
# bottom first; redeals: left, or None (unlimited). Cards are (rank, suit), rank 0 the Ace.


def _on(card, onto) -> bool:
    """``card`` may lie on ``onto`` in the tableau: one rank lower, the other colour."""
    return onto[0] == card[0] + 1 and (onto[1] in RED) != (card[1] in RED)


def _lift(pile, k):
    """The pile without its top ``k`` face-up cards, the next face-down card turned up if none is left."""
    down, up = pile
    up = up[:len(up) - k]
    if not up and down:
        down, up = down[:-1], down[-1:]
    return down, up


def _moves(pos, draw: int):
    """Every position one move away (the rules of docs/rules.md, written here afresh)."""
    piles, found, stock, waste, redeals = pos

    def put(ps, j, cards):
        return ps[:j] + ((ps[j][0], ps[j][1] + cards),) + ps[j + 1:]

    def home(card):
        return found[:card[1]] + (found[card[1]] + 1,) + found[card[1] + 1:]

    def places(ps, cards, skip=-1):
        """Piles the run ``cards`` may go to: onto a top it builds on, or an empty pile for a King."""
        for j, (down, up) in enumerate(ps):
            if j != skip and ((up and _on(cards[0], up[-1])) or (not up and not down and cards[0][0] == KING)):
                yield put(ps, j, cards)

    if stock:
        k = min(draw, len(stock))
        yield piles, found, stock[:-k], waste + stock[-k:][::-1], redeals
    elif waste and (redeals is None or redeals > 0):
        yield piles, found, waste[::-1], (), None if redeals is None else redeals - 1
    if waste:
        card = waste[-1]
        if found[card[1]] == card[0]:
            yield piles, home(card), stock, waste[:-1], redeals
        for ps in places(piles, (card,)):
            yield ps, found, stock, waste[:-1], redeals
    for i, (_, up) in enumerate(piles):
        for k in range(1, len(up) + 1):
            run = up[len(up) - k:]
            if any(not _on(run[m + 1], run[m]) for m in range(k - 1)):
                break  # not a run: nor is any longer one
            rest = piles[:i] + (_lift(piles[i], k),) + piles[i + 1:]
            if k == 1 and found[run[0][1]] == run[0][0]:
                yield rest, home(run[0]), stock, waste, redeals
            for ps in places(rest, run, skip=i):
                yield ps, found, stock, waste, redeals
    for suit in range(4):
        if found[suit]:
            card = (found[suit] - 1, suit)
            for ps in places(piles, (card,)):
                yield ps, found[:suit] + (found[suit] - 1,) + found[suit + 1:], stock, waste, redeals


def winnable(pos, draw: int, limit: int = 200_000) -> bool | None:
    """Whether some sequence of moves puts every card home: a depth-first search over every move, positions
    remembered with the piles as a multiset, nothing else merged or skipped (the moves that put more cards
    home are tried first, which only finds wins sooner). ``None`` when ``limit`` positions did not decide."""
    seen, stack = set(), [pos]
    while stack:
        p = stack.pop()
        if sum(p[1]) == 52:
            return True
        key = (tuple(sorted(p[0])),) + p[1:]
        if key in seen:
            continue
        if len(seen) >= limit:
            return None
        seen.add(key)
        stack.extend(sorted(_moves(p, draw), key=lambda q: sum(q[1])))
    return False


# --- positions ----------------------------------------------------------------------------------------

# A small Klondike: three piles, so that late positions are often lost, as whole deals seldom are.
SMALL = Variant(name="klondike_small", title="Klondike (three piles)", decks=1, piles=3, deal_down=0,
                deal_up=(10, 9, 9), foundations=4, redeals=None, draw=1, kings_to_empty=True,
                foundation_to_tableau=True, pile_capacity=19)
SMALL3 = replace(SMALL, name="klondike_small_draw3", title="Klondike (three piles, draw 3)", draw=3)
# And with counted redeals (the generator picks how many are left).
SMALL_R1 = replace(SMALL, name="klondike_small_redeals1", title="Klondike (three piles, 1 redeal)", redeals=1)
SMALL3_R2 = replace(SMALL3, name="klondike_small_draw3_redeals2", title="Klondike (three piles, draw 3, 2 redeals)",
                    redeals=2)


def endgame(rng: random.Random, variant: Variant, least: int = 9, most: int = 13, stock_most: int = 8):
    """A random late position: ``least``-``most`` cards left (a suit may have none home), up to
    ``stock_most`` in the stock and waste, the piles' cards face down but the top one."""
    while True:
        found = [rng.randint(0, 13) for _ in range(4)]
        left = [(r, s) for s in range(4) for r in range(found[s], 13)]
        if least <= len(left) <= most:
            break
    rng.shuffle(left)
    n_stock = rng.randint(0, min(stock_most, len(left) - 1))
    n_waste = rng.randint(0, n_stock)
    stock, waste, rest = left[:n_stock - n_waste], left[n_stock - n_waste:n_stock], left[n_stock:]
    cards: list[list[tuple[int, int]]] = [[] for _ in range(variant.piles)]
    for card in rest:
        cards[rng.randrange(variant.piles)].append(card)
    piles = tuple((tuple(c[:-1]), tuple(c[-1:])) for c in cards)
    redeals = None if variant.redeals is None else rng.randint(0, variant.redeals)
    return piles, tuple(found), tuple(stock), tuple(waste), redeals


def _card(c) -> int:
    return c[1] * 13 + c[0]


def engine_state(variant: Variant, pos) -> np.ndarray:
    piles, found, stock, waste, redeals = pos
    return build(variant, [([_card(c) for c in d + u], len(d)) for d, u in piles],
                 [[_card((r, s)) for r in range(n)] for s, n in enumerate(found)], [_card(c) for c in stock],
                 [_card(c) for c in waste], ([], 0), 0 if redeals is None else redeals, 0)


def replays_to_a_win(variant: Variant, s: np.ndarray, moves: list[int]) -> bool:
    """The solver's line, played by the engine: every move legal, every card home at the end."""
    s, mask = s.copy(), np.zeros(variant.n_actions, dtype=np.int8)
    for a in moves:
        core.legal_mask(s, variant.spec, variant.actions, mask)
        if not mask[a]:
            return False
        core.apply_action(s, variant.spec, variant.actions, a)
    return core.foundation_cards(s, variant.spec) == 52


# --- the tests ----------------------------------------------------------------------------------------

CASES = [  # (variant, positions, the least of each answer that must come up)
    (KLONDIKE, 60, {"won": 50}),
    (klondike_variant(3, None), 60, {"won": 50}),
    (SMALL, 150, {"won": 30, "lost": 60}),
    (SMALL3, 150, {"won": 25, "lost": 60}),
    (SMALL_R1, 60, {"won": 10, "lost": 25}),
    (SMALL3_R2, 60, {"won": 10, "lost": 25}),
]


@pytest.mark.parametrize("macros", [True, False], ids=["macros", "single-draws"])
@pytest.mark.parametrize("variant,n,least", CASES, ids=[c[0].name for c in CASES])
def test_the_solver_agrees_with_an_exhaustive_search_on_random_endgames(variant, n, least, macros):
    agree_on_endgames(variant, n, least, macros, seed=11 + variant.draw + 7 * variant.piles)


@pytest.mark.slow
@pytest.mark.parametrize("macros", [True, False], ids=["macros", "single-draws"])
@pytest.mark.parametrize("variant,n,least", CASES, ids=[c[0].name for c in CASES])
def test_the_solver_agrees_with_an_exhaustive_search_on_more_endgames(variant, n, least, macros):
    agree_on_endgames(variant, 8 * n, {k: 8 * m for k, m in least.items()}, macros, seed=1000 + variant.draw,
                      max_nodes=5_000_000)


def agree_on_endgames(variant: Variant, n: int, least: dict, macros: bool, seed: int,
                      max_nodes: int = 300_000, stock_most: int = 8) -> None:
    """The solver's answer is the exhaustive search's on ``n`` random endgames, and each won line replays.
    An endgame the exhaustive search cannot decide within its limit, or the solver within its own (a few
    among thousands), is left out."""
    rng = random.Random(seed)
    answers = {"won": 0, "lost": 0, "left out": 0, "solver unknown": 0}
    for _ in range(n):
        pos = endgame(rng, variant, 12, 18, stock_most)
        exhaustive = winnable(pos, variant.draw)
        if exhaustive is None:
            answers["left out"] += 1
            continue
        expected = "won" if exhaustive else "lost"
        s = engine_state(variant, pos)
        got = solve(variant, state_array=s, time_limit=None, max_nodes=max_nodes,
                    memory_mb=8 * (1 + max_nodes // 10**6), stock_macros=macros)
        if got.result == "unknown":  # a limit, never a wrong answer: single draws may hit the depth limit
            answers["solver unknown"] += 1
            continue
        assert got.result == expected, (pos, got)
        answers[expected] += 1
        if got.result == "won":
            assert replays_to_a_win(variant, s, got.moves), pos
    assert all(answers[k] >= m for k, m in least.items()), answers  # both answers are checked
    assert answers["left out"] + answers["solver unknown"] <= n // 50, answers


def two_deck_rule(found, card) -> bool:
    """The safe rule of the games whose foundation cards never come back: the card can go home and every
    card of the rank below in the other colour is home (written here to show it is not enough in Klondike)."""
    rank, suit = card
    return found[suit] == rank and all(found[f] >= rank for f in range(4) if (f in RED) != (suit in RED))


@pytest.mark.parametrize("variant", [SMALL, SMALL3], ids=["draw1", "draw3"])
def test_a_card_the_rule_calls_safe_never_turns_a_won_position_lost(variant):
    """``is_safe`` against the exhaustive search: whenever it calls a card on a pile safe, the position after
    playing it home is won exactly when the position before is. It calls safe only cards the two-deck
    games' rule does."""
    rng = random.Random(3 + variant.draw)
    checked = 0
    for _ in range(400):
        pos = endgame(rng, variant, 12, 18)
        piles, found, stock, waste, redeals = pos
        s = engine_state(variant, pos)
        for i, (_, up) in enumerate(piles):
            if up and is_safe(s, variant.spec, _card(up[-1])):
                card = up[-1]
                assert two_deck_rule(found, card)
                after = (piles[:i] + (_lift(piles[i], 1),) + piles[i + 1:],
                         found[:card[1]] + (found[card[1]] + 1,) + found[card[1] + 1:], stock, waste, redeals)
                assert winnable(after, variant.draw) == winnable(pos, variant.draw), pos
                checked += 1
    assert checked >= 80, checked


# Found by the exhaustive search among random endgames of the small Klondike: both red Jacks are home, so the
# two-deck games' rule calls the Queen of clubs safe; Klondike's rule waits for the 10 of spades (the
# Queen's own colour, two below), and rightly: with the Queen home the position is lost.
WON_ONLY_WITH_THE_QUEEN = (
    (((), ((11, 0),)),  # the Queen of clubs, alone on a pile
     (((11, 3), (11, 2), (7, 3), (12, 1)), ((8, 3),)),
     (((9, 3), (6, 3)), ((12, 0),))),
    (11, 12, 11, 6),  # clubs to the Jack, diamonds to the Queen, hearts to the Jack, spades to the 6
    ((12, 3),), ((10, 3), (12, 2)), None)


@pytest.mark.parametrize("variant", [SMALL, SMALL3], ids=["draw1", "draw3"])
def test_the_two_deck_games_safe_rule_would_lose_a_won_klondike_position(variant):
    """The mutation check: the weaker rule (foundation cards never coming back) would play the Queen home at
    once and lose this won position; Klondike's rule does not, and the solver wins it, with a line the
    engine replays."""
    pos = WON_ONLY_WITH_THE_QUEEN
    piles, found, stock, waste, redeals = pos
    queen = piles[0][1][-1]
    after = ((((), ()),) + piles[1:], (12,) + found[1:], stock, waste, redeals)
    assert winnable(pos, variant.draw) and winnable(after, variant.draw) is False
    s = engine_state(variant, pos)
    assert two_deck_rule(found, queen) and not is_safe(s, variant.spec, _card(queen))
    for macros in (True, False):
        got = solve(variant, state_array=s, time_limit=None, max_nodes=100_000, memory_mb=8, stock_macros=macros)
        assert got.result == "won" and replays_to_a_win(variant, s, got.moves)


def deal_position(variant: Variant, seed: int):
    """Deal ``seed`` as a position of the exhaustive search (read off the engine's deal: the search's rules
    share nothing with the engine, the cards where they lie are the same)."""
    from solitaire_env.engine.state import to_json

    def cards(items):
        return tuple(("A23456789TJQK".index(c[-2]), "cdhs".index(c[-1])) for c in items)

    j = to_json(variant, deal(variant, seed))
    piles = tuple((cards(c for c in p if c.startswith("#")), cards(c for c in p if not c.startswith("#")))
                  for p in j["tableau"])
    return piles, (0, 0, 0, 0), cards(j["stock"]), (), None


@pytest.mark.parametrize("draw, seeds", [(3, (13, 14, 28, 34, 48, 64, 71))])
def test_deals_the_solver_proves_lost_at_once_are_lost_by_the_exhaustive_search(draw, seeds):
    """Whole deals: those proved lost in a few thousand positions are small enough for the exhaustive search,
    which finds them lost too (a deal where nothing the stock turns up can move is lost at once)."""
    v = klondike_variant(draw, None)
    for seed in seeds:
        got = solve(v, seed=seed, time_limit=None, max_nodes=100_000, memory_mb=16)
        assert got.result == "lost", (seed, got)
        assert winnable(deal_position(v, seed), draw, limit=500_000) is False, seed


# --- cards that can never move (solver/stuck.py) ---------------------------------------------------------


def test_a_six_over_its_five_and_both_red_sevens_never_moves():
    """docs/solver.md's example: the six of spades face up over the five of spades and both red sevens, the
    foundations waiting for exactly those. The six can go neither home nor onto a seven, so nothing under it
    ever comes out: the solver answers at once, and the exhaustive search agrees."""
    s, h, d = 3, 2, 1
    piles = (
        (((4, s), (6, h), (6, d)), ((5, s),)),
        ((), ((12, s), (11, h), (10, s), (9, h), (8, s), (7, h), (6, s))),
        (((12, h), (12, d), (11, s), (11, d)), ((10, d),)),
    )
    stock = ((10, h), (9, d), (9, s), (8, d), (8, h), (7, d), (7, s))
    pos = (piles, (13, 6, 6, 4), stock, (), None)
    state = engine_state(SMALL3, pos)
    assert stuck(state, SMALL3.spec)
    got = solve(SMALL3, state_array=state, time_limit=None, max_nodes=1000, memory_mb=1)
    assert got.result == "lost" and got.nodes == 0, got
    assert winnable(pos, 3) is False
    # The same table with the seven of hearts in the stock instead: the six can move onto it, no proof.
    piles = ((((4, s), (6, d)), ((5, s),)),) + piles[1:]
    pos = (piles, (13, 6, 6, 4), stock + ((6, h),), (), None)
    assert not stuck(engine_state(SMALL3, pos), SMALL3.spec)


@pytest.mark.parametrize("variant", [SMALL, SMALL3], ids=["draw1", "draw3"])
def test_positions_with_cards_that_can_never_move_are_lost_by_the_exhaustive_search(variant):
    """On random endgames: every position the rule calls stuck is lost by the exhaustive search, and the solver
    answers it at once. (A rule that asked only for a lower card of the suit under the card, not for its two
    parents, fires on 853 of these 1,000 endgames and 173-226 of those are won.)"""
    rng = random.Random(5)
    seen = 0
    for _ in range(1000):
        pos = endgame(rng, variant, 12, 18)
        state = engine_state(variant, pos)
        if stuck(state, variant.spec):
            seen += 1
            assert winnable(pos, variant.draw) is False, pos
            got = solve(variant, state_array=state, time_limit=None, max_nodes=1000, memory_mb=1)
            assert got.result == "lost" and got.nodes == 0, (pos, got)
    assert seen >= 20, seen  # the rule is exercised


@pytest.mark.parametrize("game", ["klondike", "klondike_draw3"])
def test_no_shipped_winnable_deal_has_cards_that_can_never_move(game):
    """The shipped answers, deals 0-999: no deal with a winning line is stuck, and every stuck deal is lost."""
    v = klondike_variant(3 if "draw3" in game else 1, None)
    n_stuck = 0
    for row in load(game):
        if stuck(deal(v, row.seed), v.spec):
            n_stuck += 1
            assert row.result == "lost", row
    assert n_stuck >= 20, n_stuck


@pytest.mark.parametrize("game", ["klondike", "klondike_draw3"])
def test_klondike_deals_are_won_with_lines_that_replay(game):
    v = klondike_variant(3 if "draw3" in game else 1, None)
    for seed in (0, 1, 3):
        got = solve(game, seed=seed, time_limit=None, max_nodes=2_000_000, memory_mb=32)
        assert got.result == "won", (seed, got)
        assert replays_to_a_win(v, deal(v, seed), got.moves)


def test_the_solve_command_takes_klondikes_rule_sets_and_verify_replays_its_lines(tmp_path, capsys):
    from solitaire_env.tools.cli import main

    csv = tmp_path / "klondike_draw3.csv"
    main(["solve", "klondike_draw3", "--seeds", "0:4", "--max-nodes", "200000", "--jobs", "1", "--csv", str(csv),
          "--no-progress"])
    out = capsys.readouterr().out
    assert "klondike_draw3: deals 0-3" in out and "won 3, lost 0, unknown 1" in out  # deal 2 needs more
    assert main(["verify", str(csv), "--game", "klondike_draw3"]) == 0
    assert "3 of 3 winning lines replay to a win" in capsys.readouterr().out


def _split_position(twin_at: str, found=(0, 0, 0, 0)):
    """Nine of spades with the eight of hearts on it (over a face-down card), the nine of clubs on a pile of
    its own; the eight of diamonds (the eight of hearts' twin) face down, face up, home or in the stock."""
    nine_s, eight_h, nine_c, eight_d = (8, 3), (7, 2), (8, 0), (7, 1)
    piles = [((), ()) for _ in range(KLONDIKE.piles)]
    piles[0] = (((12, 0),), (nine_s, eight_h))
    piles[1] = ((), (nine_c,))
    if twin_at == "down":
        piles[2] = ((eight_d,), ((12, 3),))
    elif twin_at == "up":
        piles[2] = (((12, 3),), (eight_d,))
    placed = {c for d, u in piles for c in d + u}
    home = {(r, s) for s, n in enumerate(found) for r in range(n)}
    stock = tuple(c for c in ((r, s) for s in range(4) for r in range(13)) if c not in placed | home)
    return tuple(piles), tuple(found), stock, (), None


def _split_action(s) -> int:
    from solitaire_env.engine.variant import TABLEAU_TO_TABLEAU

    v, mask = KLONDIKE, np.zeros(KLONDIKE.n_actions, dtype=np.int8)
    core.legal_mask(s, v.spec, v.actions, mask)
    (a,) = [a for a in np.flatnonzero(mask) if v.actions[a, 0] == TABLEAU_TO_TABLEAU and v.actions[a, 1] == 0]
    assert core.resolve(s, v.spec, v.actions, a) == (1, 1)  # the eight of hearts alone, onto pile 1
    return int(a)


@pytest.mark.parametrize("twin_at, found, kept", [
    ("down", (0, 0, 0, 0), False),   # the nine of spades cannot go home: left out
    ("up", (0, 0, 0, 0), False),     # ... even where the twin could come onto it (it goes onto the nine of clubs)
    ("stock", (0, 0, 0, 0), False),  # ... from the stock
    ("home", (0, 8, 0, 0), False),   # ... or back from its foundation
    ("down", (0, 0, 0, 8), True),    # the nine of spades could go home
    ("up", (0, 0, 0, 8), True),
])
def test_a_split_is_searched_only_when_the_card_it_uncovers_can_go_home_at_once(twin_at, found, kept):
    """``useless_split`` and ``split_home`` on the pattern of docs/solver.md ("Klondike: face-up runs left out
    of the key, and a split only with its card going home"): the eight of hearts moving from the nine of
    spades to the nine of clubs. The rule's soundness is checked by the exhaustive comparisons above (with
    every split left out instead, 22 of the 25 exhaustive-search tests here fail, default and slow)."""
    from solitaire_env.solver.splits import split_home, useless_split

    v = KLONDIKE
    s = engine_state(v, _split_position(twin_at, found))
    a = _split_action(s)
    assert useless_split(s, v.spec, v.actions, a) is not kept
    if kept:  # searched as one move with the nine of spades going home
        home = split_home(s, v.spec, v.actions, a)
        core.apply_action(s, v.spec, v.actions, a)
        mask = np.zeros(v.n_actions, dtype=np.int8)
        core.legal_mask(s, v.spec, v.actions, mask)
        assert home >= 0 and mask[home]
        core.apply_action(s, v.spec, v.actions, home)
        assert core.foundation_cards(s, v.spec) == sum(found) + 1


def test_klondike_keys_leave_out_which_twin_a_run_lies_on():
    """docs/solver.md, "Klondike: face-up runs left out of the key": the eight of hearts on the nine of
    spades or on the nine of clubs is one key; the same cards with the eight as a pile's base are not."""
    from solitaire_env.solver.hashing import state_key

    def key(piles):
        placed = {c for d, u in piles for c in d + u}
        stock = tuple(c for c in ((r, s) for s in range(4) for r in range(13)) if c not in placed)
        return state_key(engine_state(KLONDIKE, (piles, (0, 0, 0, 0), stock, (), None)), KLONDIKE.spec)

    nine_s, eight_h, nine_c, king_c = (8, 3), (7, 2), (8, 0), (12, 0)
    empty = [((), ()) for _ in range(KLONDIKE.piles - 2)]
    on_spade = key((((king_c,), (nine_s, eight_h)), ((), (nine_c,)), *empty))
    on_club = key((((king_c,), (nine_s,)), ((), (nine_c, eight_h)), *empty))
    assert on_spade == on_club
    as_base = key((((king_c,), (nine_s,)), ((), (nine_c,)), ((), (eight_h,)), *empty[1:]))
    assert as_base != on_spade


def _recut(pos, cut: int):
    """The same position with the stock and waste's sequence (waste from its bottom, then the stock from its
    top) cut after ``cut`` cards instead: the first ``cut`` in the waste, the rest in the stock."""
    piles, found, stock, waste, redeals = pos
    seq = waste + stock[::-1]
    return piles, found, tuple(seq[cut:][::-1]), tuple(seq[:cut]), redeals


def test_a_cut_off_the_multiples_of_draw_covers_the_cuts_on_them():
    """docs/solver.md, "Stock dominance with unlimited redeals": a position whose waste holds a number of cards
    that is neither a multiple of three nor the whole sequence wins wherever the same cards cut at a
    multiple (here: all in the stock) win; the other way round it does not always, so the solver must not
    let the multiple cover it."""
    rng, answers = random.Random(5), {"both": 0, "off only": 0, "on only": 0, "neither": 0}
    for _ in range(300):
        pos = endgame(rng, SMALL3, 12, 18, stock_most=14)
        total, cut = len(pos[2]) + len(pos[3]), len(pos[3])
        if cut % 3 == 0 or cut == total:
            continue
        off, on = winnable(pos, 3), winnable(_recut(pos, 0), 3)
        assert off is not None and on is not None
        answers[{(True, True): "both", (True, False): "off only", (False, True): "on only",
                 (False, False): "neither"}[(off, on)]] += 1
    assert answers["on only"] == 0, answers
    assert answers["off only"] >= 1 and answers["both"] >= 30 and answers["neither"] >= 30, answers


def test_the_stock_table_skips_a_cut_on_the_multiples_once_one_off_them_is_stored():
    """``insert_cycle_dominant``: the cut at a multiple of three is covered by a stored cut of another class
    (same layout), never the other way round."""
    from solitaire_env.solver.dominance import insert_cycle_dominant

    v = klondike_variant(3, None)
    pos = deal_position(v, 0)
    off, on = engine_state(v, _recut(pos, 4)), engine_state(v, _recut(pos, 6))
    for first, second, expected in ((off, on, 0), (on, off, 1)):
        table, best = np.zeros(1 << 10, dtype=np.uint64), np.zeros(1 << 10, dtype=np.int16)
        assert insert_cycle_dominant(table, best, first, v.spec) == 1
        assert insert_cycle_dominant(table, best, second, v.spec) == expected


@pytest.mark.parametrize("n, least", [(200, 80), pytest.param(600, 250, marks=pytest.mark.slow)])
def test_the_solver_agrees_with_an_exhaustive_search_on_endgames_with_long_stocks(n, least):
    """Up to 14 cards in the stock and waste, where the stock classes of draw 3 come into play (with the
    multiples of three allowed to cover the other cuts, the full set of 600 gets wrong answers; the default
    run checks its first 200)."""
    agree_on_endgames(SMALL3, n, {"won": least, "lost": least}, True, seed=1, stock_most=14)
