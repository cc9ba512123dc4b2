"""The engine's Python face: :class:`Game`, one position of one of the games.

>>> from solitaire_env import Game
>>> game = Game("rank_and_file", seed=7)
>>> move = game.legal_moves()[0]
>>> game.play(move)          # or game.play(action_id)
1
>>> state = game.get_state() # the JSON of docs/state_format.md, hidden cards included

No Gymnasium here: the envs, the vector env, the agents and the solver build on this and on
:mod:`solitaire_env.engine.core`.
"""

from __future__ import annotations

import numpy as np

from solitaire_env.engine import core, moves, state
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.moves import Move
from solitaire_env.engine.variant import Variant


class Game:
    """A position of one of the games (Rank and File, Number Ten, Rainbow, FreeCell, Klondike) and the
    moves from it.

    ``Game(variant, seed)`` deals deal number ``seed``; ``Game.from_state(json)`` starts from a saved
    position. Moves can be given as :class:`~solitaire_env.engine.moves.Move` or as action ids.
    """

    def __init__(self, variant: str | Variant = "rank_and_file", seed: int = 0) -> None:
        self.variant = get_variant(variant)
        self.seed: int | None = state.check_seed(seed)
        self.state = state.deal(self.variant, self.seed)
        self._mask = np.zeros(self.variant.n_actions, dtype=np.int8)
        self._mask_for: bytes | None = None

    @classmethod
    def from_state(cls, json_state: dict) -> Game:
        variant, s = state.from_json(json_state)
        game = cls.__new__(cls)
        game.variant, game.state, game.seed = variant, s, None
        game._mask, game._mask_for = np.zeros(variant.n_actions, dtype=np.int8), None
        return game

    def copy(self) -> Game:
        other = Game.__new__(Game)
        other.variant, other.seed, other.state = self.variant, self.seed, self.state.copy()
        other._mask, other._mask_for = self._mask.copy(), self._mask_for
        return other

    # --- state --------------------------------------------------------------------------------

    def get_state(self) -> dict:
        """The full position as a JSON dict of ``docs/state_format.md`` (hidden cards included)."""
        return state.to_json(self.variant, self.state)

    def set_state(self, json_state: dict) -> None:
        """Replace the position; on an invalid state raise ``ValueError`` and keep the current one."""
        variant, s = state.from_json(json_state)
        if variant is not self.variant:
            raise ValueError(f"state is a {variant.title} position, but this game is {self.variant.title}")
        self.state, self.seed, self._mask_for = s, None, None

    # --- moves --------------------------------------------------------------------------------

    def action_mask(self) -> np.ndarray:
        """``int8`` array over the action space, 1 for every legal action."""
        key = self.state.tobytes()
        if key != self._mask_for:  # positions repeat queries often (mask, is_lost, legal_moves)
            core.legal_mask(self.state, self.variant.spec, self.variant.actions, self._mask)
            self._mask_for = key
        return self._mask.copy()

    def legal_actions(self) -> np.ndarray:
        return np.flatnonzero(self.action_mask())

    def legal_moves(self) -> list[Move]:
        return [self.decode(int(a)) for a in self.legal_actions()]

    def decode(self, action: int) -> Move:
        return moves.decode(self.variant, self.state, action)

    def encode(self, move: Move) -> int:
        return moves.encode(self.variant, self.state, move)

    def is_legal(self, action: int) -> bool:
        self.decode(action)  # range check
        return core.resolve(self.state, self.variant.spec, self.variant.actions, int(action))[1] > 0

    def play(self, move: int | Move) -> int:
        """Play a move or action id; return how many cards it moved. ``ValueError`` if illegal (no change)."""
        action = self.encode(move) if isinstance(move, Move) else move
        if not self.is_legal(action):
            raise ValueError(f"illegal move: {self.decode(action)}")
        return int(core.apply_action(self.state, self.variant.spec, self.variant.actions, int(action)))

    # --- queries ------------------------------------------------------------------------------

    @property
    def foundation_cards(self) -> int:
        return int(core.foundation_cards(self.state, self.variant.spec))

    @property
    def hidden_cards(self) -> int:
        """Face-down cards in the tableau and reserve."""
        return int(core.hidden_cards(self.state, self.variant.spec))

    def is_won(self) -> bool:
        return self.foundation_cards == self.variant.n_cards

    def is_lost(self) -> bool:
        """No legal move remains (and the game is not won)."""
        return not self.is_won() and not self.action_mask().any()

    def is_over(self) -> bool:
        return self.is_won() or not self.action_mask().any()

    def observation(self) -> np.ndarray:
        """What a player at the table sees, as the flat code vector of :mod:`solitaire_env.engine.core`."""
        obs = np.zeros(self.variant.obs_size, dtype=np.int16)
        core.observe(self.state, self.variant.spec, obs)
        return obs

    def render_text(self, color: bool = False) -> str:
        from solitaire_env.engine.text import render_text

        return render_text(self.get_state(), color=color)

    def __str__(self) -> str:
        return self.render_text()

    def __repr__(self) -> str:
        return f"Game({self.variant.name!r}, seed={self.seed}, foundation_cards={self.foundation_cards})"


__all__ = ["Game"]
