"""Cards in the project's notation: rank ``A23456789TJQK`` then suit ``cdhs`` (``As``, ``Td``, ``Kh``).

Inside the engine a card is a small integer ``suit * 13 + rank`` with rank 0 for the Ace and 12 for the
King, and suits in the order clubs, diamonds, hearts, spades. The two decks of Rank and File use the same
52 values twice: identical cards are interchangeable, so the engine never tells them apart.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "cdhs"
RED_SUITS = frozenset((1, 2))  # diamonds, hearts

__all__ = ["RANKS", "SUITS", "card_from_str", "card_to_str", "rank_of", "suit_of", "is_red"]


def rank_of(card: int) -> int:
    return card % 13


def suit_of(card: int) -> int:
    return card // 13


def is_red(card: int) -> bool:
    return suit_of(card) in RED_SUITS


def card_to_str(card: int) -> str:
    """``0 -> 'Ac'``, ``51 -> 'Ks'``."""
    if not 0 <= card < 52:
        raise ValueError(f"card value {card} is out of range 0..51")
    return RANKS[card % 13] + SUITS[card // 13]


def card_from_str(text: str) -> int:
    """``'Td' -> 22``; raises ``ValueError`` naming the bad text."""
    if not isinstance(text, str) or len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(
            f"unknown card {text!r}: a card is a rank from {RANKS!r} followed by a suit from {SUITS!r}, "
            "e.g. 'As' or 'Td'"
        )
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])
