"""The game state as JSON (docs/state_format.md): round trips, deals, seeds and bad input."""

from __future__ import annotations

import copy
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solitaire_env import Game, get_variant
from solitaire_env.engine.deals import DEAL_LIMIT

RANKS = "A23456789TJQK"
SUITS = "cdhs"
VARIANT_NAMES = ["rank_and_file", "number_ten", "rainbow"]
TWO_DECK = ["rank_and_file", "number_ten"]
SEEDS = range(60)


def card_counts(state: dict) -> Counter:
    parts = [*state["tableau"], *state["foundations"], state["stock"], state["waste"], state.get("reserve") or []]
    return Counter(c.lstrip("#") for part in parts for c in part)


def full_deck(variant: str) -> Counter:
    return Counter({r + s: get_variant(variant).decks for r in RANKS for s in SUITS})


def suit_run(suit: str, first: str = "A", length: int = 13) -> list[str]:
    start = RANKS.index(first)
    return [RANKS[(start + k) % 13] + suit for k in range(length)]


def won_state(variant: str, base: str = "A") -> dict:
    """Every card on the foundations: a valid state with empty stock and waste, easy to bend."""
    v = get_variant(variant)
    return {
        "format": 1,
        "variant": variant,
        "tableau": [[] for _ in range(v.piles)],
        "foundations": [suit_run(SUITS[f % 4], base) for f in range(v.foundations)],
        "stock": [],
        "waste": [],
        "reserve": [],
        "redeals_left": v.redeals,
        "base_rank": base if variant == "rainbow" else None,
    }


# --- round trips -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_fresh_deal_round_trips_exactly(variant):
    for seed in SEEDS:
        state = Game(variant, seed).get_state()
        assert Game.from_state(state).get_state() == state
        assert Game.from_state(json.loads(json.dumps(state))).get_state() == state


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_played_positions_round_trip_exactly(variant):
    for seed in range(10):
        g = Game(variant, seed)
        for k in range(60):
            state = g.get_state()
            assert Game.from_state(json.loads(json.dumps(state))).get_state() == state
            moves = g.legal_moves()
            if not moves:
                break
            g.play(moves[(5 * k + seed) % len(moves)])


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_set_state_takes_a_valid_state(variant):
    g = Game(variant, seed=1)
    state = Game(variant, seed=2).get_state()
    g.set_state(state)
    assert g.get_state() == state
    assert g.legal_moves() == Game.from_state(state).legal_moves()


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_state_is_plain_json(variant):
    state = Game(variant, seed=3).get_state()
    assert json.loads(json.dumps(state)) == state
    assert set(state) == {
        "format",
        "variant",
        "tableau",
        "foundations",
        "stock",
        "waste",
        "reserve",
        "redeals_left",
        "base_rank",
    }
    assert state["format"] == 1 and state["variant"] == variant


def test_two_deck_state_may_leave_out_reserve_and_base_rank():
    state = Game("rank_and_file", seed=3).get_state()
    del state["reserve"], state["base_rank"]
    assert Game.from_state(state).get_state() == Game("rank_and_file", seed=3).get_state()


def test_two_deck_state_may_have_a_null_reserve():
    state = Game("number_ten", seed=3).get_state()
    state["reserve"] = None
    assert Game.from_state(state).get_state() == Game("number_ten", seed=3).get_state()


def test_rainbow_foundation_may_wrap_from_king_to_ace():
    state = won_state("rainbow", base="J")
    assert state["foundations"][0][:4] == ["Jc", "Qc", "Kc", "Ac"]
    assert Game.from_state(state).is_won()


# --- deals ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant, down", [("rank_and_file", 3), ("number_ten", 2)])
def test_two_deck_deal_shape(variant, down):
    for seed in SEEDS:
        state = Game(variant, seed).get_state()
        assert len(state["tableau"]) == 10
        for pile in state["tableau"]:
            assert len(pile) == 4
            assert [c.startswith("#") for c in pile] == [True] * down + [False] * (4 - down)
        assert len(state["stock"]) == 64 and state["waste"] == []
        assert state["foundations"] == [[] for _ in range(8)]
        assert state["redeals_left"] == 0 and state["reserve"] == [] and state["base_rank"] is None
        assert card_counts(state) == full_deck(variant)


def test_rainbow_deal_shape():
    for seed in SEEDS:
        state = Game("rainbow", seed).get_state()
        first, *others = state["foundations"]
        assert len(first) == 1 and others == [[], [], []]
        assert state["base_rank"] == first[0][0]
        reserve = state["reserve"]
        assert len(reserve) == 13
        assert all(c.startswith("#") for c in reserve[:12]) and not reserve[12].startswith("#")
        assert len(state["tableau"]) == 4
        assert all(len(pile) == 1 and not pile[0].startswith("#") for pile in state["tableau"])
        assert len(state["stock"]) == 34 and state["waste"] == []
        assert state["redeals_left"] == 2
        assert card_counts(state) == full_deck("rainbow")


def test_rainbow_base_rank_varies_with_the_deal():
    assert len({Game("rainbow", seed).get_state()["base_rank"] for seed in SEEDS}) > 5


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_same_seed_same_deal(variant):
    for seed in (0, 1, 12345, 2**31 + 7):
        assert Game(variant, seed).get_state() == Game(variant, seed).get_state()


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_different_seeds_different_deals(variant):
    deals = {json.dumps(Game(variant, seed).get_state()) for seed in SEEDS}
    assert len(deals) == len(SEEDS)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", None, True])
def test_bad_seed_is_rejected(seed):
    with pytest.raises(ValueError, match="seed"):
        Game("rank_and_file", seed)


# --- bad input -----------------------------------------------------------------------------------


def assert_rejected(state, match: str, variant: str = "rank_and_file") -> None:
    """``state`` raises ValueError(match) from from_state and from set_state, which keeps the position."""
    with pytest.raises(ValueError, match=match):
        Game.from_state(state)
    g = Game(variant, seed=5)
    g.play(g.legal_moves()[0])
    before, mask = g.get_state(), g.action_mask()
    with pytest.raises(ValueError, match=match):
        g.set_state(state)
    assert g.get_state() == before
    assert (g.action_mask() == mask).all()


def deal(variant: str = "rank_and_file", seed: int = 1) -> dict:
    return Game(variant, seed).get_state()


@pytest.mark.parametrize("state", [[], "{}", None, 1, json.dumps(deal())])
def test_state_that_is_not_a_dict(state):
    assert_rejected(state, "JSON object")


@pytest.mark.parametrize("name", ["spider", "Rank and File", "", None, 3, ["rainbow"]])
def test_unknown_variant(name):
    state = deal()
    state["variant"] = name
    assert_rejected(state, "unknown variant")


@pytest.mark.parametrize("variant", VARIANT_NAMES)
@pytest.mark.parametrize("key", ["format", "variant", "tableau", "foundations", "stock", "waste", "redeals_left"])
def test_missing_key(variant, key):
    state = deal(variant)
    del state[key]
    assert_rejected(state, f"missing key.*{key}", variant)


def test_rainbow_missing_reserve():
    state = deal("rainbow")
    del state["reserve"]
    assert_rejected(state, "missing key 'reserve'", "rainbow")


def test_rainbow_missing_base_rank():
    state = deal("rainbow")
    del state["base_rank"]
    assert_rejected(state, "base_rank", "rainbow")


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_unknown_extra_key(variant):
    state = deal(variant)
    state["score"] = 10
    assert_rejected(state, "unknown key.*score", variant)


@pytest.mark.parametrize("fmt", [0, 2, "1", 1.0, None, True, [1]])
def test_wrong_format_number(fmt):
    state = deal()
    state["format"] = fmt
    assert_rejected(state, "format")


@pytest.mark.parametrize("text", ["Xx", "10h", "ah", "AS", "A", "Ahh", "", "#", 7, None])
@pytest.mark.parametrize("where", ["stock", "waste", "tableau"])
def test_unknown_card_string(text, where):
    state = deal()
    if where == "tableau":
        state["tableau"][2][-1] = text
    elif where == "waste":
        state["waste"] = [text]
    else:
        state["stock"][0] = text
    assert_rejected(state, r"card|'As'")


def test_unknown_face_down_card_string():
    state = deal()
    state["tableau"][0][0] = "#Zz"
    assert_rejected(state, "unknown card 'Zz'")


@pytest.mark.parametrize(
    "variant, card, match",
    [
        ("rank_and_file", "As", "As appears 3 time"),
        ("number_ten", "Kd", "Kd appears 3 time"),
        ("rainbow", "7c", "7c appears 2 time"),
    ],
)
def test_a_card_too_many(variant, card, match):
    state = deal(variant)
    state["waste"].append(card)
    assert_rejected(state, match, variant)


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_a_card_too_few(variant):
    state = deal(variant)
    gone = state["stock"].pop()
    decks = get_variant(variant).decks
    assert_rejected(state, f"exactly {decks} time.*{gone} appears {decks - 1} time", variant)


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_one_card_in_place_of_another(variant):
    state = deal(variant)
    old = state["stock"][0]
    new = "Qh" if old != "Qh" else "Qs"
    state["stock"][0] = new
    assert_rejected(state, f"{new} appears", variant)


@pytest.mark.parametrize("where", ["waste", "stock", "foundations"])
def test_face_down_card_outside_tableau_and_reserve(where):
    state = won_state("rank_and_file")
    card = state["foundations"][7].pop()  # Ks
    if where == "foundations":
        state["foundations"][7].append("#" + card)
    else:
        state[where].append("#" + card)
    assert_rejected(state, "face-down cards .* appear only in tableau and reserve")


def test_face_down_top_card_of_a_pile():
    state = deal()
    state["tableau"][4][-1] = "#" + state["tableau"][4][-1]
    assert_rejected(state, r"tableau\[4\].*top card .* is face down")


def test_face_down_top_card_of_the_reserve():
    state = deal("rainbow")
    state["reserve"][-1] = "#" + state["reserve"][-1]
    assert_rejected(state, r"reserve.*top card .* is face down", "rainbow")


def test_face_down_card_above_a_face_up_one():
    state = deal()
    pile = state["tableau"][3]
    state["tableau"][3] = [pile[0], pile[1].lstrip("#"), pile[2], pile[3]]
    assert_rejected(state, r"tableau\[3\]\[2\].*face-down card lies above a face-up one")


def test_face_down_card_above_a_face_up_one_in_the_reserve():
    state = deal("rainbow")
    state["reserve"][0] = state["reserve"][0].lstrip("#")
    assert_rejected(state, r"reserve\[1\].*face-down card lies above a face-up one", "rainbow")


def test_foundation_of_the_wrong_suit():
    state = won_state("rank_and_file")
    state["foundations"][0][1], state["foundations"][1][1] = "2d", "2c"  # slot 1 holds diamonds
    assert_rejected(state, r"foundations\[0\]\[1\] is 2d, which breaks the build")


def test_foundation_skipping_a_rank():
    state = won_state("rank_and_file")
    state["waste"] = [state["foundations"][0].pop(2)]  # 3c
    assert_rejected(state, r"foundations\[0\]\[2\] is 4c, which breaks the build")


def test_foundation_not_starting_from_an_ace():
    state = won_state("number_ten")
    state["waste"] = [state["foundations"][3].pop(0)]  # As
    assert_rejected(state, r"foundations\[3\]\[0\] is 2s, which breaks the build", "number_ten")


def test_rainbow_foundation_not_starting_from_the_base_rank():
    state = won_state("rainbow", base="9")
    state["base_rank"] = "8"
    assert_rejected(state, r"foundations\[0\]\[0\] is 9c, which breaks the build", "rainbow")


def test_foundation_of_more_than_13_cards():
    state = won_state("rank_and_file")
    state["foundations"][0].append(state["foundations"][4].pop(0))  # Kc then Ac: no wrap
    assert_rejected(state, r"foundations\[0\] holds 14 cards|foundations\[4\]\[0\]")


def test_rainbow_empty_pile_while_the_reserve_holds_cards():
    state = deal("rainbow")
    state["tableau"][1] += state["tableau"][2]
    state["tableau"][2] = []
    assert_rejected(state, "tableau pile is empty while the reserve holds cards", "rainbow")


def test_rainbow_empty_pile_with_an_empty_reserve_is_valid():
    state = deal("rainbow")
    state["tableau"][1] = ["#" + c.lstrip("#") for c in state["reserve"]] + state["tableau"][1] + state["tableau"][2]
    state["tableau"][2], state["reserve"] = [], []
    assert Game.from_state(state).get_state() == state


# The engine's storage bounds (docs/state_format.md, rules 19-22): beyond the game's own rules, met by
# every position play reaches. Each state below breaks that bound and nothing else. (Rule 22, a pile
# that could outgrow its storage by building, is tested in test_rules.py.)


def test_rainbow_stock_and_waste_of_more_than_34_cards():
    state = deal("rainbow")
    state["waste"].append(state["reserve"].pop(0).lstrip("#"))  # a face-down reserve card
    assert (len(state["stock"]), len(state["waste"]), len(state["reserve"])) == (34, 1, 12)
    assert_rejected(state, "stock and waste hold 35 cards; Rainbow deals only 34 there", "rainbow")


@pytest.mark.parametrize("variant", TWO_DECK)
def test_two_deck_stock_and_waste_of_more_than_64_cards(variant):
    state = deal(variant)
    state["stock"].insert(0, state["tableau"][6].pop(0).lstrip("#"))  # the pile's bottom card
    assert_rejected(state, f"stock and waste hold 65 cards; {get_variant(variant).title} deals only 64", variant)


def test_rainbow_reserve_of_more_than_13_cards():
    state = deal("rainbow")
    state["reserve"].insert(0, "#" + state["stock"].pop(0))
    assert_rejected(state, "reserve holds 14 cards; Rainbow deals 13 there", "rainbow")


@pytest.mark.parametrize("variant", TWO_DECK)
def test_two_deck_pile_of_more_than_16_cards(variant):
    state = won_state(variant)
    cards = [state["foundations"][f].pop() for _ in range(2) for f in range(8)] + [state["foundations"][0].pop()]
    state["tableau"][9] = ["#" + c for c in cards[:-1]] + cards[-1:]  # 16 face down, the Jack of clubs up
    assert_rejected(state, r"tableau\[9\] holds 17 cards; the engine stores at most 16", variant)


@pytest.mark.parametrize(
    "variant, value",
    [
        ("rank_and_file", 1),
        ("rank_and_file", -1),
        ("number_ten", 2),
        ("rainbow", 3),
        ("rainbow", -1),
        ("rainbow", "2"),
        ("rainbow", 1.0),
        ("rainbow", True),
        ("rainbow", None),
    ],
)
def test_redeals_left_out_of_range(variant, value):
    state = deal(variant)
    state["redeals_left"] = value
    assert_rejected(state, "redeals_left", variant)


@pytest.mark.parametrize("value", [0, 1, 2])
def test_rainbow_redeals_left_in_range(value):
    state = deal("rainbow")
    state["redeals_left"] = value
    assert Game.from_state(state).get_state() == state


@pytest.mark.parametrize("variant, n", [("rank_and_file", 9), ("rank_and_file", 11), ("number_ten", 4), ("rainbow", 5)])
def test_wrong_number_of_piles(variant, n):
    state = deal(variant)
    piles = state["tableau"]
    state["tableau"] = piles[:n] if n < len(piles) else piles + [[]] * (n - len(piles))
    assert_rejected(state, f"tableau must be a list of {get_variant(variant).piles} lists", variant)


@pytest.mark.parametrize("variant, n", [("rank_and_file", 7), ("rainbow", 5), ("rainbow", 3)])
def test_wrong_number_of_foundations(variant, n):
    state = deal(variant)
    slots = state["foundations"]
    state["foundations"] = slots[:n] if n < len(slots) else slots + [[]] * (n - len(slots))
    assert_rejected(state, f"foundations must be a list of {get_variant(variant).foundations} lists", variant)


@pytest.mark.parametrize("key", ["tableau", "foundations", "stock", "waste"])
def test_part_that_is_not_a_list(key):
    state = deal()
    state[key] = "As Ks"
    assert_rejected(state, key)


@pytest.mark.parametrize("where", ["tableau", "foundations", "reserve"])
def test_pile_that_is_not_a_list(where):
    state = deal("rainbow")
    if where == "reserve":
        state["reserve"] = "3d"
    else:
        state[where][1] = "3d"
    assert_rejected(state, rf"{where}(\[1\])? must be a list of cards", "rainbow")


@pytest.mark.parametrize("rank", ["1", "10", "a", "", None, 7])
def test_rainbow_bad_base_rank(rank):
    state = deal("rainbow")
    state["base_rank"] = rank
    assert_rejected(state, "base_rank", "rainbow")


def test_two_deck_state_with_a_base_rank():
    state = deal()
    state["base_rank"] = "A"
    assert_rejected(state, "base_rank")


def test_two_deck_state_with_a_reserve():
    state = won_state("rank_and_file")
    state["reserve"] = [state["foundations"][7].pop()]
    assert_rejected(state, "reserve")


def test_rainbow_state_to_a_rank_and_file_game():
    assert_rejected_by_game(deal("rainbow"), "rank_and_file", "Rainbow")


def test_rank_and_file_state_to_a_number_ten_game():
    assert_rejected_by_game(deal("rank_and_file"), "number_ten", "Rank and File")


def assert_rejected_by_game(state: dict, variant: str, match: str) -> None:
    g = Game(variant, seed=4)
    before = g.get_state()
    with pytest.raises(ValueError, match=match):
        g.set_state(state)
    assert g.get_state() == before


def test_rejected_state_is_not_changed():
    state = deal("rainbow")
    state["redeals_left"] = 9
    kept = copy.deepcopy(state)
    with pytest.raises(ValueError):
        Game("rainbow", 0).set_state(state)
    assert state == kept


# --- any played position -------------------------------------------------------------------------


def check_position(g: Game, before_found: int) -> None:
    state = g.get_state()
    again = Game.from_state(json.loads(json.dumps(state)))  # validates
    assert again.get_state() == state
    assert (again.action_mask() == g.action_mask()).all()
    assert card_counts(state) == full_deck(state["variant"])
    assert g.foundation_cards >= before_found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(VARIANT_NAMES),
    seed=st.integers(0, 2**32 - 1),
    choices=st.lists(st.integers(0, 2**16), max_size=120),
)
def test_random_play_keeps_every_state_valid(variant, seed, choices):
    g = Game(variant, seed)
    found = 0
    check_position(g, found)
    for choice in choices:
        legal = g.legal_actions()
        if len(legal) == 0:
            assert g.is_won() or g.is_lost()
            break
        found = g.foundation_cards
        g.play(int(legal[choice % len(legal)]))
        check_position(g, found)


def _shuffled_in_python(decks: int, seed: int) -> list[int]:
    """shuffled_deck's Fisher-Yates as plain Python (the compiled loop must give the same decks)."""
    deck = [card for _ in range(decks) for card in range(52)]
    bits = np.random.PCG64(seed)
    raw = iter(int(x) for x in bits.random_raw(len(deck)))
    for i in range(len(deck) - 1, 0, -1):
        limit = (1 << 64) - (1 << 64) % (i + 1)
        r = next(raw, None)
        while r is None or r >= limit:
            r = int(bits.random_raw())
        j = r % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize("decks", [1, 2])
def test_the_compiled_shuffle_deals_the_decks_of_the_python_loop(decks):
    from solitaire_env.engine.state import shuffled_deck

    for seed in [*range(300), 2**31 - 1, 2**40 + 7, DEAL_LIMIT - 1]:
        assert shuffled_deck(decks, seed) == _shuffled_in_python(decks, seed)


def test_the_compiled_shuffle_leaves_a_draw_it_would_reject_to_the_python_loop():
    from solitaire_env.engine.state import _shuffle

    deck = np.arange(104, dtype=np.int64)
    raw = np.zeros(104, dtype=np.uint64)
    raw[5] = np.uint64(2**64 - 1)  # in the rejected tail of every bound that does not divide 2**64
    assert not _shuffle(deck, raw)
    assert _shuffle(np.arange(104, dtype=np.int64), np.zeros(104, dtype=np.uint64))


_SEEDS = [0, 1, 7, 2**32 - 1, 2**32, 2**40 + 7, DEAL_LIMIT - 1, 2**63, 2**64 - 1, 2**64, 2**70 + 3]


def test_the_compiled_pcg64_draws_numpys_numbers():
    from solitaire_env.engine import pcg64

    seeds = _SEEDS + [int(x) for x in np.random.default_rng(11).integers(0, 2**63, 2000, dtype=np.int64)]
    for seed in seeds:
        assert np.array_equal(pcg64.raw(seed, 104), np.random.PCG64(seed).random_raw(104)), seed


def _deal_by_hand(v, seed: int) -> np.ndarray:
    """The deal as the rules describe it, laid out by ``build`` from the plain-Python shuffle."""
    from solitaire_env.engine.state import build

    cards = iter(_shuffled_in_python(v.decks, seed))
    foundations = [[] for _ in range(v.foundations)]
    if v.base_from_deal:
        foundations[0].append(next(cards))
    reserve = [next(cards) for _ in range(v.reserve)]
    piles = [[] for _ in range(v.piles)]
    for _ in range(v.deal_down + v.deal_up):  # row by row, the face-down rows first
        for pile in piles:
            pile.append(next(cards))
    return build(v, tableau=[(p, v.deal_down) for p in piles], foundations=foundations, stock=list(cards),
                 waste=[], reserve=(reserve, max(len(reserve) - 1, 0)), redeals=v.redeals,
                 base=foundations[0][0] % 13 if v.base_from_deal else 0)


@pytest.mark.parametrize("name", ["rank_and_file", "number_ten", "rainbow"])
def test_the_compiled_deal_lays_out_the_deal_of_the_rules(name, monkeypatch):
    from solitaire_env.engine import state
    from solitaire_env.engine.state import deal, deal_into

    v = get_variant(name)
    seeds = _SEEDS + [int(x) for x in np.random.default_rng(12).integers(0, DEAL_LIMIT, 200, dtype=np.int64)]
    row = np.empty(v.state_size, dtype=np.int8)
    for seed in seeds:
        expected = _deal_by_hand(v, seed)
        assert np.array_equal(deal(v, seed), expected), seed
        row[:] = 99  # a used row of a batched env: every entry is written
        deal_into(v, seed, row)
        assert np.array_equal(row, expected), seed
    # A draw the compiled shuffle rejects: the same deal by the plain loop.
    monkeypatch.setattr(state, "_deal_fast", lambda *args: False)
    for seed in seeds[:4]:
        assert np.array_equal(deal(v, seed), _deal_by_hand(v, seed)), seed
