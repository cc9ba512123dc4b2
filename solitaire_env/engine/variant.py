"""What makes each game different, declared as data: :class:`Variant`.

A variant states the deal shape and the handful of rule switches in which the games differ.
From it this module derives everything the compiled core needs: the flat state layout (offsets into
one small ``int8`` array per game), and the table of actions (one id per canonical move).

The rules themselves live once, in :mod:`solitaire_env.engine.core`; the games in
:mod:`solitaire_env.engine.games` are just instances of :class:`Variant`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Action kinds: column 0 of the action table.
DRAW, REDEAL = 0, 1
WASTE_TO_FOUNDATION, WASTE_TO_TABLEAU, WASTE_TO_EMPTY = 2, 3, 4
RESERVE_TO_FOUNDATION, RESERVE_TO_TABLEAU = 5, 6
TABLEAU_TO_FOUNDATION, TABLEAU_TO_TABLEAU, TABLEAU_TO_EMPTY = 7, 8, 9
CELL_TO_FOUNDATION, CELL_TO_TABLEAU, CELL_TO_EMPTY, TABLEAU_TO_CELL = 10, 11, 12, 13
FOUNDATION_TO_TABLEAU, FOUNDATION_TO_EMPTY = 14, 15
N_KINDS = 16

# Indices into the int64 "spec" array handed to the compiled core.
(
    SP_PILES, SP_CAP, SP_FOUND, SP_WRAP, SP_WHOLE, SP_TAB_TO_EMPTY, SP_AUTOFILL, SP_REDEALS,
    SP_STOCK_CAP, SP_RES_CAP, SP_BASE, SP_CELLS, SP_RUN_LIMIT, SP_DRAW, SP_KINGS_ONLY, SP_NCARDS, SP_N_ACTIONS,
    SP_STATE_SIZE,
    O_TAB, O_LEN, O_DOWN, O_FSUIT, O_FCNT, O_STOCK, O_NSTOCK, O_WASTE, O_NWASTE,
    O_RES, O_NRES, O_RESDOWN, O_REDEALS, O_BASE, O_CELLS,
    OB_TAB, OB_WASTE, OB_FOUND, OB_NSTOCK, OB_STOCK, OB_REDEALS, OB_RES, OB_BASE, OB_CELLS, OB_SIZE,
    A_FIRST,  # spec[A_FIRST + kind]: the first action id of that kind, -1 if the variant has none
) = range(44)
SP_LEN = A_FIRST + N_KINDS

HIDDEN = 53  # observation code of a card the player cannot see
MAX_RUN = 13  # longest packed run without wrapping: King down to Ace
NO_CELL = -1  # a free cell's entry in the state when it holds no card
SHUFFLES = ("pcg64", "microsoft")
UNLIMITED = -1  # spec[SP_REDEALS] of a game whose waste may be turned over any number of times


@dataclass(frozen=True)
class Variant:
    """The declarative description of one game.

    ==================  ==============================================================================
    field               meaning
    ==================  ==============================================================================
    name                id used in state JSON (``rank_and_file``, ``number_ten``, ``rainbow``)
    title               human name
    decks               number of 52-card decks
    piles               tableau piles
    deal_down/deal_up   face-down and face-up cards dealt to each pile (one number, or one per pile)
    foundations         foundation slots
    reserve             reserve size (its top card dealt face up)
    base_from_deal      one card is dealt to the first foundation and fixes the base rank
    wrap                ranks wrap King-Ace in building, on tableau and foundations
    whole_pile_moves    between piles only whole piles move (else any packed run or its top part)
    tableau_to_empty    tableau cards may go into an empty pile
    auto_fill           an emptied pile is filled at once from the reserve
    redeals             times the waste may be turned over into a new stock; ``None``: any number
                        of times (the state then records only whether it has been, which shows the
                        stock's order to the player)
    draw                cards one draw turns from the stock onto the waste (Klondike's draw 3; only
                        the waste's top card is ever playable)
    kings_to_empty      an empty pile takes only a King, or a run headed by one (Klondike)
    foundation_to_tableau
                        a foundation's top card may come back onto the tableau (Klondike)
    cells               free cells, each holding one card (FreeCell)
    run_limit           a run moves only as far as free cells and empty piles allow: at most
                        (free cells + 1) * 2 ** (empty piles other than the target) cards
    shuffle             how a deal number becomes a deck: ``pcg64`` (ours) or ``microsoft``
                        (Microsoft FreeCell's numbered deals, :mod:`~solitaire_env.engine.ms_deals`)
    deal_limit          deal numbers are 0 .. deal_limit - 1
    pile_capacity       longest pile the engine stores (legal play cannot exceed it)
    max_episode_steps   the registered env's truncation limit
    ==================  ==============================================================================
    """

    name: str
    title: str
    decks: int
    piles: int
    deal_down: int | tuple[int, ...]
    deal_up: int | tuple[int, ...]
    foundations: int
    reserve: int = 0
    base_from_deal: bool = False
    wrap: bool = False
    whole_pile_moves: bool = False
    tableau_to_empty: bool = True
    auto_fill: bool = False
    redeals: int | None = 0
    draw: int = 1
    kings_to_empty: bool = False
    foundation_to_tableau: bool = False
    cells: int = 0
    run_limit: bool = False
    shuffle: str = "pcg64"
    deal_limit: int = 2**62
    pile_capacity: int = 16
    max_episode_steps: int = 2000
    # Derived in __post_init__:
    spec: np.ndarray = field(init=False, repr=False, compare=False)
    actions: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.tableau_to_empty and self.wrap:
            raise ValueError("the core computes run splits for non-wrapping games only")
        for name in ("deal_down", "deal_up"):
            counts = getattr(self, name)
            if not isinstance(counts, int) and len(counts) != self.piles:
                raise ValueError(f"{name} gives {len(counts)} counts for {self.piles} piles")
        if self.shuffle not in SHUFFLES:
            raise ValueError(f"shuffle must be one of {', '.join(SHUFFLES)}, got {self.shuffle!r}")
        if self.redeals is not None and not 0 <= self.redeals <= 100:
            raise ValueError(f"redeals must be None (unlimited) or 0-100, got {self.redeals!r}")
        if self.draw < 1:
            raise ValueError(f"draw must be at least 1, got {self.draw!r}")
        if self.shuffle == "microsoft" and (self.decks != 1 or self.deal_limit > 2**31):
            raise ValueError("the Microsoft shuffle deals one deck, deal numbers below 2**31")
        object.__setattr__(self, "actions", _action_table(self))
        object.__setattr__(self, "spec", _spec_array(self))

    @property
    def n_cards(self) -> int:
        return 52 * self.decks

    @property
    def down_counts(self) -> tuple[int, ...]:
        """Face-down cards dealt to each pile."""
        return _per_pile(self.deal_down, self.piles)

    @property
    def up_counts(self) -> tuple[int, ...]:
        """Face-up cards dealt to each pile."""
        return _per_pile(self.deal_up, self.piles)

    @property
    def stock_capacity(self) -> int:
        """Cards dealt to the stock; stock and waste together never hold more."""
        dealt = sum(self.down_counts) + sum(self.up_counts) + self.reserve + int(self.base_from_deal)
        return self.n_cards - dealt

    @property
    def can_redeal(self) -> bool:
        """The waste may be turned over into a new stock at least once."""
        return self.redeals is None or self.redeals > 0

    @property
    def n_actions(self) -> int:
        return len(self.actions)

    @property
    def state_size(self) -> int:
        return int(self.spec[SP_STATE_SIZE])

    @property
    def obs_size(self) -> int:
        return int(self.spec[OB_SIZE])


def _per_pile(counts: int | tuple[int, ...], piles: int) -> tuple[int, ...]:
    return (counts,) * piles if isinstance(counts, int) else tuple(counts)


def _action_table(v: Variant) -> np.ndarray:
    """Rows ``(kind, source index, target index, count)``; -1 where the move's position decides."""
    rows: list[tuple[int, int, int, int]] = []
    if v.stock_capacity:  # a game without a stock (FreeCell) has no stock or waste moves
        rows.append((DRAW, -1, -1, 1 if v.draw == 1 else -1))
        if v.can_redeal:
            rows.append((REDEAL, -1, -1, -1))
        rows.append((WASTE_TO_FOUNDATION, -1, -1, 1))
        rows += [(WASTE_TO_TABLEAU, -1, j, 1) for j in range(v.piles)]
        rows.append((WASTE_TO_EMPTY, -1, -1, 1))
    if v.reserve:
        rows.append((RESERVE_TO_FOUNDATION, -1, -1, 1))
        rows += [(RESERVE_TO_TABLEAU, -1, j, 1) for j in range(v.piles)]
    # A free cell's card: to a foundation, onto a pile, into the lowest empty pile.
    rows += [(CELL_TO_FOUNDATION, c, -1, 1) for c in range(v.cells)]
    rows += [(CELL_TO_TABLEAU, c, j, 1) for c in range(v.cells) for j in range(v.piles)]
    rows += [(CELL_TO_EMPTY, c, -1, 1) for c in range(v.cells)]
    rows += [(TABLEAU_TO_FOUNDATION, i, -1, 1) for i in range(v.piles)]
    rows += [(TABLEAU_TO_TABLEAU, i, j, -1) for i in range(v.piles) for j in range(v.piles) if i != j]
    if v.tableau_to_empty:
        rows += [(TABLEAU_TO_EMPTY, i, -1, k) for i in range(v.piles) for k in range(1, MAX_RUN + 1)]
    if v.cells:
        rows += [(TABLEAU_TO_CELL, i, -1, 1) for i in range(v.piles)]  # into the lowest free cell
    if v.foundation_to_tableau:  # a foundation's top card back onto a pile, or into the lowest empty pile
        rows += [(FOUNDATION_TO_TABLEAU, f, j, 1) for f in range(v.foundations) for j in range(v.piles)]
        rows += [(FOUNDATION_TO_EMPTY, f, -1, 1) for f in range(v.foundations)]
    return np.array(rows, dtype=np.int64)


def _spec_array(v: Variant) -> np.ndarray:
    sp = np.zeros(SP_LEN, dtype=np.int64)
    sp[SP_PILES], sp[SP_CAP], sp[SP_FOUND] = v.piles, v.pile_capacity, v.foundations
    sp[SP_WRAP], sp[SP_WHOLE], sp[SP_TAB_TO_EMPTY] = v.wrap, v.whole_pile_moves, v.tableau_to_empty
    sp[SP_AUTOFILL], sp[SP_REDEALS] = v.auto_fill, UNLIMITED if v.redeals is None else v.redeals
    sp[SP_DRAW], sp[SP_KINGS_ONLY] = v.draw, v.kings_to_empty
    sp[SP_STOCK_CAP], sp[SP_RES_CAP], sp[SP_NCARDS] = v.stock_capacity, v.reserve, v.n_cards
    sp[SP_BASE] = v.base_from_deal  # the deal fixes the base rank, which the observation then shows
    sp[SP_CELLS], sp[SP_RUN_LIMIT] = v.cells, v.run_limit
    sp[SP_N_ACTIONS] = len(v.actions)
    sp[A_FIRST : A_FIRST + N_KINDS] = -1
    for a in range(len(v.actions) - 1, -1, -1):
        sp[A_FIRST + v.actions[a, 0]] = a
    # State layout: one int8 array; every list is stored bottom to top with a length beside it.
    sizes = [
        (O_TAB, v.piles * v.pile_capacity), (O_LEN, v.piles), (O_DOWN, v.piles),
        (O_FSUIT, v.foundations), (O_FCNT, v.foundations),
        (O_STOCK, v.stock_capacity), (O_NSTOCK, 1), (O_WASTE, v.stock_capacity), (O_NWASTE, 1),
        (O_RES, v.reserve), (O_NRES, 1), (O_RESDOWN, 1), (O_REDEALS, 1), (O_BASE, 1), (O_CELLS, v.cells),
    ]
    offset = 0
    for key, size in sizes:
        sp[key] = offset
        offset += size
    sp[SP_STATE_SIZE] = offset
    # Observation layout (see observation_fields below); absent fields get size 0.
    offset = 0
    for key, size in _obs_sizes(v):
        sp[key] = offset
        offset += size
    sp[OB_SIZE] = offset
    return sp


def _obs_sizes(v: Variant) -> list[tuple[int, int]]:
    known_stock = v.stock_capacity if v.can_redeal else 0  # shown once the waste has been turned over
    counted = v.redeals is not None and v.redeals > 0  # unlimited redeals have no count to show
    return [
        (OB_TAB, v.piles * v.pile_capacity), (OB_WASTE, v.stock_capacity), (OB_FOUND, v.foundations),
        (OB_NSTOCK, 1 if v.stock_capacity else 0), (OB_STOCK, known_stock), (OB_REDEALS, 1 if counted else 0),
        (OB_RES, v.reserve), (OB_BASE, 1 if v.base_from_deal else 0), (OB_CELLS, v.cells),
    ]


def observation_fields(v: Variant) -> dict[str, tuple[slice, int]]:
    """Name -> (slice of the flat observation, number of values each entry takes)."""
    names = {
        OB_TAB: ("tableau", HIDDEN + 1), OB_WASTE: ("waste", HIDDEN), OB_FOUND: ("foundations", HIDDEN),
        OB_NSTOCK: ("stock_size", v.stock_capacity + 1), OB_STOCK: ("stock", HIDDEN + 1),
        OB_REDEALS: ("redeals_left", (v.redeals or 0) + 1), OB_RES: ("reserve", HIDDEN + 1),
        OB_BASE: ("base_rank", 13), OB_CELLS: ("cells", HIDDEN),
    }
    fields = {}
    for key, size in _obs_sizes(v):
        if size:
            name, n = names[key]
            start = int(v.spec[key])
            fields[name] = (slice(start, start + size), n)
    return fields
