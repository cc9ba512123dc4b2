"""Moves as people read them, and their action ids.

A :class:`Move` is (source area, source index, target area, target index, number of cards), as in
``docs/rules.md``. Each action id of a variant stands for one canonical move; :func:`decode` reads it
in the current position and fills in what the position decides (which foundation slot, which empty
pile, how many cards). For an action that is not legal in the position those fields are ``None`` and
so is ``count`` (unless the id itself fixes it), so no two ids ever decode to the same move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solitaire_env.engine.core import resolve
from solitaire_env.engine.variant import (
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    TABLEAU_TO_CELL,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    Variant,
)

AREAS = ("stock", "waste", "reserve", "tableau", "foundation", "cell")

# kind -> (source area, target area)
_AREAS_OF = {
    DRAW: ("stock", "waste"),
    REDEAL: ("waste", "stock"),
    WASTE_TO_FOUNDATION: ("waste", "foundation"),
    WASTE_TO_TABLEAU: ("waste", "tableau"),
    WASTE_TO_EMPTY: ("waste", "tableau"),
    RESERVE_TO_FOUNDATION: ("reserve", "foundation"),
    RESERVE_TO_TABLEAU: ("reserve", "tableau"),
    TABLEAU_TO_FOUNDATION: ("tableau", "foundation"),
    TABLEAU_TO_TABLEAU: ("tableau", "tableau"),
    TABLEAU_TO_EMPTY: ("tableau", "tableau"),
    CELL_TO_FOUNDATION: ("cell", "foundation"),
    CELL_TO_TABLEAU: ("cell", "tableau"),
    CELL_TO_EMPTY: ("cell", "tableau"),
    TABLEAU_TO_CELL: ("tableau", "cell"),
    FOUNDATION_TO_TABLEAU: ("foundation", "tableau"),
    FOUNDATION_TO_EMPTY: ("foundation", "tableau"),
}
# The kinds whose id names the target pile.
_FIXED_TARGET = (WASTE_TO_TABLEAU, RESERVE_TO_TABLEAU, TABLEAU_TO_TABLEAU, CELL_TO_TABLEAU, FOUNDATION_TO_TABLEAU)


@dataclass(frozen=True)
class Move:
    """One move. Indices are 0-based (piles, foundation slots, free cells); ``None`` for the single areas
    stock, waste and reserve."""

    source: str
    source_index: int | None
    target: str
    target_index: int | None
    count: int | None

    def __str__(self) -> str:
        def name(area: str, index: int | None) -> str:
            return area if index is None else f"{area} {index}"

        if self.source == "stock":
            text = "draw: stock -> waste"
        elif self.target == "stock":
            text = "redeal: waste -> stock"
        else:
            target = name(self.target, self.target_index)
            if self.target_index is None and self.target == "tableau":
                target = "empty tableau pile"
            text = f"{name(self.source, self.source_index)} -> {target}"
        if self.count is None:
            return text + " (not legal here)"
        return text + (f" ({self.count} cards)" if self.count > 1 else "")


def decode(variant: Variant, s: np.ndarray, action: int) -> Move:
    """The move that ``action`` stands for in position ``s``."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < variant.n_actions:
        raise ValueError(f"action {action!r} is outside the action space Discrete({variant.n_actions})")
    kind, src, dst, cnt = (int(x) for x in variant.actions[action])
    target, count = resolve(s, variant.spec, variant.actions, int(action))
    legal = count > 0
    source_area, target_area = _AREAS_OF[kind]
    if kind in _FIXED_TARGET:
        target_index: int | None = dst
    elif target_area in ("foundation", "tableau", "cell"):
        target_index = int(target) if legal else None
    else:
        target_index = None
    if legal:
        n: int | None = int(count)
    else:
        n = cnt if kind == TABLEAU_TO_EMPTY else None
    return Move(source_area, src if src >= 0 else None, target_area, target_index, n)


def encode(variant: Variant, s: np.ndarray, move: Move) -> int:
    """The action id whose move in position ``s`` is ``move``; ``ValueError`` if there is none."""
    if not isinstance(move, Move):
        raise ValueError(f"expected a Move, got {type(move).__name__}")
    for area in (move.source, move.target):
        if area not in AREAS:
            raise ValueError(f"unknown area {area!r} in {move!r}; areas are {', '.join(AREAS)}")
    table = variant.actions
    candidates = []
    for a, (kind, src, dst, cnt) in enumerate(table.tolist()):  # plain ints: numpy's rows cost 1 ms a call here
        source_area, target_area = _AREAS_OF[kind]
        if (source_area, target_area) != (move.source, move.target):
            continue
        if src >= 0 and src != move.source_index:
            continue
        if kind in _FIXED_TARGET and dst != move.target_index:
            continue
        if kind == TABLEAU_TO_EMPTY and cnt != move.count:
            continue
        candidates.append(a)
    for a in candidates:
        if decode(variant, s, a) == move:
            return a
    legal = [str(decode(variant, s, a)) for a in candidates if resolve(s, variant.spec, table, a)[1] > 0]
    hint = f"; legal moves of that kind here: {', '.join(legal)}" if legal else ""
    raise ValueError(f"{move!r} is not an action of {variant.title} in this position{hint}")


__all__ = ["AREAS", "Move", "decode", "encode"]
