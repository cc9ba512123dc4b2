"""The rgb_array picture: fixed shape per variant and width, changes with the position, hides hidden cards."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from solitaire_env import Game
from solitaire_env.envs.render import render_rgb

VARIANTS = ["rank_and_file", "number_ten", "rainbow"]


def _played(variant: str, seed: int, steps: int) -> Game:
    game, rng = Game(variant, seed=seed), random.Random(seed)
    for _ in range(steps):
        moves = game.legal_moves()
        if not moves:
            break
        game.play(rng.choice(moves))
    return game


def _positions(variant: str, seeds=range(4), steps=(0, 1, 25, 60, 150)) -> list[dict]:
    return [_played(variant, seed, n).get_state() for seed in seeds for n in steps]


def _long_pile_state(variant: str) -> dict:
    """A valid position whose first piles are as long as the variant allows in practice, or longer."""
    state = Game(variant, seed=11).get_state()
    if variant == "rainbow":
        cards = [c.lstrip("#") for c in state["reserve"] + state["stock"] + sum(state["tableau"], [])]
        random.Random(0).shuffle(cards)
        state.update(tableau=[cards[:46], cards[46:47], cards[47:48], cards[48:49]], stock=cards[49:],
                     waste=[], reserve=[])
    else:
        cards = [c.lstrip("#") for c in state["stock"] + sum(state["tableau"], [])]
        run_a = [r + "hs"[k % 2] for k, r in enumerate("KQJT98765432A")]
        run_b = [r + "cd"[k % 2] for k, r in enumerate("KQJT98765432A")]
        for card in run_a + run_b:
            cards.remove(card)
        piles = [["#" + c for c in cards[:3]] + run_a, cards[3:6] + run_b]  # 3 down + 13, and 16 face up
        rest = cards[6:]
        piles += [["#" + rest[2 * p], rest[2 * p + 1]] for p in range(8)]
        state.update(tableau=piles, stock=rest[16:50], waste=rest[50:])
    return Game.from_state(state).get_state()  # checked valid by the engine


@pytest.mark.parametrize("variant", VARIANTS)
def test_image_is_hxwx3_uint8(variant):
    image = render_rgb(Game(variant, seed=1).get_state())
    assert isinstance(image, np.ndarray)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[1] == (1000 if variant != "rainbow" else 720)
    assert image.shape[0] % 2 == 0 and image.shape[1] % 2 == 0  # video encoders want even sides
    assert image.std() > 10  # a picture, not a blank


@pytest.mark.parametrize("variant", VARIANTS)
def test_same_shape_for_every_position(variant):
    states = _positions(variant) + [_long_pile_state(variant)]
    shapes = {render_rgb(s).shape for s in states}
    assert len(shapes) == 1, shapes
    small = {render_rgb(s, width=640).shape for s in states[::4] + states[-1:]}
    assert len(small) == 1 and small.pop()[1] == 640


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("width", [480, 1280])
def test_width_sets_the_width(variant, width):
    assert render_rgb(Game(variant, seed=2).get_state(), width=width).shape[1] == width


def test_long_piles_stay_inside_the_picture():
    for variant in VARIANTS:
        state = _long_pile_state(variant)
        assert max(len(p) for p in state["tableau"]) >= 16
        image = render_rgb(state).astype(int)
        # The bottom rows are felt only: the long pile and its count end above them.
        bottom = image[-3:]
        assert (bottom[..., 1] > bottom[..., 0] + 20).all()


@pytest.mark.parametrize("variant", VARIANTS)
def test_different_positions_give_different_images(variant):
    images = [render_rgb(s).tobytes() for s in _positions(variant, seeds=[3], steps=(0, 1, 2, 30, 90))]
    assert len(set(images)) == len(images)
    game = Game(variant, seed=5)
    before = render_rgb(game.get_state())
    game.play(game.legal_moves()[0])
    assert not np.array_equal(before, render_rgb(game.get_state()))


def _swap_hidden(state: dict, rng: random.Random) -> dict | None:
    """The same position with two face-down cards of different identity swapped, or None if it has < 2."""
    spots = [(p, k) for p, pile in enumerate(state["tableau"]) for k, c in enumerate(pile) if c.startswith("#")]
    spots += [(-1, k) for k, c in enumerate(state.get("reserve") or []) if c.startswith("#")]
    rng.shuffle(spots)

    def get(s, spot):
        p, k = spot
        return (s["reserve"] if p < 0 else s["tableau"][p])[k]

    for a in spots:
        for b in spots:
            if get(state, a) != get(state, b):
                other = copy.deepcopy(state)
                ca, cb = get(state, a), get(state, b)
                (other["reserve"] if a[0] < 0 else other["tableau"][a[0]])[a[1]] = cb
                (other["reserve"] if b[0] < 0 else other["tableau"][b[0]])[b[1]] = ca
                return other
    return None


@pytest.mark.parametrize("variant", VARIANTS)
def test_hidden_cards_and_stock_order_do_not_show(variant):
    rng = random.Random(7)
    checked = 0
    for state in _positions(variant, seeds=range(3), steps=(0, 20, 80)):
        image = render_rgb(state)
        other = _swap_hidden(state, rng)
        if other is not None:
            other = Game.from_state(other).get_state()
            assert other != state
            assert np.array_equal(render_rgb(other), image)
            checked += 1
        if len(set(state["stock"])) > 1:
            shuffled = copy.deepcopy(state)
            while shuffled["stock"] == state["stock"]:
                rng.shuffle(shuffled["stock"])
            shuffled = Game.from_state(shuffled).get_state()
            assert np.array_equal(render_rgb(shuffled), image)
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("variant", VARIANTS)
def test_face_up_cards_do_show(variant):
    """The check above would notice a change: swapping a face-up card for a hidden one alters the picture."""
    state = Game(variant, seed=4).get_state()
    other = copy.deepcopy(state)
    if variant == "rainbow":
        top, hidden = other["tableau"][0][-1], other["reserve"][0]
        other["tableau"][0][-1], other["reserve"][0] = hidden[1:], "#" + top
    else:
        top, hidden = other["tableau"][0][-1], other["tableau"][1][0]
        other["tableau"][0][-1], other["tableau"][1][0] = hidden[1:], "#" + top
    if top == hidden[1:]:
        pytest.skip("the two cards happen to be equal")
    other = Game.from_state(other).get_state()
    assert not np.array_equal(render_rgb(other), render_rgb(state))


def test_bad_width_is_rejected():
    state = Game("rank_and_file", seed=1).get_state()
    for width in (0, -5, 100, 2.5, True):
        with pytest.raises(ValueError):
            render_rgb(state, width=width)


# --- the text table -------------------------------------------------------------------------------


def test_text_shows_the_reserve_base_rank_and_redeals_the_variant_declares(monkeypatch):
    from dataclasses import replace

    from solitaire_env.engine.games import RAINBOW, VARIANTS
    from solitaire_env.engine.state import deal, to_json
    from solitaire_env.envs.render import render_text

    rainbow = render_text(Game("rainbow", seed=0).get_state()).splitlines()
    assert rainbow[2].startswith("reserve: 13 cards, top ") and "base rank: 2" in rainbow[2]
    assert rainbow[2].endswith("redeals left: 2")
    assert not any("reserve" in line for line in render_text(Game("rank_and_file", seed=0).get_state()).splitlines())
    # A reserve without a dealt base rank: the state has no base rank, yet the reserve is shown.
    plain = replace(RAINBOW, name="reserve_only", base_from_deal=False, redeals=0)
    monkeypatch.setitem(VARIANTS, plain.name, plain)
    lines = render_text(to_json(plain, deal(plain, 0))).splitlines()
    assert lines[2].startswith("reserve: 13 cards, top ") and "base rank" not in lines[2] and "redeals" not in lines[2]


# --- FreeCell: free cells in the top row, no stock or waste ---------------------------------------


def _freecell_layout(width: int = 720):
    from solitaire_env.envs.render import _layout

    return _layout("freecell", width)


def test_freecell_image_is_hxwx3_uint8_and_one_shape():
    from solitaire_env.engine.moves import Move

    image = render_rgb(Game("freecell", seed=1).get_state())
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[1] == 720 and image.shape[0] % 2 == 0
    assert image.std() > 10
    # Every position, a 20-card pile (the engine's most) and full cells included, gives that shape,
    # and the long pile ends above the bottom rows.
    states = _positions("freecell", seeds=range(2), steps=(0, 1, 40, 150))
    long = Game("freecell", seed=3).get_state()
    low = [r + s for r in "5432A" for s in "cdhs"]  # the 5s down to the Aces: room to build on none
    rest = [c for c in sum(long["tableau"], []) if c not in low]
    long["tableau"] = [low] + [rest[p::7] for p in range(7)]
    game = Game.from_state(long)
    for c in range(4):
        game.play(Move("tableau", c + 1, "cell", c, 1))
    assert None not in game.get_state()["cells"] and len(game.get_state()["tableau"][0]) == 20
    states.append(game.get_state())
    assert {render_rgb(s).shape for s in states} == {image.shape}
    bottom = render_rgb(game.get_state()).astype(int)[-3:]
    assert (bottom[..., 1] > bottom[..., 0] + 20).all()
    assert render_rgb(states[0], width=480).shape[1] == 480


def test_freecell_draws_four_empty_cells_and_no_stock_or_waste():
    lay = _freecell_layout()
    image = render_rgb(Game("freecell", seed=1).get_state())
    felt = image[0, 0]
    assert len(lay.cell_x) == 4 and lay.cell_x[-1] + lay.cw < lay.found_x[0]
    top = slice(lay.top_y - 2, lay.top_y + lay.ch + 2)
    crops = [image[top, x - 2 : x + lay.cw + 2] for x in lay.cell_x]
    # Each cell is the same empty outline: a stock or waste drawn over them would make them differ.
    assert all(np.array_equal(crops[0], crop) for crop in crops[1:])
    assert (crops[0] != felt).any(axis=-1).sum() > lay.ch  # an outline, not bare felt
    for a, b in zip(lay.cell_x, lay.cell_x[1:], strict=False):  # bare felt between the cells
        assert (image[top, a + lay.cw + 1 : b - 1] == felt).all()
    # No card back anywhere: FreeCell has no stock and every card is face up.
    back = np.array([28, 62, 150])
    assert not (np.abs(image.astype(int) - back).sum(axis=-1) < 30).any()
    # The cells' label sits under them.
    label = image[lay.top_y + lay.ch + 3 : lay.tab_y, lay.cell_x[0] : lay.cell_x[-1] + lay.cw]
    assert (label != felt).any()


def test_freecell_card_in_a_cell_shows_there_only():
    from solitaire_env.engine.moves import Move

    lay = _freecell_layout()
    game = Game("freecell", seed=1)
    before = game.get_state()
    game.play(Move("tableau", 0, "cell", 0, 1))
    after = game.get_state()
    assert after["cells"][0] == before["tableau"][0][-1]
    a, b = render_rgb(before).astype(int), render_rgb(after).astype(int)
    changed = (a != b).any(axis=-1)
    pad = max(2, lay.cw // 20)  # a card's shadow reaches a little past it
    x0, x1 = lay.cell_x[0] - pad, lay.cell_x[0] + lay.cw + pad
    # The card: near-white face pixels fill the cell, which was an empty outline.
    cell = (slice(lay.top_y, lay.top_y + lay.ch), slice(lay.cell_x[0], lay.cell_x[0] + lay.cw))
    assert (b[cell].min(axis=-1) > 230).mean() > 0.5 and (a[cell].min(axis=-1) > 230).mean() < 0.05
    # In the top row, only that cell changed (and the cells' label under them); the header and the
    # foundations did not.
    label_y = lay.top_y + lay.ch + 3
    assert changed[: lay.top_y - pad].sum() == 0
    assert changed[: label_y, x0:x1].any()
    assert changed[: label_y, :x0].sum() == 0 and changed[: label_y, x1:].sum() == 0
    assert changed[: lay.tab_y, lay.cell_x[-1] + lay.cw + pad :].sum() == 0
    # In the tableau, only the first pile (one card shorter) changed.
    tab = changed[lay.tab_y - pad :]
    assert tab[:, lay.tab_x[0] : lay.tab_x[0] + lay.cw].any()
    assert tab[:, lay.tab_x[1] - pad :].sum() == 0


def test_freecell_rendering_is_deterministic():
    state = _played("freecell", 2, 30).get_state()
    first = render_rgb(state)
    assert np.array_equal(first, render_rgb(state))
    assert np.array_equal(first, render_rgb(Game.from_state(state).get_state()))
    assert np.array_equal(render_rgb(state, width=960), render_rgb(state, width=960))
