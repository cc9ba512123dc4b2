"""Microsoft FreeCell's deal numbers: the shuffle behind "deal #1" ... "deal #2147483647".

FreeCell players and solvers name deals by these numbers, so a FreeCell environment that deals by them
can be checked against published solutions and solve rates deal by deal. The shuffle is the C runtime's
linear congruential generator seeded with the deal number: each draw picks one of the cards left, that
card swaps with the last card left and is dealt. Cards are dealt to eight columns in turn, row by row.

Microsoft numbers cards rank-major with suits in the order clubs, diamonds, hearts, spades (index
``i``: rank ``i // 4``, suit ``i % 4``); our codes are suit-major, ``suit * 13 + rank``, with the same
suit order, so index ``i`` is card ``(i % 4) * 13 + i // 4``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DEAL_LIMIT = 2**31  # the deal numbers are 0 .. 2**31 - 1 (the generator's seed is 31 bits)
COLUMNS = 8

__all__ = ["COLUMNS", "DEAL_LIMIT", "microsoft_columns", "microsoft_order"]


def _check_number(number: Any) -> int:
    if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or not 0 <= number < DEAL_LIMIT:
        raise ValueError(f"a Microsoft FreeCell deal number is an integer in [0, 2**31), got {number!r}")
    return int(number)


def microsoft_order(number: int) -> list[int]:
    """The 52 cards of deal ``number`` in the order they are dealt, as our card codes."""
    seed = _check_number(number)
    deck = list(range(52))  # Microsoft's card indices
    order = []
    while deck:
        seed = (seed * 214013 + 2531011) & 0x7FFFFFFF
        j = (seed >> 16) % len(deck)
        deck[j], deck[-1] = deck[-1], deck[j]
        i = deck.pop()
        order.append((i % 4) * 13 + i // 4)
    return order


def microsoft_columns(number: int) -> list[list[int]]:
    """Deal ``number`` laid out: eight columns, each bottom card first (7, 7, 7, 7, 6, 6, 6, 6 cards)."""
    order = microsoft_order(number)
    return [order[c::COLUMNS] for c in range(COLUMNS)]
