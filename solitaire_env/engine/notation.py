"""Moves in short notation (``t3 f``, ``w t0``, ``d``; in FreeCell ``t3 c`` into a free cell, ``c0 t2`` out of
one; in Klondike ``f1 t4`` from foundation slot 1 back onto a pile) and in words, and the parser that reads
notation back.

The notation is what ``solitaire-env play`` takes at its prompt and what recordings and the shipped
winning lines are written in (docs/winnability.md); :func:`parse_move` turns it back into the legal
:class:`~solitaire_env.engine.moves.Move` it names, or says in a ``ValueError`` why it names none.
"""

from __future__ import annotations

import re

from solitaire_env.engine.game import Game
from solitaire_env.engine.moves import Move

_DRAW_WORDS = {"d", "draw", "s", "stock"}
_REDEAL_WORDS = {"rd", "redeal"}
_MOVE_RE = re.compile(
    r"(?P<src>w|r|[tcf]\s*\d+)\s*(?:->|>|,|-)?\s*(?P<dst>f|e|c|t\s*\d+)(?:\s*[\s,x]\s*(?P<count>\d+))?"
)



def _is_empty_pile(game: Game, state: dict, pile: int | None) -> bool:
    return pile is not None and 0 <= pile < game.variant.piles and not state["tableau"][pile]


def _source_token(move: Move) -> str:
    if move.source in ("cell", "foundation"):
        return f"{move.source[0]}{move.source_index}"
    return {"waste": "w", "reserve": "r"}.get(move.source) or f"t{move.source_index}"


def notation(move: Move, game: Game, state: dict | None = None) -> str:
    """The short notation of legal ``move`` in ``game``'s position; :func:`parse_move` reads it back."""
    if move.source == "stock":
        return "d"
    if move.target == "stock":
        return "rd"
    state = state if state is not None else game.get_state()
    src = _source_token(move)
    if move.target == "foundation":
        return f"{src} f"
    if move.target == "cell":
        return f"{src} c"
    if not _is_empty_pile(game, state, move.target_index):
        return f"{src} t{move.target_index}"
    text = f"{src} e"
    if move.source == "tableau":
        to_empty = [m for m in game.legal_moves() if _same_source(m, move) and m.target == "tableau"
                    and _is_empty_pile(game, state, m.target_index)]
        if len(to_empty) > 1 or (move.count or 1) > 1:
            text += f" {move.count}"
    return text


def _same_source(a: Move, b: Move) -> bool:
    return (a.source, a.source_index) == (b.source, b.source_index)


def describe(move: Move, game: Game, state: dict | None = None) -> str:
    """Legal ``move`` in words, with its cards: ``9h 8s -> t3 (onto Tc)``.

    ``state`` is the position before the move. The stock's size and the redeals left are those of
    that position, as the table of the position shows them (``stock: 34 cards``, ``redeals left: 2``).
    """
    state = state if state is not None else game.get_state()
    if move.source == "stock":
        size, n = len(state["stock"]), move.count or 1
        if n == size:
            return "draw the stock's last card" if n == 1 else f"draw the stock's last {n} cards"
        return f"draw from the stock ({n} of its {size} cards)"
    if move.target == "stock":
        left = state.get("redeals_left", 0)
        if left is None:  # unlimited redeals (Klondike)
            return "redeal: turn the waste over into the stock"
        return "redeal: turn the waste over into the stock " + (f"(1 of the {left} redeals left)" if left > 1
                                                                  else "(the last redeal)")
    if move.source == "tableau":
        cards = state["tableau"][move.source_index][-(move.count or 1):]
        where = f"t{move.source_index}"
    elif move.source == "cell":
        cards, where = [state["cells"][move.source_index]], f"free cell c{move.source_index}"
    elif move.source == "foundation":
        cards, where = state["foundations"][move.source_index][-1:], f"foundation f{move.source_index}"
    else:
        cards = state[move.source][-1:]
        where = move.source
    what = " ".join(cards) + f" from {where}"
    if move.target == "foundation":
        return f"{what} -> foundation"
    if move.target == "cell":
        return f"{what} -> free cell c{move.target_index}"
    j = move.target_index
    if _is_empty_pile(game, state, j):
        return f"{what} -> empty pile t{j}"
    return f"{what} -> t{j} (onto {state['tableau'][j][-1]})"


def parse_move(text: str, game: Game) -> Move:
    """The legal move that notation ``text`` names in ``game``'s position.

    Raises ``ValueError`` with a message for a person: not notation, no such pile, not legal here
    (with the legal moves from that source), or ambiguous (with the choices).
    """
    words = text.strip().lower()
    legal = game.legal_moves()
    v = game.variant
    if (words in _DRAW_WORDS or words in _REDEAL_WORDS or words.startswith("w")) and not v.stock_capacity:
        raise ValueError(f"{v.title} has no stock or waste")
    if words in _DRAW_WORDS or words in _REDEAL_WORDS:
        draw = words in _DRAW_WORDS
        for m in legal:
            if (m.source == "stock") if draw else (m.target == "stock"):
                return m
        if draw:
            raise ValueError("you cannot draw: the stock is empty" + (" (try 'rd' to redeal)" if any(
                m.target == "stock" for m in legal) else ""))
        if v.redeals == 0:
            raise ValueError(f"{v.title} has no redeal")
        raise ValueError("you cannot redeal now: a redeal needs an empty stock, cards in the waste and "
                         "a redeal left")
    match = _MOVE_RE.fullmatch(words)
    if match is None:
        raise ValueError(f"I don't understand {text.strip()!r}; type 'help' for the notation")
    state = game.get_state()

    def pile(token: str) -> int:
        k = int(token[1:].strip())
        if not 0 <= k < v.piles:
            raise ValueError(f"there is no pile t{k}: the piles are t0 to t{v.piles - 1}")
        return k

    src, dst, count = match["src"], match["dst"], match["count"]
    if (src.startswith("c") or dst == "c") and not v.cells:
        raise ValueError(f"{v.title} has no free cells")
    if src.startswith("c"):
        k = int(src[1:].strip())
        if not 0 <= k < v.cells:
            raise ValueError(f"there is no free cell c{k}: the cells are c0 to c{v.cells - 1}")
        source: tuple[str, int | None] = ("cell", k)
    elif src.startswith("f"):
        k = int(src[1:].strip())
        if not v.foundation_to_tableau:
            raise ValueError(f"in {v.title} cards never come back from the foundations")
        if not 0 <= k < v.foundations:
            raise ValueError(f"there is no foundation f{k}: the foundations are f0 to f{v.foundations - 1}")
        if dst == "f":
            raise ValueError("a foundation card goes back onto a pile (f0 t3) or into an empty pile (f0 e)")
        source = ("foundation", k)
    elif src == "r":
        if not v.reserve:
            raise ValueError(f"{v.title} has no reserve")
        source = ("reserve", None)
    elif src == "w":
        source = ("waste", None)
    else:
        source = ("tableau", pile(src))
    n = int(count) if count is not None else None
    if n is not None and source[0] != "tableau" and n != 1:
        raise ValueError(f"only one card at a time leaves the {source[0]}")

    from_source = [m for m in legal if (m.source, m.source_index) == source]
    if dst == "f":
        found = [m for m in from_source if m.target == "foundation"]
    elif dst == "c":
        found = [m for m in from_source if m.target == "cell"]
    elif dst == "e" or _is_empty_pile(game, state, pile(dst)):  # any empty pile: the lowest one is used
        found = [m for m in from_source if m.target == "tableau" and _is_empty_pile(game, state, m.target_index)]
    else:
        found = [m for m in from_source if m.target == "tableau" and m.target_index == pile(dst)]
    if n is not None:
        found = [m for m in found if (m.count or 1) == n]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        counts = sorted({m.count or 1 for m in found})
        src_tok = _source_token(found[0])
        listed = ", ".join(map(str, counts[:-1])) + f" or {counts[-1]}"
        raise ValueError(f"{listed} cards can go there from {src_tok}: say how many, e.g. '{src_tok} {dst} "
                         f"{counts[-1]}'")
    into_empty = dst == "e" or (dst not in ("f", "c") and _is_empty_pile(game, state, pile(dst)))
    if into_empty and source[0] != "waste" and not v.tableau_to_empty:
        raise ValueError(f"in {v.title} only the waste's top card goes into an empty pile")
    if into_empty and v.kings_to_empty and any(not p for p in state["tableau"]):
        raise ValueError(f"in {v.title} only a King, or a run headed by one, goes into an empty pile")
    where = {"waste": "the waste", "reserve": "the reserve", "cell": f"free cell c{source[1]}",
             "foundation": f"foundation f{source[1]}"}.get(source[0]) or f"t{source[1]}"
    if source[0] == "tableau" and not state["tableau"][source[1]]:
        raise ValueError(f"pile t{source[1]} is empty")
    if source[0] == "cell" and state["cells"][source[1]] is None:
        raise ValueError(f"{where} is empty")
    if source[0] == "foundation" and not state["foundations"][source[1]]:
        raise ValueError(f"{where} is empty")
    if source[0] in ("waste", "reserve") and not state[source[0]]:
        raise ValueError(f"{where} is empty")
    if dst == "c" and all(state["cells"]):
        raise ValueError("every free cell holds a card")
    others = ", ".join(notation(m, game, state) for m in from_source)
    hint = f"; legal from {where}: {others}" if others else f"; nothing can move from {where} now"
    if dst == "e" and all(state["tableau"]):
        raise ValueError(f"there is no empty pile{hint}")
    raise ValueError(f"not a legal move here: {text.strip()}{hint}")
