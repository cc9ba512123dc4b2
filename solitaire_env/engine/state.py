"""Deals from a seed, and the full game state as the JSON of ``docs/state_format.md`` (format 1).

:func:`deal` builds a fresh position, :func:`to_json` exports one, :func:`from_json` checks a JSON
state against every validity rule of the format and builds the engine's array; it raises
``ValueError`` naming what is wrong and never touches any existing game.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from numba import njit

from solitaire_env.engine import ms_deals, pcg64
from solitaire_env.engine.cards import RANKS, card_from_str, card_to_str
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.position import builds_on
from solitaire_env.engine.variant import (
    NO_CELL,
    O_BASE,
    O_CELLS,
    O_DOWN,
    O_FCNT,
    O_FSUIT,
    O_LEN,
    O_NRES,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RES,
    O_RESDOWN,
    O_STOCK,
    O_TAB,
    O_WASTE,
    SP_CAP,
    SP_CELLS,
    SP_FOUND,
    SP_PILES,
    Variant,
)

FORMAT = 1
_KEYS = ("format", "variant", "tableau", "foundations", "stock", "waste", "reserve", "redeals_left", "base_rank",
         "cells", "stock_seen")
_REQUIRED = ("format", "variant", "tableau", "foundations", "stock", "waste", "redeals_left")

__all__ = ["FORMAT", "build", "check_seed", "deal", "deal_into", "from_json", "shuffled_deck", "to_json"]


def check_seed(seed: Any, variant: Variant | None = None) -> int:
    """``seed`` as a deal number; ``ValueError`` unless it is a non-negative integer (below the
    variant's ``deal_limit`` where a variant is given and its deals are numbered by another program)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if variant is not None and variant.shuffle != "pcg64" and seed >= variant.deal_limit:
        raise ValueError(f"{variant.title} deals are numbered 0 .. {variant.deal_limit - 1}, got seed {seed}")
    return int(seed)


def shuffled_deck(decks: int, seed: int) -> list[int]:
    """Fisher-Yates over PCG64's raw 64-bit stream: fixed by the seed alone.

    Generator.permutation would do, but numpy does not promise its algorithms stay the same across
    versions; SeedSequence and PCG64's raw output are stable, and this shuffle is ours. The draws come
    from :mod:`solitaire_env.engine.pcg64` (numpy's numbers, computed without building its objects).
    """
    n = 52 * decks
    deck = np.arange(n, dtype=np.int64) % 52
    if _shuffle(deck, pcg64.raw(seed, n)):  # compiled: a Python loop took most of a deal's time
        return deck.tolist()
    return _shuffled_slowly(decks, seed)


def _shuffled_slowly(decks: int, seed: int) -> list[int]:
    """The shuffle as plain Python, for the deals where a draw falls in the tail that the compiled loop
    leaves to it (about one deal in 10**17): further draws continue numpy's stream."""
    deck = [card for _ in range(decks) for card in range(52)]
    bits = np.random.PCG64(seed)
    raw = iter(int(x) for x in bits.random_raw(len(deck)))
    for i in range(len(deck) - 1, 0, -1):
        bound = i + 1
        limit = (1 << 64) - (1 << 64) % bound  # reject the uneven tail: no modulo bias
        r = next(raw, None)
        while r is None or r >= limit:
            r = int(bits.random_raw())
        j = r % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@njit(cache=True, nogil=True)
def _shuffle(deck, raw) -> bool:
    """:func:`shuffled_deck`'s loop over ``deck`` with the draws ``raw``, compiled; ``False`` (and
    ``deck`` part shuffled) where a draw falls in the tail it rejects, which needs further draws."""
    k = 0
    for i in range(deck.shape[0] - 1, 0, -1):
        bound = np.uint64(i + 1)
        tail = (np.uint64(0) - bound) % bound  # 2**64 % bound: the draws from 2**64 - tail on are rejected
        r = raw[k]
        k += 1
        if tail != 0 and r >= np.uint64(0) - tail:
            return False
        j = np.int64(r % bound)
        deck[i], deck[j] = deck[j], deck[i]
    return True


def _deal_shape(v: Variant) -> np.ndarray:
    """What :func:`_lay_out` needs of a variant besides its spec: reserve, base_from_deal, redeals, then
    each pile's face-down count, then each pile's face-up count."""
    # Unlimited redeals start at 0 too: the slot then records whether the waste was turned over yet.
    redeals = 0 if v.redeals is None else v.redeals
    return np.array([v.reserve, v.base_from_deal, redeals, *v.down_counts, *v.up_counts], dtype=np.int64)


@njit(cache=True, nogil=True)
def _lay_out(s, sp, shape, deck) -> None:
    """Deal the shuffled ``deck`` into the state array ``s``, as at the table: the foundation's card
    where the base comes from the deal, the reserve (its top face up), then the tableau row by row
    (a pile dealt fewer cards is skipped once it has them), the face-down rows first; the rest is the
    stock, whose last card is dealt first."""
    reserve, base_from_deal, redeals = shape[0], shape[1], shape[2]
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    downs, ups = shape[3 : 3 + piles], shape[3 + piles : 3 + 2 * piles]
    for k in range(s.shape[0]):
        s[k] = 0
    for f in range(sp[SP_FOUND]):
        s[sp[O_FSUIT] + f] = -1
    for c in range(sp[SP_CELLS]):
        s[sp[O_CELLS] + c] = NO_CELL
    c, base = 0, 0
    if base_from_deal:
        s[sp[O_FSUIT]], s[sp[O_FCNT]] = deck[0] // 13, 1
        base, c = deck[0] % 13, 1
    for k in range(reserve):
        s[sp[O_RES] + k] = deck[c]
        c += 1
    s[sp[O_NRES]], s[sp[O_RESDOWN]] = reserve, max(reserve - 1, 0)
    rows = 0
    for p in range(piles):
        rows = max(rows, downs[p] + ups[p])
    for row in range(rows):
        for p in range(piles):
            if row < downs[p] + ups[p]:
                s[sp[O_TAB] + p * cap + row] = deck[c]
                c += 1
    for p in range(piles):
        s[sp[O_LEN] + p], s[sp[O_DOWN] + p] = downs[p] + ups[p], downs[p]
    for k in range(deck.shape[0] - c):
        s[sp[O_STOCK] + k] = deck[c + k]
    s[sp[O_NSTOCK]] = deck.shape[0] - c
    s[sp[O_REDEALS]], s[sp[O_BASE]] = redeals, base


@njit(cache=True, nogil=True)
def _deal_fast(s, sp, shape, n_cards, seed) -> bool:
    """:func:`deal_into` in one compiled call; ``False`` (``s`` unfinished) when the shuffle needs the
    plain loop's further draws."""
    raw = np.empty(n_cards, dtype=np.uint64)
    pcg64.fill_raw(seed, raw)
    deck = np.empty(n_cards, dtype=np.int64)
    for k in range(n_cards):
        deck[k] = k % 52
    if not _shuffle(deck, raw):
        return False
    _lay_out(s, sp, shape, deck)
    return True


_SHAPES: dict[str, np.ndarray] = {}


def deal_into(variant: Variant, seed: int, out: np.ndarray) -> None:
    """Write the deal numbered ``seed`` into the state array ``out`` (a batched env's row): :func:`deal`
    without a new array. ``seed``: already checked (:func:`check_seed`)."""
    shape = _SHAPES.get(variant.name)
    if shape is None:
        shape = _SHAPES[variant.name] = _deal_shape(variant)
    if variant.shuffle == "microsoft":  # Microsoft FreeCell's deal of that number, dealt by columns in turn
        _lay_out(out, variant.spec, shape, np.array(ms_deals.microsoft_order(seed), dtype=np.int64))
        return
    if seed < pcg64.SEED_LIMIT and _deal_fast(out, variant.spec, shape, variant.n_cards, np.uint64(seed)):
        return
    _lay_out(out, variant.spec, shape, np.array(shuffled_deck(variant.decks, seed), dtype=np.int64))


def deal(variant: Variant | str, seed: int) -> np.ndarray:
    """The deal numbered ``seed``: the same on every machine and numpy version (see :func:`shuffled_deck`)."""
    v = get_variant(variant)
    s = np.empty(v.state_size, dtype=np.int8)
    deal_into(v, check_seed(seed, v), s)
    return s


def build(v: Variant, tableau: list[tuple[list[int], int]], foundations: list[list[int]], stock: list[int],
          waste: list[int], reserve: tuple[list[int], int], redeals: int, base: int,
          cells: list[int] | None = None) -> np.ndarray:
    """The state array of a position given pile by pile (cards ``0..51``, every list bottom first).

    ``tableau``: ``(cards, face-down count)`` per pile; ``foundations``: the cards of each foundation
    slot; ``stock``: its last card is dealt first; ``reserve``: ``(cards, face-down count)``; ``cells``:
    each free cell's card, ``NO_CELL`` (-1) for a free one (all free if ``None``). Nothing is
    checked here (:func:`from_json` checks a position from outside); the search agent builds its guesses
    of the hidden cards with it.
    """
    sp = v.spec
    s = np.zeros(v.state_size, dtype=np.int8)
    s[sp[O_FSUIT] : sp[O_FSUIT] + v.foundations] = -1
    for p, (cards, down) in enumerate(tableau):
        start = sp[O_TAB] + p * sp[SP_CAP]
        s[start : start + len(cards)] = cards
        s[sp[O_LEN] + p], s[sp[O_DOWN] + p] = len(cards), down
    for f, cards in enumerate(foundations):
        if cards:
            s[sp[O_FSUIT] + f], s[sp[O_FCNT] + f] = cards[0] // 13, len(cards)
    s[sp[O_STOCK] : sp[O_STOCK] + len(stock)] = stock
    s[sp[O_NSTOCK]] = len(stock)
    s[sp[O_WASTE] : sp[O_WASTE] + len(waste)] = waste
    s[sp[O_NWASTE]] = len(waste)
    res_cards, res_down = reserve
    s[sp[O_RES] : sp[O_RES] + len(res_cards)] = res_cards
    s[sp[O_NRES]], s[sp[O_RESDOWN]] = len(res_cards), res_down
    s[sp[O_REDEALS]], s[sp[O_BASE]] = redeals, base
    s[sp[O_CELLS] : sp[O_CELLS] + v.cells] = NO_CELL if cells is None else cells
    return s


def to_json(variant: Variant, s: np.ndarray) -> dict:
    """The position as a format-1 JSON dict (hidden cards included, marked ``#``)."""
    v, sp = variant, variant.spec

    def pile(start: int, n: int, down: int) -> list[str]:
        return [("#" if k < down else "") + card_to_str(int(s[start + k])) for k in range(n)]

    base = int(s[sp[O_BASE]])
    foundations = []
    for f in range(v.foundations):
        suit, n = int(s[sp[O_FSUIT] + f]), int(s[sp[O_FCNT] + f])
        foundations.append([card_to_str(suit * 13 + (base + k) % 13) for k in range(n)])
    out = {
        "format": FORMAT,
        "variant": v.name,
        "tableau": [
            pile(sp[O_TAB] + p * sp[SP_CAP], int(s[sp[O_LEN] + p]), int(s[sp[O_DOWN] + p])) for p in range(v.piles)
        ],
        "foundations": foundations,
        "stock": pile(sp[O_STOCK], int(s[sp[O_NSTOCK]]), 0),
        "waste": pile(sp[O_WASTE], int(s[sp[O_NWASTE]]), 0),
        "reserve": pile(sp[O_RES], int(s[sp[O_NRES]]), int(s[sp[O_RESDOWN]])),
        "redeals_left": None if v.redeals is None else int(s[sp[O_REDEALS]]),
        "base_rank": RANKS[base] if v.base_from_deal else None,
    }
    if v.redeals is None:  # unlimited redeals: whether the player has seen the stock's order
        out["stock_seen"] = bool(s[sp[O_REDEALS]])
    if v.cells:  # only games with free cells have the key, so the others' states read as before
        out["cells"] = [None if c < 0 else card_to_str(int(c)) for c in s[sp[O_CELLS] : sp[O_CELLS] + v.cells]]
    return out


def _parse_pile(items: Any, where: str, allow_down: bool) -> tuple[list[int], int]:
    if not isinstance(items, list):
        raise ValueError(f"{where} must be a list of cards, got {type(items).__name__}")
    cards, down, seen_up = [], 0, False
    for k, text in enumerate(items):
        if not isinstance(text, str):
            raise ValueError(f"{where}[{k}] must be a card string like 'As', got {text!r}")
        face_down = text.startswith("#")
        if face_down:
            if not allow_down:
                raise ValueError(f"{where}[{k}] is {text!r}: face-down cards ('#') appear only in tableau and reserve")
            if seen_up:
                raise ValueError(f"{where}[{k}] is {text!r}: a face-down card lies above a face-up one")
            down += 1
            text = text[1:]
        else:
            seen_up = True
        try:
            cards.append(card_from_str(text))
        except ValueError as err:
            raise ValueError(f"{where}[{k}]: {err}") from None
    if cards and down == len(cards):
        raise ValueError(f"{where}: the top card {items[-1]!r} is face down; the top card of a pile is face up")
    return cards, down


def from_json(state: Any) -> tuple[Variant, np.ndarray]:
    """Check ``state`` against ``docs/state_format.md`` and build the engine array; ``ValueError`` if invalid."""
    if not isinstance(state, dict):
        raise ValueError(f"a game state must be a JSON object (dict), got {type(state).__name__}")
    missing = [k for k in _REQUIRED if k not in state]
    if missing:
        raise ValueError(f"game state is missing key(s): {', '.join(missing)}")
    unknown = sorted(set(state) - set(_KEYS))
    if unknown:
        raise ValueError(
            f"game state has unknown key(s): {', '.join(map(str, unknown))}; known keys: {', '.join(_KEYS)}"
        )
    if type(state["format"]) is not int or state["format"] != FORMAT:
        raise ValueError(f"unsupported state format {state['format']!r}; this engine reads format {FORMAT}")
    v = get_variant(state["variant"])

    tableau_items, found_items = state["tableau"], state["foundations"]
    for key, items, n in (("tableau", tableau_items, v.piles), ("foundations", found_items, v.foundations)):
        if not isinstance(items, list) or len(items) != n:
            got = f"{len(items)} lists" if isinstance(items, list) else type(items).__name__
            raise ValueError(f"{key} must be a list of {n} lists for {v.title}, got {got}")
    tableau = [_parse_pile(items, f"tableau[{p}]", True) for p, items in enumerate(tableau_items)]
    foundations = [_parse_pile(items, f"foundations[{f}]", False)[0] for f, items in enumerate(found_items)]
    stock = _parse_pile(state["stock"], "stock", False)[0]
    waste = _parse_pile(state["waste"], "waste", False)[0]
    if v.reserve:
        if "reserve" not in state:
            raise ValueError(f"game state is missing key 'reserve', which {v.title} needs")
        reserve = _parse_pile(state["reserve"], "reserve", True)
    else:
        if state.get("reserve") not in (None, []):
            raise ValueError(f"{v.title} has no reserve, but 'reserve' holds {state['reserve']!r}")
        reserve = ([], 0)
    cells = _parse_cells(v, state)

    # Base rank and redeals.
    if v.base_from_deal:
        text = state.get("base_rank")
        if not isinstance(text, str) or len(text) != 1 or text not in RANKS:
            raise ValueError(f"base_rank must be one rank of {RANKS!r} in {v.title}, got {text!r}")
        base = RANKS.index(text)
    else:
        if state.get("base_rank") is not None:
            raise ValueError(f"{v.title} has no base rank, but base_rank is {state['base_rank']!r}")
        base = 0
    redeals = _parse_redeals(v, state)

    # Exactly the variant's cards.
    counts = Counter(stock + waste + reserve[0] + [c for cards, _ in tableau for c in cards])
    counts.update(c for c in cells if c >= 0)
    counts.update(c for cards in foundations for c in cards)
    problems = []
    for card in range(52):
        if counts[card] != v.decks:
            problems.append(f"{card_to_str(card)} appears {counts[card]} time(s)")
    if problems:
        shown = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")
        raise ValueError(f"{v.title} needs each of the 52 cards exactly {v.decks} time(s): {shown}")

    # Foundations follow their build: the base rank first, then up in suit.
    first = RANKS[base]
    for f, cards in enumerate(foundations):
        if len(cards) > 13:
            raise ValueError(f"foundations[{f}] holds {len(cards)} cards; a foundation holds at most 13")
        for k, card in enumerate(cards):
            expected_rank = (base + k) % 13
            if card % 13 != expected_rank or card // 13 != cards[0] // 13:
                want = (
                    f"a card of rank {first}" if k == 0
                    else f"the {RANKS[expected_rank]} of the suit of {card_to_str(cards[0])}"
                )
                raise ValueError(
                    f"foundations[{f}][{k}] is {card_to_str(card)}, which breaks the build: expected {want}"
                )

    # Klondike builds every face-up card onto one of the next rank and other colour (the solver's key
    # relies on it: docs/solver.md, "Klondike: face-up runs left out of the key").
    if v.kings_to_empty:
        for p, (cards, down) in enumerate(tableau):
            for k in range(down + 1, len(cards)):
                under, card = cards[k - 1], cards[k]
                if not builds_on(card, under, v.wrap):
                    raise ValueError(
                        f"tableau[{p}] has {card_to_str(card)} face up on {card_to_str(under)}: in {v.title} a "
                        "pile's face-up cards run down one rank at a time in alternating colours"
                    )

    # Rainbow's refill rule, and the engine's storage bounds (never reached in play).
    if v.auto_fill and reserve[0] and any(not cards for cards, _ in tableau):
        raise ValueError(
            "a tableau pile is empty while the reserve holds cards: the reserve refills empty piles at once"
        )
    for p, (cards, _) in enumerate(tableau):
        if len(cards) > v.pile_capacity:
            raise ValueError(f"tableau[{p}] holds {len(cards)} cards; the engine stores at most {v.pile_capacity}")
        if not v.wrap:
            # Card k, once on top, can have a run down to the Ace built on it: k + 1 + rank cards in all.
            # Dealt positions never exceed the storage; a hand-made pile might.
            for k, card in enumerate(cards):
                if k + 1 + card % 13 > v.pile_capacity:
                    raise ValueError(
                        f"tableau[{p}] could grow to {k + 1 + card % 13} cards by building down on "
                        f"{card_to_str(card)} at position {k}; the engine stores at most {v.pile_capacity} per pile"
                    )
    if len(stock) + len(waste) > v.stock_capacity:
        raise ValueError(
            f"stock and waste hold {len(stock) + len(waste)} cards; {v.title} deals only {v.stock_capacity} there"
        )
    if len(reserve[0]) > v.reserve:
        raise ValueError(f"reserve holds {len(reserve[0])} cards; {v.title} deals {v.reserve} there")
    return v, build(v, tableau, foundations, stock, waste, reserve, redeals, base, cells)


def _parse_redeals(v: Variant, state: dict) -> int:
    """The state array's redeals entry: the redeals left, or with unlimited redeals (``redeals_left`` null)
    1 if the waste has been turned over (``stock_seen``), else 0."""
    redeals, seen = state["redeals_left"], state.get("stock_seen")
    if v.redeals is None:
        if redeals is not None:
            raise ValueError(f"{v.title} has unlimited redeals: redeals_left must be null, got {redeals!r}")
        if not isinstance(seen, bool):
            raise ValueError(f"stock_seen must be true or false in {v.title} (has the waste been turned over "
                             f"into the stock yet?), got {seen!r}")
        return int(seen)
    if seen is not None:
        raise ValueError(f"stock_seen is only for games with unlimited redeals; {v.title} counts them")
    if isinstance(redeals, bool) or not isinstance(redeals, int) or not 0 <= redeals <= v.redeals:
        raise ValueError(f"redeals_left must be an integer from 0 to {v.redeals} in {v.title}, got {redeals!r}")
    return redeals


def _parse_cells(v: Variant, state: dict) -> list[int]:
    """The free cells of a JSON state: one entry a cell, a card string or ``null`` for a free cell."""
    items = state.get("cells")
    if not v.cells:
        if items not in (None, []):
            raise ValueError(f"{v.title} has no free cells, but 'cells' holds {items!r}")
        return []
    if not isinstance(items, list) or len(items) != v.cells:
        got = f"{len(items)} entries" if isinstance(items, list) else repr(items)
        raise ValueError(f"cells must be a list of {v.cells} entries (a card or null) for {v.title}, got {got}")
    cells = []
    for c, text in enumerate(items):
        if text is None:
            cells.append(NO_CELL)
            continue
        if not isinstance(text, str):
            raise ValueError(f"cells[{c}] must be a card string like 'As' or null, got {text!r}")
        try:
            cells.append(card_from_str(text))
        except ValueError as err:
            raise ValueError(f"cells[{c}]: {err}") from None
    return cells


# The compiled shuffle's cache is dropped with the others' when a rules source changes.
drop_stale_cache(__name__)
