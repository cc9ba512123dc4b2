"""The rules of docs/rules.md, one small case each, played from hand-built JSON positions."""

from __future__ import annotations

from collections import Counter

import pytest

from solitaire_env import Game, Move, get_variant

RANKS = "A23456789TJQK"
SUITS = "cdhs"
ALL_CARDS = [r + s for s in SUITS for r in RANKS]
TWO_DECK = ["rank_and_file", "number_ten"]
VARIANT_NAMES = ["rank_and_file", "number_ten", "rainbow"]

DRAW = Move("stock", None, "waste", None, 1)


def suit_run(suit: str, first: str = "A", length: int = 13) -> list[str]:
    """``length`` cards of ``suit`` going up from rank ``first``, wrapping King to Ace."""
    start = RANKS.index(first)
    return [RANKS[(start + k) % 13] + suit for k in range(length)]


def build(
    variant: str,
    tableau: dict[int, list[str]] | None = None,
    foundations: dict[int, list[str]] | None = None,
    waste: list[str] = (),
    stock: list[str] = (),
    reserve: list[str] = (),
    redeals_left: int | None = None,
    base_rank: str = "A",
) -> dict:
    """A complete, valid format-1 state with the given cards where asked.

    Piles and foundation slots not given are empty. Every card not placed goes to the bottom of the
    stock (``stock`` lists the cards on top of them, dealt last-first). Where that would put more cards
    in stock and waste than the game ever deals there (the engine refuses such states), suits built
    from the base rank go onto the highest-numbered empty foundations first: whole suits where the
    cards are free, else the longest free runs. The card count is always exact.
    """
    v = get_variant(variant)
    piles = [list((tableau or {}).get(p, [])) for p in range(v.piles)]
    slots = [list((foundations or {}).get(f, [])) for f in range(v.foundations)]
    placed = Counter(c.lstrip("#") for part in (*piles, *slots, waste, stock, reserve) for c in part)
    rest = Counter({card: v.decks for card in ALL_CARDS})
    rest.subtract(placed)
    assert min(rest.values()) >= 0, f"cards placed too often: {+(-rest)}"
    base = base_rank if v.name == "rainbow" else "A"
    excess = sum(rest.values()) + len(stock) + len(waste) - v.stock_capacity
    for whole in (True, False):  # whole suits first, then the longest runs still free
        for f in reversed(range(v.foundations)):
            if excess <= 0 or slots[f]:
                continue
            runs = [suit_run(s, base, n) for s in SUITS for n in range(13, 0, -1)]
            run = max((r for r in runs if all(rest[c] > 0 for c in r)), key=len, default=[])
            if run and (len(run) == 13 or not whole):
                slots[f] = run
                rest.subtract(run)
                excess -= len(run)
    assert excess <= 0, "position leaves too many cards for the stock and waste: place more cards"
    bottom = [c for c in ALL_CARDS for _ in range(rest[c])]
    return {
        "format": 1,
        "variant": v.name,
        "tableau": piles,
        "foundations": slots,
        "stock": bottom + list(stock),
        "waste": list(waste),
        "reserve": list(reserve),
        "redeals_left": v.redeals if redeals_left is None else redeals_left,
        "base_rank": base if v.name == "rainbow" else None,
    }


def game(variant: str, **parts) -> Game:
    return Game.from_state(build(variant, **parts))


def waste_to(pile: int) -> Move:
    return Move("waste", None, "tableau", pile, 1)


def moves_into(g: Game, pile: int) -> list[Move]:
    return [m for m in g.legal_moves() if m.target == "tableau" and m.target_index == pile]


def play_and_check(g: Game, move: Move) -> dict:
    assert move in g.legal_moves(), f"{move} not among {g.legal_moves()}"
    g.play(move)
    return g.get_state()


# --- the helper itself ----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_helper_builds_valid_states(variant):
    state = build(variant, tableau={0: ["7s"]}, waste=["6h"])
    assert Game.from_state(state).get_state() == state


# --- tableau building: alternate colours, one rank lower --------------------------------------------


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_red_builds_on_black(variant):
    g = game(variant, tableau={0: ["7s"]}, waste=["6h"])
    state = play_and_check(g, waste_to(0))
    assert state["tableau"][0] == ["7s", "6h"]


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_black_builds_on_red(variant):
    g = game(variant, tableau={0: ["7d"], 1: ["6c"]})
    state = play_and_check(g, Move("tableau", 1, "tableau", 0, 1))
    assert state["tableau"][0] == ["7d", "6c"]


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize("card", ["6s", "6c"])
def test_same_colour_does_not_build(variant, card):
    g = game(variant, tableau={0: ["7s"], 1: ["7c"]}, waste=[card])
    assert moves_into(g, 0) == [] and moves_into(g, 1) == []


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize("card", ["5h", "7h", "8h"])
def test_only_one_rank_lower_builds(variant, card):
    g = game(variant, tableau={0: ["7s"]}, waste=[card])
    assert moves_into(g, 0) == []


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_only_the_waste_top_plays(variant):
    g = game(variant, tableau={0: ["7s"]}, waste=["6h", "Kc"])
    assert moves_into(g, 0) == []


# --- wrapping -------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", TWO_DECK)
def test_nothing_goes_on_an_ace_without_wrap(variant):
    piles = {p: [c] for p, c in enumerate(["Ah", "Ad", "5c", "5s", "6c", "6s", "8c", "8s", "Tc", "Ts"])}
    for card in ["Kc", "Ks", "Kh", "Qs"]:
        g = game(variant, tableau=piles, waste=[card])
        assert [m for m in g.legal_moves() if m.source == "waste"] == []


@pytest.mark.parametrize("variant", TWO_DECK)
def test_king_goes_only_to_an_empty_pile(variant):
    cards = ["Ac", "As", "Ac", "As", "5c", "5d", "8c", "8s", "Tc", "Qh"]
    g = game(variant, tableau={p: [c] for p, c in enumerate(cards)}, waste=["Kh"])
    assert [m for m in g.legal_moves() if m.source == "waste"] == []
    cards[4] = None
    g = game(variant, tableau={p: [c] for p, c in enumerate(cards) if c}, waste=["Kh"])
    assert [m for m in g.legal_moves() if m.source == "waste"] == [waste_to(4)]


def test_rainbow_black_king_goes_on_red_ace():
    g = game("rainbow", tableau={0: ["Ah"], 1: ["Ad"]}, waste=["Ks"])
    state = play_and_check(g, waste_to(0))
    assert state["tableau"][0] == ["Ah", "Ks"]


def test_rainbow_red_king_does_not_go_on_red_ace():
    g = game("rainbow", tableau={0: ["Ah"]}, waste=["Kd"])
    assert moves_into(g, 0) == []


def test_rainbow_whole_pile_wraps_onto_an_ace():
    g = game("rainbow", tableau={0: ["Kc", "Qd"], 1: ["Ah"], 2: ["5s"], 3: ["9h"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 2))
    assert state["tableau"][1] == ["Ah", "Kc", "Qd"]


def test_rainbow_run_wrapping_through_the_ace_moves_as_one_pile():
    g = game("rainbow", tableau={0: ["2c", "Ad", "Ks", "Qh"], 1: ["3h"], 2: ["5h"], 3: ["9h"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 4))
    assert state["tableau"][1] == ["3h", "2c", "Ad", "Ks", "Qh"]


def test_rainbow_ace_still_goes_on_a_two():
    g = game("rainbow", tableau={0: ["2s"]}, waste=["Ah"])
    assert moves_into(g, 0) == [waste_to(0)]


def test_rainbow_foundation_wraps_from_king_to_ace():
    g = game("rainbow", base_rank="J", foundations={0: ["Jh", "Qh", "Kh"]}, waste=["2h", "Ah"])
    state = play_and_check(g, Move("waste", None, "foundation", 0, 1))
    state = play_and_check(g, Move("waste", None, "foundation", 0, 1))
    assert state["foundations"][0] == ["Jh", "Qh", "Kh", "Ah", "2h"]


def test_rainbow_empty_foundation_takes_only_the_base_rank():
    g = game("rainbow", base_rank="7", foundations={0: ["7d"]}, waste=["Ah"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == []
    g = game("rainbow", base_rank="7", foundations={0: ["7d"]}, waste=["7h"])
    assert Move("waste", None, "foundation", 1, 1) in g.legal_moves()


@pytest.mark.parametrize("variant", TWO_DECK)
def test_foundation_starts_with_an_ace_only(variant):
    g = game(variant, waste=["2h"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == []


@pytest.mark.parametrize("variant", TWO_DECK)
def test_foundation_builds_up_in_suit(variant):
    assert [
        m for m in game(variant, foundations={0: ["Ah"]}, waste=["2d"]).legal_moves() if m.target == "foundation"
    ] == []
    assert [
        m for m in game(variant, foundations={0: ["Ah"]}, waste=["3h"]).legal_moves() if m.target == "foundation"
    ] == []
    g = game(variant, foundations={0: ["Ah"]}, waste=["2h"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == [Move("waste", None, "foundation", 0, 1)]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_two_deck_foundation_does_not_wrap(variant):
    g = game(variant, foundations={0: suit_run("h")}, waste=["Ah"])
    # The second Ace starts a new foundation; the full one takes nothing.
    assert [m for m in g.legal_moves() if m.target == "foundation"] == [Move("waste", None, "foundation", 1, 1)]


# --- what moves: runs and whole piles --------------------------------------------------------------


@pytest.mark.parametrize("variant", TWO_DECK)
def test_top_part_of_a_run_moves_onto_another_pile(variant):
    g = game(variant, tableau={0: ["#3c", "9s", "8h", "7c"], 1: ["9c"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 2))
    assert state["tableau"][0] == ["#3c", "9s"]
    assert state["tableau"][1] == ["9c", "8h", "7c"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_whole_run_moves_onto_another_pile(variant):
    g = game(variant, tableau={0: ["#3c", "9s", "8h", "7c"], 1: ["Th"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 3))
    assert state["tableau"][0] == ["3c"]
    assert state["tableau"][1] == ["Th", "9s", "8h", "7c"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_partial_run_moves_into_an_empty_pile(variant):
    g = game(variant, tableau={0: ["9s", "8h", "7c"], 2: ["Kd"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 2))
    assert state["tableau"][0] == ["9s"]
    assert state["tableau"][1] == ["8h", "7c"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_whole_run_moves_into_an_empty_pile_from_above_face_down_cards(variant):
    g = game(variant, tableau={0: ["#3c", "9s", "8h", "7c"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 3))
    assert state["tableau"][0] == ["3c"]
    assert state["tableau"][1] == ["9s", "8h", "7c"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_whole_pile_into_an_empty_pile_is_not_offered(variant):
    g = game(variant, tableau={0: ["9s", "8h", "7c"], 1: ["5d"]})
    to_empty = [m for m in g.legal_moves() if m.source == "tableau" and m.target == "tableau"]
    assert to_empty == [Move("tableau", 0, "tableau", 2, 1), Move("tableau", 0, "tableau", 2, 2)]
    with pytest.raises(ValueError):
        g.play(Move("tableau", 0, "tableau", 2, 3))
    with pytest.raises(ValueError):
        g.play(Move("tableau", 1, "tableau", 2, 1))


@pytest.mark.parametrize("variant", TWO_DECK)
def test_a_card_below_a_broken_run_does_not_move(variant):
    # Number Ten deals two face-up cards that need not form a run: only the top one moves.
    g = game(variant, tableau={0: ["#2c", "#4d", "5h", "9c"], 1: ["6s"], 2: ["Th"]})
    assert Move("tableau", 0, "tableau", 2, 1) in g.legal_moves()
    assert [m for m in g.legal_moves() if m.source == "tableau" and m.source_index == 0 and m.count != 1] == []


def test_rainbow_moves_only_whole_piles():
    g = game("rainbow", tableau={0: ["9c", "8d"], 1: ["9s"], 2: ["Th"], 3: ["2c"]})
    assert moves_into(g, 1) == []  # the top part (8d) may not move on its own
    state = play_and_check(g, Move("tableau", 0, "tableau", 2, 2))
    assert state["tableau"][2] == ["Th", "9c", "8d"]


def test_rainbow_pile_that_is_not_a_run_does_not_move():
    g = game("rainbow", tableau={0: ["4c", "8d"], 1: ["9s"], 2: ["5h"], 3: ["2c"]})
    assert [m for m in g.legal_moves() if m.source_index == 0 and m.target == "tableau"] == []


def test_rainbow_top_card_may_go_to_a_foundation():
    g = game("rainbow", tableau={0: ["4c", "2h"], 1: ["9s"], 2: ["Th"], 3: ["Kc"]}, foundations={0: ["Ah"]})
    state = play_and_check(g, Move("tableau", 0, "foundation", 0, 1))
    assert state["tableau"][0] == ["4c"] and state["foundations"][0] == ["Ah", "2h"]


# --- face-down cards -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", TWO_DECK)
def test_face_down_card_turns_up_when_uncovered_by_a_foundation_move(variant):
    g = game(variant, tableau={0: ["#4c", "#Jd", "2h"]}, foundations={0: ["Ah"]})
    state = play_and_check(g, Move("tableau", 0, "foundation", 0, 1))
    assert state["tableau"][0] == ["#4c", "Jd"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_face_down_card_turns_up_when_uncovered_by_a_pile_move(variant):
    g = game(variant, tableau={0: ["#4c", "#Jd", "7h", "6s"], 1: ["8c"]})
    state = play_and_check(g, Move("tableau", 0, "tableau", 1, 2))
    assert state["tableau"][0] == ["#4c", "Jd"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_turned_up_card_can_play_at_once(variant):
    g = game(variant, tableau={0: ["#2h", "6s"], 1: ["7d"]}, foundations={0: ["Ah"]})
    play_and_check(g, Move("tableau", 0, "tableau", 1, 1))
    assert Move("tableau", 0, "foundation", 0, 1) in g.legal_moves()


# --- Rainbow's reserve and empty piles -------------------------------------------------------------

RAINBOW_WITH_RESERVE = dict(
    base_rank="4",
    tableau={0: ["5h"], 1: ["9c"], 2: ["Td"], 3: ["4d"]},
    foundations={0: ["4h"]},
    reserve=["#7c", "#Kd", "3c"],
)


def test_rainbow_emptied_pile_refills_from_the_reserve_in_the_same_move():
    g = game("rainbow", **RAINBOW_WITH_RESERVE)
    assert g.play(Move("tableau", 0, "foundation", 0, 1)) == 1
    state = g.get_state()
    assert state["tableau"][0] == ["3c"]
    assert state["reserve"] == ["#7c", "Kd"]  # the next reserve card is face up at once


def test_rainbow_pile_emptied_by_a_whole_pile_move_refills_from_the_reserve():
    g = game("rainbow", **RAINBOW_WITH_RESERVE)
    state = play_and_check(g, Move("tableau", 1, "tableau", 2, 1))
    assert state["tableau"][1] == ["3c"]
    assert state["tableau"][2] == ["Td", "9c"]
    assert state["reserve"] == ["#7c", "Kd"]


def test_rainbow_reserve_top_plays_onto_a_pile_and_the_next_turns_up():
    g = game("rainbow", **RAINBOW_WITH_RESERVE)
    state = play_and_check(g, Move("reserve", None, "tableau", 3, 1))
    assert state["tableau"][3] == ["4d", "3c"]
    assert state["reserve"] == ["#7c", "Kd"]


def test_rainbow_reserve_top_plays_to_a_foundation_and_the_next_turns_up():
    g = game(
        "rainbow",
        base_rank="4",
        tableau={0: ["5h"], 1: ["9c"], 2: ["Td"], 3: ["Qd"]},
        foundations={0: ["4h"]},
        reserve=["#7c", "#Kd", "4c"],
    )
    state = play_and_check(g, Move("reserve", None, "foundation", 1, 1))
    assert state["foundations"][1] == ["4c"]
    assert state["reserve"] == ["#7c", "Kd"]


def test_rainbow_last_reserve_card_refills_then_piles_stay_empty():
    g = game(
        "rainbow",
        base_rank="4",
        tableau={0: ["5h"], 1: ["6h"], 2: ["Td"], 3: ["Qd"]},
        foundations={0: ["4h"]},
        reserve=["3s"],
    )
    state = play_and_check(g, Move("tableau", 0, "foundation", 0, 1))
    assert state["tableau"][0] == ["3s"] and state["reserve"] == []
    state = play_and_check(g, Move("tableau", 1, "foundation", 0, 1))
    assert state["tableau"][1] == []


RAINBOW_EMPTY_PILE = dict(
    base_rank="4",
    tableau={1: ["9c", "8h"], 2: ["5s"], 3: ["Kh"]},
    foundations={0: ["4h"]},
    waste=["2c", "Jh"],
    stock=["Qs"],
)


def test_rainbow_only_the_waste_top_goes_into_an_empty_pile():
    g = game("rainbow", **RAINBOW_EMPTY_PILE)
    assert moves_into(g, 0) == [waste_to(0)]
    state = play_and_check(g, waste_to(0))
    assert state["tableau"][0] == ["Jh"]


def test_rainbow_empty_pile_is_never_filled_automatically():
    g = game("rainbow", **RAINBOW_EMPTY_PILE)
    assert len(g.legal_moves()) > 1  # filling is one choice among others
    state = play_and_check(g, DRAW)
    assert state["tableau"][0] == [] and state["waste"][-1] == "Qs"
    state = play_and_check(g, DRAW)
    assert state["tableau"][0] == []


def test_rainbow_tableau_cards_never_go_into_an_empty_pile():
    g = game("rainbow", **RAINBOW_EMPTY_PILE)
    assert [m for m in g.legal_moves() if m.source == "tableau" and m.target == "tableau"] == []
    for pile, count in [(1, 2), (1, 1), (2, 1), (3, 1)]:
        with pytest.raises(ValueError):
            g.play(Move("tableau", pile, "tableau", 0, count))


def test_rainbow_empty_pile_with_empty_waste_takes_nothing():
    parts = dict(RAINBOW_EMPTY_PILE, waste=[])
    g = game("rainbow", **parts)
    assert moves_into(g, 0) == []


# --- stock and redeals -----------------------------------------------------------------------------


def draw_all(g: Game) -> list[str]:
    drawn = []
    while g.get_state()["stock"]:
        g.play(DRAW)
        drawn.append(g.get_state()["waste"][-1])
    return drawn


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_draw_turns_one_card_to_the_waste(variant):
    g = Game(variant, seed=5)
    before = g.get_state()
    assert g.play(DRAW) == 1
    after = g.get_state()
    assert after["stock"] == before["stock"][:-1]
    assert after["waste"] == [before["stock"][-1]]


def redeal(n: int) -> Move:
    return Move("waste", None, "stock", None, n)


def test_rainbow_allows_exactly_two_redeals():
    g = Game("rainbow", seed=11)
    for left in (2, 1):
        n = len(draw_all(g))
        assert g.get_state()["redeals_left"] == left
        assert g.play(redeal(n)) == n
    n = len(draw_all(g))
    assert g.get_state()["redeals_left"] == 0
    assert [m for m in g.legal_moves() if m.target == "stock"] == []
    with pytest.raises(ValueError):
        g.play(redeal(n))


def test_rainbow_redeal_needs_an_empty_stock():
    g = Game("rainbow", seed=11)
    g.play(DRAW)
    assert [m for m in g.legal_moves() if m.target == "stock"] == []


def test_rainbow_redeal_deals_the_first_dealt_card_first_again():
    g = Game("rainbow", seed=11)
    stock = g.get_state()["stock"]
    first_pass = draw_all(g)
    g.play(redeal(len(first_pass)))
    assert g.get_state()["stock"] == stock
    assert g.get_state()["waste"] == []
    assert draw_all(g) == first_pass


def test_rainbow_redeal_keeps_the_order_of_the_cards_left_in_the_waste():
    g = game("rainbow", tableau={0: ["9h"]}, foundations={0: suit_run("h", length=5)}, stock=["5d", "8c", "2d"])
    g.play(DRAW)
    g.play(DRAW)
    play_and_check(g, waste_to(0))  # 8c leaves the waste
    first_pass = ["2d", "8c"] + draw_all(g)
    g.play(redeal(len(first_pass) - 1))
    assert draw_all(g) == [c for c in first_pass if c != "8c"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_no_redeal_in_two_deck_games(variant):
    g = Game(variant, seed=3)
    n = len(draw_all(g))
    assert n == 64 and g.get_state()["redeals_left"] == 0
    assert [m for m in g.legal_moves() if m.target == "stock"] == []
    assert all(g.decode(a).target != "stock" for a in range(g.variant.n_actions))
    with pytest.raises(ValueError):
        g.play(redeal(n))


# --- foundations keep their cards ------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_no_action_takes_a_card_off_a_foundation(variant):
    g = game(variant, tableau={0: ["3s"]}, foundations={0: suit_run("h", length=5)}, waste=["6h"])
    assert all(g.decode(a).source != "foundation" for a in range(g.variant.n_actions))
    with pytest.raises(ValueError):
        g.play(Move("foundation", 0, "tableau", 0, 1))


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_foundation_count_never_falls_in_play(variant):
    g = Game(variant, seed=2)
    order = 0
    for _ in range(300):
        moves = g.legal_moves()
        if not moves:
            break
        before = g.foundation_cards
        g.play(moves[order % len(moves)])
        order += 7
        assert g.foundation_cards >= before


# --- won and lost ----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_all_cards_on_foundations_is_won(variant):
    v = get_variant(variant)
    base = "5" if variant == "rainbow" else "A"
    slots = {f: suit_run(SUITS[f % 4], base) for f in range(v.foundations)}
    g = game(variant, foundations=slots, base_rank=base)
    assert g.is_won() and not g.is_lost() and g.is_over()
    assert g.foundation_cards == v.n_cards
    assert g.legal_moves() == []


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_last_card_to_a_foundation_wins(variant):
    v = get_variant(variant)
    slots = {f: suit_run(SUITS[f % 4]) for f in range(v.foundations)}
    slots[v.foundations - 1] = slots[v.foundations - 1][:-1]
    g = game(variant, foundations=slots, waste=["Ks"])
    assert not g.is_won()
    g.play(Move("waste", None, "foundation", v.foundations - 1, 1))
    assert g.is_won() and not g.is_lost()


# Rank and File, nothing left to do: every card off the foundations is buried or blocked.
STUCK_RANK_AND_FILE = dict(
    foundations={
        0: suit_run("c", length=11),
        1: suit_run("c", length=11),
        2: suit_run("s", length=11),
        3: suit_run("s", length=11),
        4: suit_run("h", length=9),
        5: suit_run("h", length=9),
        6: suit_run("d", length=10),
        7: suit_run("d", length=10),
    },
    tableau={
        0: ["#Th", "Kh"],
        1: ["#Th", "Kh"],
        2: ["#Jd", "Kd"],
        3: ["#Jd", "Kd"],
        4: ["#Qc", "Qh"],
        5: ["#Qc", "Qh"],
        6: ["#Kc", "Qd"],
        7: ["#Kc", "Qd"],
        8: ["#Qs", "Jh"],
        9: ["#Qs", "#Ks", "#Ks", "Jh"],
    },
)


@pytest.mark.parametrize("variant", TWO_DECK)
def test_no_legal_move_with_empty_stock_is_lost(variant):
    g = game(variant, **STUCK_RANK_AND_FILE)
    assert g.get_state()["stock"] == []
    assert g.legal_moves() == []
    assert g.is_lost() and not g.is_won() and g.is_over()


@pytest.mark.parametrize("variant", TWO_DECK)
def test_cards_in_the_stock_mean_not_lost(variant):
    parts = dict(STUCK_RANK_AND_FILE, tableau=dict(STUCK_RANK_AND_FILE["tableau"]))
    parts["tableau"][9] = ["#Qs", "#Ks", "Jh"]  # the other Ks goes to the stock
    g = game(variant, **parts)
    assert g.get_state()["stock"] == ["Ks"]
    assert g.legal_moves() == [DRAW]
    assert not g.is_lost() and not g.is_over()


STUCK_RAINBOW = dict(
    base_rank="A",
    foundations={f: suit_run(s, length=9) for f, s in enumerate(SUITS)},
    tableau={0: ["Kc"], 1: ["Kd"], 2: ["Kh"], 3: ["Ks"]},
    waste=["Tc", "Td", "Th", "Ts", "Qc", "Qd", "Qh", "Qs", "Jd", "Jh", "Js", "Jc"],
    redeals_left=0,
)


def test_rainbow_no_move_and_no_redeal_left_is_lost():
    g = game("rainbow", **STUCK_RAINBOW)
    assert g.legal_moves() == []
    assert g.is_lost() and not g.is_won()


def test_rainbow_with_a_redeal_left_is_not_lost():
    g = game("rainbow", **dict(STUCK_RAINBOW, redeals_left=1))
    assert g.legal_moves() == [redeal(12)]
    assert not g.is_lost()


# --- canonical moves -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", TWO_DECK)
def test_second_ace_goes_to_the_lowest_empty_foundation(variant):
    g = game(variant, foundations={0: ["Ah"]}, waste=["Ah"])
    state = play_and_check(g, Move("waste", None, "foundation", 1, 1))
    assert state["foundations"][:2] == [["Ah"], ["Ah"]]
    g = game(variant, foundations={1: ["Ah"]}, waste=["Ah"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == [Move("waste", None, "foundation", 0, 1)]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_equal_piles_of_a_suit_take_the_next_card_on_the_lower_slot(variant):
    g = game(variant, foundations={2: ["Ah", "2h"], 5: ["Ah", "2h"]}, waste=["3h"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == [Move("waste", None, "foundation", 2, 1)]
    with pytest.raises(ValueError):
        g.play(Move("waste", None, "foundation", 5, 1))
    state = play_and_check(g, Move("waste", None, "foundation", 2, 1))
    assert state["foundations"][2] == ["Ah", "2h", "3h"]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_next_card_goes_to_the_pile_that_takes_it(variant):
    g = game(variant, foundations={2: ["Ah"], 5: ["Ah", "2h"]}, waste=["3h"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == [Move("waste", None, "foundation", 5, 1)]


def test_rainbow_base_card_goes_to_the_lowest_empty_foundation():
    slots = {0: ["7d"], 2: ["7c"], 3: suit_run("s", "7")}
    g = game("rainbow", base_rank="7", foundations=slots, tableau={0: ["Kh"], 1: ["2h"], 2: ["Jh"]}, waste=["7h"])
    assert [m for m in g.legal_moves() if m.target == "foundation"] == [Move("waste", None, "foundation", 1, 1)]


@pytest.mark.parametrize("variant", TWO_DECK)
def test_move_to_an_empty_pile_goes_to_the_lowest_empty_pile(variant):
    cards = {0: ["#2d", "9s", "8h"], 1: ["Qc"], 2: ["Qs"], 4: ["Kc"], 5: ["Ks"], 6: ["Qc"], 8: ["Qs"], 9: ["Kc"]}
    g = game(variant, tableau=cards, waste=["5h"])
    assert moves_into(g, 7) == []
    assert moves_into(g, 3) == [waste_to(3), Move("tableau", 0, "tableau", 3, 1), Move("tableau", 0, "tableau", 3, 2)]
    with pytest.raises(ValueError):
        g.play(waste_to(7))
    state = play_and_check(g, Move("tableau", 0, "tableau", 3, 2))
    assert state["tableau"][3] == ["9s", "8h"] and state["tableau"][7] == []


def test_rainbow_waste_to_empty_goes_to_the_lowest_empty_pile():
    g = game("rainbow", tableau={1: ["9c"], 3: ["Td"]}, waste=["5h"])
    assert [m for m in g.legal_moves() if m.source == "waste"] == [waste_to(0)]


# --- actions ---------------------------------------------------------------------------------------


def positions() -> list[Game]:
    games = [Game(v, seed) for v in VARIANT_NAMES for seed in (0, 1, 9)]
    for v in VARIANT_NAMES:  # and some played-on ones
        g = Game(v, seed=4)
        for k in range(40):
            moves = g.legal_moves()
            if not moves:
                break
            g.play(moves[(3 * k) % len(moves)])
        games.append(g)
    games += [
        game("rank_and_file", tableau={0: ["9s", "8h", "7c"], 1: ["5d"]}, waste=["Ah"]),
        game("number_ten", **STUCK_RANK_AND_FILE),
        game("rainbow", **RAINBOW_WITH_RESERVE),
        game("rainbow", **RAINBOW_EMPTY_PILE),
        game("rainbow", **dict(STUCK_RAINBOW, redeals_left=1)),
    ]
    return games


@pytest.mark.parametrize("g", positions(), ids=lambda g: g.variant.name)
def test_encode_decode_round_trip_for_every_action(g):
    for a in range(g.variant.n_actions):
        assert g.encode(g.decode(a)) == a


@pytest.mark.parametrize("g", positions(), ids=lambda g: g.variant.name)
def test_legal_moves_match_the_action_mask(g):
    mask = g.action_mask()
    assert [g.encode(m) for m in g.legal_moves()] == [a for a in range(len(mask)) if mask[a]]


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_illegal_move_raises_and_changes_nothing(variant):
    g = game(variant, tableau={0: ["7s"]}, waste=["6c"])
    before = g.get_state()
    with pytest.raises(ValueError):
        g.play(waste_to(0))  # same colour
    illegal = [a for a in range(g.variant.n_actions) if not g.action_mask()[a]]
    for a in illegal:
        with pytest.raises(ValueError):
            g.play(a)
    with pytest.raises(ValueError):
        g.play(g.variant.n_actions)
    assert g.get_state() == before


# --- storage bounds -------------------------------------------------------------------------------


def test_building_past_the_pile_storage_never_corrupts_another_pile():
    waste = ["Ac", "2h", "3c", "4h", "5c", "6h", "7c", "8h", "9c", "Th", "Jc", "Qh"]  # Qh on top
    # A pile that could outgrow the engine's storage is refused up front, naming the pile.
    with pytest.raises(ValueError, match=r"tableau\[0\] could grow to 17 cards"):
        game("rank_and_file", tableau={0: ["#2d", "#3d", "#4d", "5h", "Kc"], 1: ["9s"]}, waste=waste)
    # The same build from a dealt-shaped pile fits exactly.
    g = game("rank_and_file", tableau={0: ["#2d", "#3d", "#4d", "Kc"], 1: ["9s"]}, waste=waste)
    for _ in waste:
        g.play(waste_to(0))  # Qh on Kc, Jc on Qh, ... Ac on 2h: each a legal build
    state = g.get_state()
    assert state["tableau"][0][-13:] == ["Kc", "Qh", "Jc", "Th", "9c", "8h", "7c", "6h", "5c", "4h", "3c", "2h", "Ac"]
    assert state["tableau"][1] == ["9s"]
    Game.from_state(state)
