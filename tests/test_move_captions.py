"""Move captions: a caption counts the stock and the redeals of the position the move was played from
("1 of its 34 cards"), which agrees with the table it is listed under in ``play`` (``stock: 34 cards``) and
with the position a replay shows above it (33 left after the draw)."""

from __future__ import annotations

import io
import re

import numpy as np

from solitaire_env import Game
from solitaire_env.tools.play import play
from solitaire_env.tools.recording import record_episode
from solitaire_env.tools.replay import _captions


class _StockOnly:
    """Draws while it can, then redeals, then plays the first legal move: every stock caption in one game."""

    def __init__(self, game: Game) -> None:
        self.draw = next(game.encode(m) for m in game.legal_moves() if m.source == "stock")
        self.redeal = next(a for a in range(game.variant.n_actions) if game.decode(a).target == "stock")

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation, info: dict) -> int:
        legal = np.flatnonzero(info["action_mask"])
        for action in (self.draw, self.redeal):
            if action in legal:
                return int(action)
        return int(legal[0])


def test_replay_captions_count_the_stock_and_redeals_shown_with_them():
    game = Game("rainbow", seed=3)
    rec = record_episode("Rainbow-v0", agent=_StockOnly(game), seed=3, max_steps=150)
    states, captions = _captions(rec)
    draws = redeals = 0
    for state, caption in zip(states[1:], captions[1:], strict=True):  # caption i: under states[i], after move i
        assert not re.search(r"\b1 (cards|redeals)\b", caption), caption
        if "draw" in caption:
            draws += 1
            match = re.search(r"draw from the stock \(1 of its (\d+) cards\)", caption)
            assert (int(match[1]) if match else 1) == len(state["stock"]) + 1, caption
            assert match or "draw the stock's last card" in caption
        elif "redeal" in caption:
            redeals += 1
            match = re.search(r"\(1 of the (\d+) redeals left\)", caption)
            assert (int(match[1]) if match else 1) == state["redeals_left"] + 1, caption
            assert match or "(the last redeal)" in caption
    assert redeals == game.variant.redeals and draws > 2 * len(game.get_state()["stock"])
    text = "\n".join(captions)  # the last card and the last redeal both came up
    for words in ("(1 of its 2 cards)", "draw the stock's last card", "(1 of the 2 redeals left)", "(the last redeal)"):
        assert words in text


def test_the_terminal_game_counts_the_stock_as_its_table_shows_it():
    stock = len(Game("rainbow", seed=3).get_state()["stock"])
    out = io.StringIO()
    assert play("rainbow", seed=3, stdin=io.StringIO("d\nquit\n"), stdout=out) == 0
    text = out.getvalue()
    before = text.index(f"played d: draw from the stock (1 of its {stock} cards)")
    # The listing under the first table, which shows the stock's size, counts the same cards.
    assert f"stock: {stock} cards" in text[:before]
    assert re.search(rf"\) d +draw from the stock \(1 of its {stock} cards\)", text[:before])
    assert f"stock: {stock - 1} cards" in text[before:]  # and the table after the draw shows one fewer
