"""Move captions (issue #15, point 13): a caption's stock and redeal counts are those of the position the
move made, the one a replay shows above it, in the singular for one."""

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
        assert "cards in it" not in caption and not re.search(r"\b1 (cards|redeals)\b", caption), caption
        if "draw" in caption:
            draws += 1
            match = re.search(r"draw from the stock \((\d+) cards? left\)", caption)
            assert (int(match[1]) if match else 0) == len(state["stock"]), caption
            assert match or "draw the stock's last card" in caption
        elif "redeal" in caption:
            redeals += 1
            match = re.search(r"\((\d+) redeals? left\)", caption)
            assert (int(match[1]) if match else 0) == state["redeals_left"], caption
            assert match or "(the last redeal)" in caption
    assert redeals == game.variant.redeals and draws > 2 * len(game.get_state()["stock"])
    text = "\n".join(captions)  # the singular and the last card/redeal all came up
    for words in ("(1 card left)", "draw the stock's last card", "(1 redeal left)", "(the last redeal)"):
        assert words in text


def test_the_terminal_game_says_what_is_left_after_a_draw():
    stock = len(Game("rainbow", seed=3).get_state()["stock"])
    out = io.StringIO()
    assert play("rainbow", seed=3, stdin=io.StringIO("d\nquit\n"), stdout=out) == 0
    assert f"played d: draw from the stock ({stock - 1} cards left)" in out.getvalue()
    # The listing before the draw counts what a draw would leave, too.
    assert re.search(rf"\) d +draw from the stock \({stock - 1} cards left\)", out.getvalue())
