"""Observations a network can share weights over (``obs_mode="piles"``) and per-action features
(``action_features=True``), compiled.

Both are computed from the default observation's codes (:func:`solitaire_env.engine.core.observe`) and the
counts every player sees (pile lengths, face-down counts, the foundations), so they hold nothing a
player at the table does not know. Every array has a fixed shape and small non-negative integer
entries (``int8``, the summary ``int16``); 0 always means "none" or "unknown".

**cards**, ``(slots, 10)``: one row per place a card can lie in view, in the observation's order:
every tableau slot (pile ``p``, depth ``k`` at row ``p * capacity + k``), then the waste, then (games
with redeals: Rainbow, Klondike) the stock, then (Rainbow) the reserve, each bottom first, then
(FreeCell) one slot per free cell, in cell order.

==  ==============  ===========================================================================
 0  state           0 empty slot, 1 face up, 2 face down, 3 in the stock and not seen yet
 1  rank            1-13 (Ace to King) for a card seen, else 0
 2  suit            1-4 (clubs, diamonds, hearts, spades) for a card seen, else 0
 3  colour          1 black, 2 red for a card seen, else 0
 4  area            0 tableau, 1 waste, 2 stock, 3 reserve, 4 free cell (the slot's, whether a card is
                    there or not)
 5  pile            tableau pile + 1, 0 elsewhere
 6  depth           the slot's place in its pile or list, 0 at the bottom; a free cell's index
 7  height          cards lying on this one (0: the top card, and for an empty slot)
 8  movable         1 if some move can take this card (with the cards on it): a card of the top
                    packed run of its pile (in Rainbow, where only whole piles move between piles, the
                    top card and the bottom card of a pile that is one run), the top card of the
                    waste or the reserve, or a free cell's card
 9  to_foundation   1 if it is such a top card and a foundation takes it now
==  ==============  ===========================================================================

**piles**, ``(piles, 5)``: length, face-down cards, cards in the packed run on top, and the top card's
rank (1-13) and suit (1-4), 0 for an empty pile. **foundations**, ``(slots, 3)``: suit (1-4, 0 empty),
cards on it (0-13), and the rank it takes next (1-13, 0 when full; for an empty slot the base rank).
**summary**, ``(9,)``: stock size, waste size, reserve size, reserve face-down cards, redeals left,
base rank (1-13), face-down cards on the tableau, cards on the foundations, empty piles. Where the
waste may be turned over without limit (Klondike's default) *redeals left* is the stock-seen flag
instead: 0 until the waste is first turned over, 1 after (from then on the stock's cards are shown),
as the state's redeals entry holds it.

**Action features**, ``(n_actions, 11)``, all 0 for a move the rules do not allow:

==  ==========  ==================================================================================
 0  allowed     1 if the env's action mask allows it (0 for a legal move ``no_revisit`` masks)
 1  card        code (1-52, as the observation) of the card that moves, the bottom one of a run
                (a foundation's top card for a card coming back); 0 for a draw or a redeal
 2  onto        code of the card it goes onto: a pile's top or a foundation's top; 0 for an empty
                pile, an empty foundation, a free cell, a draw or a redeal
 3  count       cards moved (a draw: the cards it turns, fewer than three at the end of a draw-3
                stock; a redeal: the waste's size)
 4  from        1 stock, 2 waste, 3 reserve, 4 tableau, 5 free cell, 6 foundation (a card back)
 5  to          1 stock (redeal), 2 waste (draw), 3 tableau pile, 4 empty pile, 5 foundation, 6 free cell
 6  from_pile   the source pile + 1 for a move from the tableau, else 0 (the card names a free cell's
                or a foundation's)
 7  to_index    the target pile, foundation slot or free cell + 1, else 0
 8  uncovers    1 if a face-down card turns up (under the moved cards, or the reserve's next card);
                never for a card from a foundation
 9  empties     1 if it takes every card of its tableau pile (Rainbow then refills it from the
                reserve); 0 for a card from a foundation, even the last of its slot
10  seen        1 if it leads to a position seen this episode (see :mod:`solitaire_env.engine.history`)
==  ==========  ==================================================================================
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from solitaire_env.engine import batched, core
from solitaire_env.engine.batched import PARALLEL_MIN_BATCH, borrowed, keep_alive
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    HIDDEN,
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
    O_RESDOWN,
    O_TAB,
    OB_CELLS,
    OB_FOUND,
    OB_RES,
    OB_STOCK,
    OB_TAB,
    OB_WASTE,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    SP_AUTOFILL,
    SP_CAP,
    SP_CELLS,
    SP_DRAW,
    SP_FOUND,
    SP_N_ACTIONS,
    SP_PILES,
    SP_REDEALS,
    SP_RES_CAP,
    SP_STATE_SIZE,
    SP_STOCK_CAP,
    SP_WHOLE,
    SP_WRAP,
    TABLEAU_TO_CELL,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    UNLIMITED,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    Variant,
)

_jit = njit(cache=True, nogil=True)

CARD_FEATURES = ("state", "rank", "suit", "colour", "area", "pile", "depth", "height", "movable", "to_foundation")
PILE_FEATURES = ("length", "face_down", "run", "top_rank", "top_suit")
FOUNDATION_FEATURES = ("suit", "cards", "next_rank")
SUMMARY_FEATURES = ("stock", "waste", "reserve", "reserve_face_down", "redeals_left", "base_rank",
                    "face_down", "foundation_cards", "empty_piles")
ACTION_FEATURES = ("allowed", "card", "onto", "count", "from", "to", "from_pile", "to_index", "uncovers",
                   "empties", "seen")
F_STATE, F_RANK, F_SUIT, F_COLOUR, F_AREA, F_PILE, F_DEPTH, F_HEIGHT, F_MOVABLE, F_UP = range(len(CARD_FEATURES))
UP, DOWN, UNSEEN = 1, 2, 3  # card states
AREA_TABLEAU, AREA_WASTE, AREA_STOCK, AREA_RESERVE, AREA_CELL = range(5)
FROM_STOCK, FROM_WASTE, FROM_RESERVE, FROM_TABLEAU, FROM_CELL, FROM_FOUNDATION = 1, 2, 3, 4, 5, 6
TO_STOCK, TO_WASTE, TO_PILE, TO_EMPTY, TO_FOUNDATION, TO_CELL = 1, 2, 3, 4, 5, 6


def card_slots(v: Variant) -> int:
    """Rows of the ``cards`` array: tableau slots, waste, (with redeals) stock, reserve, free cells."""
    return v.piles * v.pile_capacity + v.stock_capacity * (2 if v.can_redeal else 1) + v.reserve + v.cells


def highs(v: Variant) -> dict[str, np.ndarray]:
    """The largest value of every entry of each array (for the observation space; at least 1, where a
    game has no such thing, so no entry's range is a single value)."""
    longest = max(v.pile_capacity, v.stock_capacity, v.reserve, v.cells)
    area = AREA_CELL if v.cells else AREA_RESERVE
    card = np.array([3, 13, 4, 2, area, v.piles, longest - 1, longest - 1, 1, 1], dtype=np.int64)
    pile = np.array([v.pile_capacity, v.pile_capacity, v.pile_capacity, 13, 4], dtype=np.int64)
    redeals = 1 if v.redeals is None else v.redeals  # unlimited: the stock-seen flag
    summary = np.array([v.stock_capacity, v.stock_capacity, v.reserve, v.reserve, redeals, 13,
                        v.piles * v.pile_capacity, v.n_cards, v.piles], dtype=np.int64)
    return {"cards": np.broadcast_to(np.maximum(card, 1), (card_slots(v), len(card))).copy(),
            "piles": np.broadcast_to(pile, (v.piles, len(pile))).copy(),
            "foundations": np.broadcast_to(np.array([4, 13, 13]), (v.foundations, 3)).copy(),
            "summary": np.maximum(summary, 1)}


def template(v: Variant) -> np.ndarray:
    """The ``cards`` array of an empty table: the columns a slot fixes (area, pile, depth), 0 elsewhere.
    :func:`observe_piles` starts from a copy and fills in the slots that hold a card."""
    rows = []
    for p in range(v.piles):
        rows += [(AREA_TABLEAU, p + 1, k) for k in range(v.pile_capacity)]
    rows += [(AREA_WASTE, 0, k) for k in range(v.stock_capacity)]
    if v.can_redeal:
        rows += [(AREA_STOCK, 0, k) for k in range(v.stock_capacity)]
    rows += [(AREA_RESERVE, 0, k) for k in range(v.reserve)]
    rows += [(AREA_CELL, 0, c) for c in range(v.cells)]
    out = np.zeros((len(rows), len(CARD_FEATURES)), dtype=np.int8)
    out[:, [F_AREA, F_PILE, F_DEPTH]] = rows
    return out


# The columns state, rank, suit, colour of each observation code (53: face down; the stock's unseen
# cards get UNSEEN instead).
_IDENTITY = np.zeros((HIDDEN + 1, 4), dtype=np.int8)
for _code in range(1, HIDDEN):
    _IDENTITY[_code] = (UP, (_code - 1) % 13 + 1, (_code - 1) // 13 + 1, 2 if (_code - 1) // 13 in (1, 2) else 1)
_IDENTITY[HIDDEN] = (DOWN, 0, 0, 0)


@njit(cache=True, nogil=True, inline="always")
def _fill(cards, row, codes, start, n, unseen) -> None:
    """The ``n`` cards of a pile or list whose slots start at row ``row`` and code ``codes[start]``."""
    for k in range(n):
        code = codes[start + k]
        cards[row + k, F_STATE] = UNSEEN if unseen and code == HIDDEN else _IDENTITY[code, 0]
        cards[row + k, F_RANK] = _IDENTITY[code, 1]
        cards[row + k, F_SUIT] = _IDENTITY[code, 2]
        cards[row + k, F_COLOUR] = _IDENTITY[code, 3]
        cards[row + k, F_HEIGHT] = n - 1 - k


@_jit
def observe_piles(s, sp, codes, empty, cards, piles, found, summary) -> None:
    """Write the ``piles`` observation (module doc) of position ``s`` whose default observation is
    ``codes``; ``empty``: :func:`template`."""
    n_piles, cap, stock_cap = sp[SP_PILES], sp[SP_CAP], sp[SP_STOCK_CAP]
    flat, source = cards.reshape(-1), empty.reshape(-1)
    for k in range(flat.shape[0]):  # one flat loop: a slice assignment, or a loop per row, is many times slower
        flat[k] = source[k]
    whole = sp[SP_WHOLE] != 0
    wrap = np.int64(sp[SP_WRAP] != 0)
    accepts = core._foundation_accepts(s, sp)  # bit c: a foundation takes card c (one call for every top)
    face_down, n_empty = 0, 0
    for p in range(n_piles):
        n, d = s[sp[O_LEN] + p], s[sp[O_DOWN] + p]
        face_down += d
        piles[p, 0], piles[p, 1] = n, d
        if n == 0:
            n_empty += 1
            piles[p, 2], piles[p, 3], piles[p, 4] = 0, 0, 0
            continue
        row = p * cap
        run = core.run_on(s, sp[O_TAB] + row, n, d, wrap) if d < n else 0
        _fill(cards, row, codes, sp[OB_TAB] + row, n, False)
        top = codes[sp[OB_TAB] + row + n - 1]
        piles[p, 2], piles[p, 3], piles[p, 4] = run, _IDENTITY[top, 1], _IDENTITY[top, 2]
        # Movable: any card of the top run; where only whole piles move, the top card (to a foundation)
        # and the bottom card of a pile that is one run.
        if whole:
            cards[row + n - 1, F_MOVABLE] = 1
            if run == n:
                cards[row, F_MOVABLE] = 1
        else:
            for k in range(n - run, n):
                cards[row + k, F_MOVABLE] = 1
        cards[row + n - 1, F_UP] = (accepts >> (top - 1)) & 1
    first = n_piles * cap
    nw = s[sp[O_NWASTE]]
    _fill(cards, first, codes, sp[OB_WASTE], nw, False)
    if nw > 0:
        cards[first + nw - 1, F_MOVABLE] = 1
        cards[first + nw - 1, F_UP] = (accepts >> core.waste_top(s, sp)) & 1
    first += stock_cap
    if sp[SP_REDEALS] != 0:  # (limited or unlimited: UNLIMITED is -1)
        _fill(cards, first, codes, sp[OB_STOCK], s[sp[O_NSTOCK]], True)
        first += stock_cap
    nr = s[sp[O_NRES]]
    if sp[SP_RES_CAP] > 0 and nr > 0:
        _fill(cards, first, codes, sp[OB_RES], nr, False)
        cards[first + nr - 1, F_MOVABLE] = 1
        cards[first + nr - 1, F_UP] = (accepts >> core.reserve_top(s, sp)) & 1
    first += sp[SP_RES_CAP]
    for c in range(sp[SP_CELLS]):  # a free cell's card: one card, face up, always movable
        code = codes[sp[OB_CELLS] + c]
        if code > 0:
            _fill(cards, first + c, codes, sp[OB_CELLS] + c, 1, False)
            cards[first + c, F_MOVABLE] = 1
            cards[first + c, F_UP] = (accepts >> (code - 1)) & 1
    base = s[sp[O_BASE]]
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        found[f, 0] = s[sp[O_FSUIT] + f] + 1 if n > 0 else 0
        found[f, 1] = n
        found[f, 2] = (base + n) % 13 + 1 if n < 13 else 0
    summary[0], summary[1] = s[sp[O_NSTOCK]], nw
    summary[2], summary[3] = nr, s[sp[O_RESDOWN]]
    summary[4], summary[5] = s[sp[O_REDEALS]], base + 1
    summary[6], summary[7], summary[8] = face_down, core.foundation_cards(s, sp), n_empty


@njit(cache=True, nogil=True, inline="always")
def _legal_move(s, sp, actions, a, facts, empty):
    """:func:`core.resolve` for a move known to be legal: ``(target index, count)``, from the pile facts
    (:func:`core._pile_facts`) and the lowest empty pile instead of walking the runs again."""
    kind, src, dst = actions[a, 0], actions[a, 1], actions[a, 2]
    if kind == DRAW:  # draw 3 turns fewer cards when fewer are left
        return -1, min(np.int64(s[sp[O_NSTOCK]]), sp[SP_DRAW])
    if kind == REDEAL:
        return -1, np.int64(s[sp[O_NWASTE]])
    if kind == TABLEAU_TO_TABLEAU:
        piles = sp[SP_PILES]
        if sp[SP_WHOLE] != 0:
            return dst, np.int64(s[sp[O_LEN] + src])
        return dst, facts[2 * piles + dst] - facts[2 * piles + src]  # core.fitting_count
    if kind == TABLEAU_TO_EMPTY:
        return empty, actions[a, 3]
    if kind == WASTE_TO_EMPTY:
        return empty, 1
    if kind == WASTE_TO_TABLEAU or kind == RESERVE_TO_TABLEAU or kind == CELL_TO_TABLEAU \
            or kind == FOUNDATION_TO_TABLEAU:
        return dst, 1
    if kind == CELL_TO_EMPTY or kind == FOUNDATION_TO_EMPTY:
        return empty, 1
    if kind == TABLEAU_TO_CELL:
        return core.lowest_free_cell(s, sp), 1
    if kind == WASTE_TO_FOUNDATION:
        card = core.waste_top(s, sp)
    elif kind == RESERVE_TO_FOUNDATION:
        card = core.reserve_top(s, sp)
    elif kind == CELL_TO_FOUNDATION:
        card = np.int64(s[sp[O_CELLS] + src])
    else:  # TABLEAU_TO_FOUNDATION
        card = facts[src]
    return core.foundation_for(s, sp, card), 1


@njit(cache=True, nogil=True, inline="always")
def _action_rows(s, sp, actions, codes, mask, seen, out, facts, empty, candidates, listed, scratch) -> None:
    """:func:`action_features`, given the pile facts of ``s`` (:func:`core._pile_facts`) and its lowest
    empty pile (-1: none), as the legal mask leaves them: inlined into the batched step, which has them.
    ``listed`` >= 0: ``candidates`` starts with that many actions, every move the rules allow between
    piles, into an empty pile, and between a free cell and the tableau (the history lists them), so only
    the other actions are scanned here; -1: none listed. Entries are written by index (a row view per
    move cost reference counting)."""
    cap, piles = sp[SP_CAP], sp[SP_PILES]
    o_len, o_down, tab = sp[O_LEN], sp[O_DOWN], sp[OB_TAB]
    have_seen = seen.shape[0] > 0
    whole, autofill = sp[SP_WHOLE] != 0, sp[SP_AUTOFILL] != 0
    flat = out.reshape(-1)
    for k in range(flat.shape[0]):  # one flat loop (a loop per row is many times slower)
        flat[k] = 0
    # The moves to describe, listed without a branch per action (as history.record does).
    found = 0
    if listed >= 0:  # the other kinds, listed here
        found = listed
        # The history lists the moves between a cell and the tableau too: those onto the tableau come
        # before the moves to a foundation from the tableau, those into a cell last; and a foundation's
        # card back to the tableau, at the table's end.
        first_tt, from_cell = sp[A_FIRST + TABLEAU_TO_TABLEAU], sp[A_FIRST + CELL_TO_TABLEAU]
        end = from_cell if from_cell >= 0 else first_tt
        if have_seen and (sp[A_FIRST + FOUNDATION_TO_TABLEAU] >= 0 or sp[SP_REDEALS] == UNLIMITED):
            # Here no_revisit may mask a card to a foundation, a draw or a redeal (Klondike): a legal
            # move it masked keeps its row through its seen flag.
            for a in range(end):
                candidates[found] = a
                found += (mask[a] | seen[a]) != 0
        else:  # no_revisit never masks these, and no seen flag is set for them
            for a in range(end):
                candidates[found] = a
                found += mask[a] != 0
        if from_cell >= 0:
            for a in range(sp[A_FIRST + TABLEAU_TO_FOUNDATION], first_tt):
                candidates[found] = a
                found += mask[a] != 0
    elif have_seen:  # two loops: a test of have_seen per action is a branch per action
        for a in range(sp[SP_N_ACTIONS]):
            candidates[found] = a
            found += (mask[a] | seen[a]) != 0
    else:
        for a in range(sp[SP_N_ACTIONS]):
            candidates[found] = a
            found += mask[a] != 0
    ranks = facts[2 * piles : 3 * piles]
    for c in range(found):
        a = candidates[c]
        kind, src = actions[a, 0], actions[a, 1]
        out[a, 0] = mask[a] != 0
        if have_seen:
            out[a, 10] = seen[a] != 0
        if kind == TABLEAU_TO_TABLEAU:  # most legal moves: their own short path
            dst = actions[a, 2]
            n, d = np.int64(s[o_len + src]), np.int64(s[o_down + src])
            count = n if whole else ranks[dst] - ranks[src]  # core.fitting_count
            out[a, 1] = codes[tab + src * cap + n - count]
            out[a, 2] = codes[tab + dst * cap + s[o_len + dst] - 1]
            out[a, 3], out[a, 4], out[a, 5] = count, FROM_TABLEAU, TO_PILE
            out[a, 6], out[a, 7], out[a, 9] = src + 1, dst + 1, count == n
            if n - count == d and d > 0:
                out[a, 8] = 1  # no pile shows a face-down top: the card under the moved ones turns up
            elif count == n and autofill:
                out[a, 8] = _refill_uncovers(s, sp, actions, a, scratch)
            continue
        target, count = _legal_move(s, sp, actions, a, facts, empty)
        out[a, 3] = count
        if kind == DRAW:
            out[a, 4], out[a, 5] = FROM_STOCK, TO_WASTE
            continue
        if kind == REDEAL:
            out[a, 4], out[a, 5] = FROM_WASTE, TO_STOCK
            continue
        if kind == WASTE_TO_FOUNDATION or kind == WASTE_TO_TABLEAU or kind == WASTE_TO_EMPTY:
            out[a, 4], out[a, 1] = FROM_WASTE, codes[sp[OB_WASTE] + s[sp[O_NWASTE]] - 1]
        elif kind == RESERVE_TO_FOUNDATION or kind == RESERVE_TO_TABLEAU:
            nr = s[sp[O_NRES]]
            out[a, 4], out[a, 1] = FROM_RESERVE, codes[sp[OB_RES] + nr - 1]
            # No reserve shows a face-down top: the next card turns up when one lies under this one.
            out[a, 8] = nr >= 2 and s[sp[O_RESDOWN]] >= nr - 1
        elif kind == CELL_TO_FOUNDATION or kind == CELL_TO_TABLEAU or kind == CELL_TO_EMPTY:
            out[a, 4], out[a, 1] = FROM_CELL, codes[sp[OB_CELLS] + src]
        elif kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
            out[a, 4], out[a, 1] = FROM_FOUNDATION, codes[sp[OB_FOUND] + src]  # (the slot's top card)
        else:
            n, d = s[o_len + src], s[o_down + src]
            out[a, 4], out[a, 6], out[a, 1] = FROM_TABLEAU, src + 1, codes[tab + src * cap + n - count]
            out[a, 9] = count == n
            if n - count == d and d > 0:
                out[a, 8] = 1  # no pile shows a face-down top: the card under the moved ones turns up
            elif count == n and autofill:  # the reserve may refill the pile: play it to see
                out[a, 8] = _refill_uncovers(s, sp, actions, a, scratch)
        out[a, 7] = target + 1
        if kind == WASTE_TO_FOUNDATION or kind == RESERVE_TO_FOUNDATION or kind == TABLEAU_TO_FOUNDATION \
                or kind == CELL_TO_FOUNDATION:
            out[a, 5], out[a, 2] = TO_FOUNDATION, codes[sp[OB_FOUND] + target]
        elif kind == WASTE_TO_EMPTY or kind == TABLEAU_TO_EMPTY or kind == CELL_TO_EMPTY \
                or kind == FOUNDATION_TO_EMPTY:
            out[a, 5] = TO_EMPTY
        elif kind == TABLEAU_TO_CELL:
            out[a, 5] = TO_CELL  # onto nothing: a free cell
        else:
            out[a, 5], out[a, 2] = TO_PILE, codes[tab + target * cap + s[o_len + target] - 1]


@_jit
def _refill_uncovers(s, sp, actions, a, scratch) -> bool:
    """Whether emptying a pile by move ``a`` turns a card up (the reserve refills it): played on a copy."""
    for k in range(s.shape[0]):
        scratch[k] = s[k]
    core.apply_action(scratch, sp, actions, a)
    return core.hidden_cards(scratch, sp) < core.hidden_cards(s, sp)


@_jit
def action_features(s, sp, actions, codes, mask, seen, out, scratch, candidates, facts) -> None:
    """Write the action features (module doc) of position ``s`` (observation ``codes``) into ``out``.
    ``mask``: the env's action mask; ``seen[a]``: 1 where a legal move leads to a position seen this
    episode (the moves ``no_revisit`` masks: legal by the rules though not in ``mask``), or an empty
    array. ``scratch``: a state array; ``candidates``: int64 work space of ``n_actions``; ``facts``:
    :func:`core._scratch` work space."""
    empty = core._pile_facts(s, sp, facts)
    _action_rows(s, sp, actions, codes, mask, seen, out, facts, empty, candidates, -1, scratch)


def _features_batch(states, sp, actions, codes, masks, seen, empty, cards, piles, found, summary, act_out,
                    want_piles, want_actions) -> None:
    """:func:`observe_piles` and :func:`action_features` of every game (arrays not wanted may have no
    columns; ``seen`` has none when the env keeps no history)."""
    work = (np.empty(sp[SP_STATE_SIZE], dtype=np.int8), np.empty(sp[SP_N_ACTIONS], dtype=np.int64), core._scratch(sp))
    b = borrowed  # no reference counting for the rows' views in the loop (batched.borrowed)
    states, sp, actions, codes, masks, seen, empty = b(states), b(sp), b(actions), b(codes), b(masks), b(seen), b(empty)
    cards, piles, found, summary, act_out = b(cards), b(piles), b(found), b(summary), b(act_out)
    scratch, candidates, facts = b(work[0]), b(work[1]), b(work[2])
    for i in range(states.shape[0]):
        if want_piles:
            _observe_piles(states[i], sp, codes[i], empty, cards[i], piles[i], found[i], summary[i])
        if want_actions:
            _action_features(states[i], sp, actions, codes[i], masks[i], seen[i], act_out[i], scratch, candidates,
                             facts)
    keep_alive(work)


# Inlined into the batch loop, so that borrowed arrays stay borrowed in them.
_observe_piles = njit(nogil=True, inline="always")(observe_piles.py_func)
_action_features = njit(nogil=True, inline="always")(action_features.py_func)
features_batch_serial = _jit(_features_batch)


def features_batch(states, sp, actions, codes, masks, seen, empty, cards, piles, found, summary, act_out, want_piles,
                   want_actions) -> None:
    """:func:`_features_batch`, in threads for large batches (as :func:`solitaire_env.engine.batched.step_batch`)."""
    if len(states) < PARALLEL_MIN_BATCH:
        features_batch_serial(states, sp, actions, codes, masks, seen, empty, cards, piles, found, summary, act_out,
                              want_piles, want_actions)
        return
    batched.in_chunks(features_batch_serial, len(states),
                      lambda lo, hi: (states[lo:hi], sp, actions, codes[lo:hi], masks[lo:hi], seen[lo:hi], empty,
                                      cards[lo:hi], piles[lo:hi], found[lo:hi], summary[lo:hi], act_out[lo:hi],
                                      want_piles, want_actions))


def action_highs(v: Variant) -> np.ndarray:
    """The largest value of each action feature column."""
    cells = v.cells > 0
    source = FROM_FOUNDATION if v.foundation_to_tableau else FROM_CELL if cells else FROM_TABLEAU
    return np.array([1, 52, 52, max(v.stock_capacity, 13), source,
                     TO_CELL if cells else TO_FOUNDATION, v.piles, max(v.piles, v.foundations, v.cells), 1, 1, 1],
                    dtype=np.int64)


PILES_KEYS = ("cards", "piles", "foundations", "summary")
_KEEP = 3  # arrays kept for reuse: the caller's last one, and the one before, which it may have let go


def _count_refs(arrays: list[np.ndarray], k: int) -> int:
    return sys.getrefcount(arrays[k])


def _unreferenced(arrays: list[np.ndarray], k: int, when_free: int) -> bool:
    """Whether ``arrays[k]`` has no reference but the list's (a view or an exported buffer holds one)."""
    return _count_refs(arrays, k) <= when_free


class FeatureArrays:
    """The arrays ``obs_mode="piles"`` (``piles``) and ``action_features`` (``actions``) fill for ``n``
    envs; :meth:`compute` writes fresh ones (the caller owns what it returns)."""

    def __init__(self, variant: Variant, n: int, piles: bool, actions: bool) -> None:
        self.variant, self.n, self.piles, self.actions = variant, n, piles, actions
        v = variant
        self._shapes = {"cards": ((card_slots(v), len(CARD_FEATURES)), np.int8),
                        "piles": ((v.piles, len(PILE_FEATURES)), np.int8),
                        "foundations": ((v.foundations, len(FOUNDATION_FEATURES)), np.int8),
                        "summary": ((len(SUMMARY_FEATURES),), np.int16),
                        "action_features": ((v.n_actions, len(ACTION_FEATURES)), np.int8)}
        self._none = {k: np.zeros((n,) + tuple(0 for _ in shape), dtype=dtype) for k, (shape, dtype) in
                      self._shapes.items()}
        # what compute() allocates each step, worked out once (it runs at every step of a single env)
        self._wanted = [(k, (n,) + shape, dtype) for k, (shape, dtype) in self._shapes.items()
                        if (actions if k == "action_features" else piles)]
        self._template = template(v)
        self._handed_out: list[np.ndarray] = []  # the last arrays new_action_features handed out
        self._refs_when_free = _count_refs([np.empty(0)], 0)  # an array only a list refers to

    def new_action_features(self) -> np.ndarray:
        """An ``(n, n_actions, 11)`` array for the action features, every entry of which the batched step
        writes: one this object handed out before if nothing else refers to it any more (no caller can
        see it change), else a new one. A new array of 2.7 MB each step (N = 1024) cost some 300 page
        faults a step: the allocator gave its pages back to the system in between."""
        for k in range(len(self._handed_out)):
            if _unreferenced(self._handed_out, k, self._refs_when_free):
                return self._handed_out[k]
        shape, dtype = self._shapes["action_features"]
        out = np.empty((self.n,) + shape, dtype=dtype)
        self._handed_out = [out, *self._handed_out[: _KEEP - 1]]
        return out

    def compute(self, states: np.ndarray, codes: np.ndarray, masks: np.ndarray, seen: np.ndarray,
                action_features: np.ndarray | None = None) -> dict:
        """The wanted arrays for the positions ``states`` (``(n, state_size)``), with their observation
        ``codes``, action ``masks`` and the history's ``seen`` flags (``(n, 0)`` when no history is kept).
        ``action_features``: already written for these positions (by the batched step), or ``None``."""
        given = action_features is not None
        out = {key: action_features if given and key == "action_features" else np.empty(shape, dtype=dtype)
               for key, shape, dtype in self._wanted}
        v = self.variant
        if self.piles or (self.actions and not given):
            arrays = {**self._none, **out}
            features_batch(states, v.spec, v.actions, codes, masks, seen, self._template, arrays["cards"],
                           arrays["piles"], arrays["foundations"], arrays["summary"], arrays["action_features"],
                           self.piles, self.actions and not given)
        return out


drop_stale_cache(__name__)

__all__ = ["ACTION_FEATURES", "CARD_FEATURES", "FOUNDATION_FEATURES", "PILE_FEATURES", "SUMMARY_FEATURES",
           "FeatureArrays", "action_features", "action_highs", "card_slots", "features_batch", "highs",
           "observe_piles"]
