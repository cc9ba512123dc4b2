"""The rules, once, compiled: legal moves, applying a move, and the observation.

Every function here works on one game's state, a flat ``int8`` array whose layout a
:class:`~solitaire_env.engine.variant.Variant` fixes (offsets in its ``spec`` array), and on the variant's
action table. Cards are ``suit * 13 + rank`` (see :mod:`solitaire_env.engine.cards`). Piles are stored bottom
to top with a length, and face-down cards are always the bottom ``down`` cards of a pile, so one count
per pile records them.

The single env, the vector env (through :mod:`solitaire_env.engine.batched`, which loops over many
games in one call), the agents and the solver all go through the same functions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine.areas import cell_moves, foundation_moves
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.position import (
    BUILDS,
    KING,
    NO_LIMIT,
    _13,
    builds_on,
    empty_piles,
    fitting_count,
    foundation_cards,
    foundation_for,
    foundation_top,
    free_cells,
    hidden_cards,
    is_red,
    lowest_empty_pile,
    lowest_free_cell,
    move_limit,
    pile_card,
    reserve_top,
    run_length,
    run_on,
    top_card,
    waste_top,
)
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    HIDDEN,
    MAX_RUN,
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
    OB_BASE,
    OB_CELLS,
    OB_FOUND,
    OB_NSTOCK,
    OB_REDEALS,
    OB_RES,
    OB_STOCK,
    OB_TAB,
    OB_WASTE,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    SP_AUTOFILL,
    SP_BASE,
    SP_CAP,
    SP_CELLS,
    SP_DRAW,
    SP_FOUND,
    SP_KINGS_ONLY,
    SP_N_ACTIONS,
    SP_PILES,
    SP_REDEALS,
    SP_RES_CAP,
    SP_RUN_LIMIT,
    SP_STOCK_CAP,
    SP_TAB_TO_EMPTY,
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
)

_jit = njit(cache=True, nogil=True)


@njit(cache=True, nogil=True, inline="always")
def _redeal_left(s, sp) -> bool:
    """The waste may be turned over again: always where redeals are unlimited (their state slot then
    records only whether it has been turned over once), else while the count left is above 0."""
    return sp[SP_REDEALS] == UNLIMITED or s[sp[O_REDEALS]] > 0


@_jit
def resolve(s, sp, actions, a: int):
    """What action ``a`` does here: ``(target index, count)``, count 0 when it is not legal.

    The target index is the foundation slot or tableau pile the move goes to (the canonical one:
    lowest accepting foundation, lowest empty pile), or -1 for stock and waste.
    """
    kind, src, dst, cnt = actions[a, 0], actions[a, 1], actions[a, 2], actions[a, 3]
    wrap = sp[SP_WRAP] != 0
    if kind == DRAW:  # draw 3 turns the last one or two cards when fewer are left
        return -1, min(s[sp[O_NSTOCK]], sp[SP_DRAW])
    if kind == REDEAL:
        n = s[sp[O_NWASTE]]
        ok = s[sp[O_NSTOCK]] == 0 and n > 0 and _redeal_left(s, sp)
        return -1, (n if ok else 0)
    # The card or run that would move.
    if kind == WASTE_TO_FOUNDATION or kind == WASTE_TO_TABLEAU or kind == WASTE_TO_EMPTY:
        card = waste_top(s, sp)
        n_moved = 1
    elif kind == RESERVE_TO_FOUNDATION or kind == RESERVE_TO_TABLEAU:
        card = reserve_top(s, sp)
        n_moved = 1
    elif kind == CELL_TO_FOUNDATION or kind == CELL_TO_TABLEAU or kind == CELL_TO_EMPTY:
        card = s[sp[O_CELLS] + src]  # NO_CELL (-1) when the cell is free
        n_moved = 1
    elif kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
        card = foundation_top(s, sp, src)
        n_moved = 1
    else:
        n = s[sp[O_LEN] + src]
        run = run_length(s, sp, src)
        if run == 0:
            return -1, 0
        if kind == TABLEAU_TO_CELL:
            c = lowest_free_cell(s, sp)
            return (c, 1) if c >= 0 else (-1, 0)
        if kind == TABLEAU_TO_FOUNDATION:
            card = pile_card(s, sp, src, n - 1)
            n_moved = 1
        elif kind == TABLEAU_TO_EMPTY:
            # Whole pile into an empty pile only relabels piles: not offered.
            if cnt > run or cnt >= n or cnt > move_limit(s, sp, True):
                return -1, 0
            card = pile_card(s, sp, src, n - cnt)
            n_moved = cnt
        else:  # TABLEAU_TO_TABLEAU: the one count that fits, if any
            onto = top_card(s, sp, dst)
            if onto < 0:
                return -1, 0
            if sp[SP_WHOLE] != 0 and run != n:
                return -1, 0
            n_moved = fitting_count(s, sp, src, dst)
            if n_moved < 1 or n_moved > run or n_moved > move_limit(s, sp, False):
                return -1, 0
            card = pile_card(s, sp, src, n - n_moved)
            return (dst, n_moved) if builds_on(card, onto, wrap) else (-1, 0)
    if card < 0:
        return -1, 0
    if kind == WASTE_TO_FOUNDATION or kind == RESERVE_TO_FOUNDATION or kind == TABLEAU_TO_FOUNDATION \
            or kind == CELL_TO_FOUNDATION:
        f = foundation_for(s, sp, card)
        return (f, 1) if f >= 0 else (-1, 0)
    if kind == WASTE_TO_TABLEAU or kind == RESERVE_TO_TABLEAU or kind == CELL_TO_TABLEAU \
            or kind == FOUNDATION_TO_TABLEAU:
        onto = top_card(s, sp, dst)
        return (dst, 1) if onto >= 0 and builds_on(card, onto, wrap) else (-1, 0)
    # Into the lowest empty pile. While Rainbow's reserve lasts no pile is empty, by the refill rule.
    if sp[SP_TAB_TO_EMPTY] == 0 and kind == TABLEAU_TO_EMPTY:
        return -1, 0
    if sp[SP_KINGS_ONLY] != 0 and card % 13 != KING:
        return -1, 0
    e = lowest_empty_pile(s, sp)
    return (e, n_moved) if e >= 0 else (-1, 0)


@_jit
def move_counts(s, sp, actions, mask, out) -> None:
    """``out[a]``: the cards legal action ``a`` (``mask[a]`` set) moves, as :func:`resolve` has it."""
    for a in range(mask.shape[0]):
        if mask[a]:
            out[a] = resolve(s, sp, actions, a)[1]


@_jit
def legal_mask_reference(s, sp, actions, mask) -> int:
    """:func:`legal_mask` the slow, obvious way: :func:`resolve` for every action (used in tests)."""
    count = 0
    for a in range(sp[SP_N_ACTIONS]):
        if resolve(s, sp, actions, a)[1] > 0:
            mask[a] = 1
            count += 1
        else:
            mask[a] = 0
    return count


@_jit
def _foundation_accepts(s, sp) -> int:
    """A bit set: bit ``c`` is 1 when some foundation slot accepts card ``c`` (as :func:`foundation_for`)."""
    base = s[sp[O_BASE]]
    bits = 0
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        if n == 0:
            for suit in range(4):
                bits |= 1 << (suit * 13 + base)
        elif n < 13:
            bits |= 1 << (s[sp[O_FSUIT] + f] * 13 + (base + n) % 13)
    return bits


@_jit
def _scratch(sp):
    """Work space for :func:`_legal_mask`: four entries a pile."""
    return np.empty(4 * sp[SP_PILES], dtype=np.int64)


@_jit
def legal_mask(s, sp, actions, mask) -> int:
    """Write 1 for every legal action, 0 otherwise; return how many are legal.

    The same decisions as :func:`resolve` (tests compare the two over many positions), enumerated
    per source instead of per action, so a position costs a few hundred operations.
    """
    return _legal_mask(s, sp, mask, _scratch(sp))


@njit(cache=True, nogil=True, inline="always")
def _pile_facts(s, sp, work) -> int:
    """Each pile once, into ``work`` (:func:`_scratch`): its top card if face up (else -1), the packed run
    on it (as run_length), the top's rank (else far below any rank) and colour, in four rows of
    ``piles`` entries; returns the lowest empty pile (-1 if none). :func:`_legal_mask` leaves them there
    for the position it was given (the no-revisit mask reads them)."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    o_tab, o_len, o_down = sp[O_TAB], sp[O_LEN], sp[O_DOWN]
    wrap = sp[SP_WRAP] != 0
    tops, runs, ranks, reds = work[:piles], work[piles : 2 * piles], work[2 * piles : 3 * piles], work[3 * piles :]
    empty = -1
    for p in range(piles):
        n, down = s[o_len + p], s[o_down + p]
        if n == 0 and empty < 0:
            empty = p
        if down >= n:
            tops[p], runs[p], ranks[p], reds[p] = -1, 0, -100, 0
            continue
        pile = o_tab + p * cap
        k = 1
        while k < n - down and builds_on(s[pile + n - k], s[pile + n - k - 1], wrap):
            k += 1
        top = s[pile + n - 1]
        tops[p], runs[p], ranks[p], reds[p] = top, k, np.uint32(top) % _13, is_red(top)
    return empty


@_jit
def _legal_mask(s, sp, mask, work) -> int:
    """:func:`legal_mask` with work space from :func:`_scratch` (one allocation a batch, not a position).

    The moves of the areas only some games have come from :mod:`~solitaire_env.engine.areas`, compiled in.
    """
    n_actions, piles, cap = sp[SP_N_ACTIONS], sp[SP_PILES], sp[SP_CAP]
    o_tab, o_len = sp[O_TAB], sp[O_LEN]
    wrap, whole, kings_only = sp[SP_WRAP] != 0, sp[SP_WHOLE] != 0, sp[SP_KINGS_ONLY]
    for a in range(n_actions):
        mask[a] = 0
    count = 0

    tops, runs, ranks, reds = work[:piles], work[piles : 2 * piles], work[2 * piles : 3 * piles], work[3 * piles :]
    empty = _pile_facts(s, sp, work)
    accepts = _foundation_accepts(s, sp)
    limit_onto, limit_empty = NO_LIMIT, NO_LIMIT
    if sp[SP_RUN_LIMIT] != 0:  # how many cards a tableau move may carry onto a pile, into an empty one
        limit_onto, limit_empty = move_limit(s, sp, False), move_limit(s, sp, True)

    if s[sp[O_NSTOCK]] > 0:
        mask[sp[A_FIRST + DRAW]] = 1
        count += 1
    elif sp[A_FIRST + REDEAL] >= 0 and s[sp[O_NWASTE]] > 0 and _redeal_left(s, sp):
        mask[sp[A_FIRST + REDEAL]] = 1
        count += 1

    # Single cards from the waste and the reserve.
    for source in range(2):
        if source == 0:
            card = waste_top(s, sp)
            first_f, first_t = sp[A_FIRST + WASTE_TO_FOUNDATION], sp[A_FIRST + WASTE_TO_TABLEAU]
        else:
            if sp[A_FIRST + RESERVE_TO_FOUNDATION] < 0:
                break
            card = reserve_top(s, sp)
            first_f, first_t = sp[A_FIRST + RESERVE_TO_FOUNDATION], sp[A_FIRST + RESERVE_TO_TABLEAU]
        if card < 0:
            continue
        if (accepts >> card) & 1:
            mask[first_f] = 1
            count += 1
        for j in range(piles):
            onto = tops[j]
            if onto >= 0 and builds_on(card, onto, wrap):
                mask[first_t + j] = 1
                count += 1
        if source == 0 and empty >= 0 and (kings_only == 0 or card % 13 == KING):
            mask[sp[A_FIRST + WASTE_TO_EMPTY]] = 1
            count += 1

    # Tableau sources.
    first_tf = sp[A_FIRST + TABLEAU_TO_FOUNDATION]
    first_tt = sp[A_FIRST + TABLEAU_TO_TABLEAU]
    first_te = sp[A_FIRST + TABLEAU_TO_EMPTY]
    for i in range(piles):
        top_i = tops[i]
        if top_i < 0:
            continue
        n, run = s[o_len + i], runs[i]
        pile = o_tab + i * cap
        if (accepts >> top_i) & 1:
            mask[first_tf + i] = 1
            count += 1
        row = first_tt + i * (piles - 1)
        if not whole:
            # Onto pile j goes the part of the run that ends one rank below j's top: k cards, k = the rank
            # difference, if 1 <= k <= run (never for a pile without a face-up top), and if its bottom
            # card, of the top's colour for odd k (the run alternates), differs in colour from j's top.
            # Computed without branches: which way they go is unpredictable, and mispredicting them
            # cost more than the rest of the mask.
            rank_i, red_i = ranks[i], reds[i]
            longest = min(run, limit_onto)
            for j in range(piles):
                if j != i:
                    k = ranks[j] - rank_i
                    ok = (k >= 1) & (k <= longest) & ((red_i ^ (k & 1)) == reds[j])
                    mask[row + j - (j > i)] = ok
                    count += ok
        elif run == n:
            for j in range(piles):
                onto = tops[j]
                if j != i and onto >= 0 and builds_on(s[pile], onto, wrap):
                    mask[row + (j if j < i else j - 1)] = 1
                    count += 1
        if first_te >= 0 and empty >= 0:
            # Not the whole pile: into an empty pile that only relabels piles.
            most = min(run, MAX_RUN, n - 1, limit_empty)
            if kings_only == 0:
                for k in range(1, most + 1):
                    mask[first_te + i * MAX_RUN + k - 1] = 1
                count += most
            else:  # only the part of the run headed by a King (a packed run holds at most one)
                for k in range(1, most + 1):
                    if s[pile + n - k] % 13 == KING:
                        mask[first_te + i * MAX_RUN + k - 1] = 1
                        count += 1
    if sp[SP_CELLS] > 0:
        count += cell_moves(s, sp, mask, tops, empty, accepts)
    if sp[A_FIRST + FOUNDATION_TO_TABLEAU] >= 0:
        count += foundation_moves(s, sp, mask, tops, empty)
    return count


# --- changing a position -------------------------------------------------------------------------


@_jit
def _push_pile(s, sp, p: int, card: int) -> None:
    n = s[sp[O_LEN] + p]
    s[sp[O_TAB] + p * sp[SP_CAP] + n] = card
    s[sp[O_LEN] + p] = n + 1


@_jit
def _take_reserve(s, sp) -> int:
    n = s[sp[O_NRES]] - 1
    card = s[sp[O_RES] + n]
    s[sp[O_RES] + n] = 0  # vacated slots hold 0, so equal positions are equal arrays
    s[sp[O_NRES]] = n
    if n > 0 and s[sp[O_RESDOWN]] >= n:  # the next reserve card turns face up at once
        s[sp[O_RESDOWN]] = n - 1
    return card


@_jit
def _after_taking_from(s, sp, p: int) -> None:
    """Turn an uncovered face-down card up; refill an emptied pile from the reserve where the game says so."""
    n = s[sp[O_LEN] + p]
    if n > 0:
        if s[sp[O_DOWN] + p] >= n:
            s[sp[O_DOWN] + p] = n - 1
    elif sp[SP_AUTOFILL] != 0 and s[sp[O_NRES]] > 0:
        _push_pile(s, sp, p, _take_reserve(s, sp))


@_jit
def _to_foundation(s, sp, f: int, card: int) -> None:
    if s[sp[O_FCNT] + f] == 0:
        s[sp[O_FSUIT] + f] = card // 13
    s[sp[O_FCNT] + f] += 1


@_jit
def apply_action(s, sp, actions, a: int) -> int:
    """Play action ``a``; return the number of cards it moved, 0 (and no change) if it is not legal."""
    target, count = resolve(s, sp, actions, a)
    if count == 0:
        return 0
    kind, src = actions[a, 0], actions[a, 1]
    if kind == DRAW:
        for _ in range(count):  # the stock's top card first: with draw 3 the third card ends on top
            n = s[sp[O_NSTOCK]] - 1
            w = s[sp[O_NWASTE]]
            s[sp[O_WASTE] + w] = s[sp[O_STOCK] + n]
            s[sp[O_STOCK] + n] = 0
            s[sp[O_NSTOCK]] = n
            s[sp[O_NWASTE]] = w + 1
    elif kind == REDEAL:
        # Turning the waste over: its first card becomes the stock's top, dealt first again.
        n = s[sp[O_NWASTE]]
        for k in range(n):
            s[sp[O_STOCK] + k] = s[sp[O_WASTE] + n - 1 - k]
        for k in range(n):
            s[sp[O_WASTE] + k] = 0
        s[sp[O_NSTOCK]] = n
        s[sp[O_NWASTE]] = 0
        if sp[SP_REDEALS] == UNLIMITED:
            s[sp[O_REDEALS]] = 1  # turned over at least once: the player has seen the stock's order
        else:
            s[sp[O_REDEALS]] -= 1
    elif kind == WASTE_TO_FOUNDATION or kind == WASTE_TO_TABLEAU or kind == WASTE_TO_EMPTY:
        w = s[sp[O_NWASTE]] - 1
        card = s[sp[O_WASTE] + w]
        s[sp[O_WASTE] + w] = 0
        s[sp[O_NWASTE]] = w
        if kind == WASTE_TO_FOUNDATION:
            _to_foundation(s, sp, target, card)
        else:
            _push_pile(s, sp, target, card)
    elif kind == RESERVE_TO_FOUNDATION or kind == RESERVE_TO_TABLEAU:
        card = _take_reserve(s, sp)
        if kind == RESERVE_TO_FOUNDATION:
            _to_foundation(s, sp, target, card)
        else:
            _push_pile(s, sp, target, card)
    elif kind == CELL_TO_FOUNDATION or kind == CELL_TO_TABLEAU or kind == CELL_TO_EMPTY:
        card = s[sp[O_CELLS] + src]
        s[sp[O_CELLS] + src] = NO_CELL
        if kind == CELL_TO_FOUNDATION:
            _to_foundation(s, sp, target, card)
        else:
            _push_pile(s, sp, target, card)
    elif kind == FOUNDATION_TO_TABLEAU or kind == FOUNDATION_TO_EMPTY:
        card = foundation_top(s, sp, src)
        s[sp[O_FCNT] + src] -= 1
        if s[sp[O_FCNT] + src] == 0:
            s[sp[O_FSUIT] + src] = -1  # an empty slot holds no suit, as dealt: equal positions, equal arrays
        _push_pile(s, sp, target, card)
    else:
        n = s[sp[O_LEN] + src]
        if kind == TABLEAU_TO_FOUNDATION:
            _to_foundation(s, sp, target, pile_card(s, sp, src, n - 1))
        elif kind == TABLEAU_TO_CELL:
            s[sp[O_CELLS] + target] = pile_card(s, sp, src, n - 1)
        else:
            for k in range(n - count, n):
                _push_pile(s, sp, target, pile_card(s, sp, src, k))
        for k in range(n - count, n):
            s[sp[O_TAB] + src * sp[SP_CAP] + k] = 0
        s[sp[O_LEN] + src] = n - count
        _after_taking_from(s, sp, src)
    return count


# --- what the player sees ------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _codes(dst, src, down: int, n: int) -> None:
    """One stored list into observation slots: ``HIDDEN`` below ``down``, card code below ``n``, then 0.

    A select per slot over all the slots, not a loop per part: the compiler vectorizes it (3-4 times
    faster than branching on every pile's counts); the slots a player cannot see are read, never shown.
    """
    for k in range(len(dst)):
        card = src[k] + 1
        dst[k] = HIDDEN if k < down else (card if k < n else 0)


@_jit
def observe(s, sp, obs) -> None:
    """Write the observation: card codes 1..52 for seen cards, HIDDEN for unseen ones, 0 for nothing.

    Never shows a face-down card or the unseen stock order: only what a player at the table knows.
    """
    piles, cap, stock_cap, res_cap = sp[SP_PILES], sp[SP_CAP], sp[SP_STOCK_CAP], sp[SP_RES_CAP]
    # The tableau as _codes does it, pile by pile, on views of whole fields (faster than a view a pile).
    lens, downs = s[sp[O_LEN] : sp[O_LEN] + piles], s[sp[O_DOWN] : sp[O_DOWN] + piles]
    cards, codes = s[sp[O_TAB] : sp[O_TAB] + piles * cap], obs[sp[OB_TAB] : sp[OB_TAB] + piles * cap]
    for p in range(piles):
        n, down = lens[p], downs[p]
        for k in range(cap):
            card = cards[p * cap + k] + 1
            codes[p * cap + k] = HIDDEN if k < down else (card if k < n else 0)
    _codes(obs[sp[OB_WASTE] : sp[OB_WASTE] + stock_cap], s[sp[O_WASTE] : sp[O_WASTE] + stock_cap], 0,
           s[sp[O_NWASTE]])
    base_rank = s[sp[O_BASE]]
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        obs[sp[OB_FOUND] + f] = s[sp[O_FSUIT] + f] * 13 + (base_rank + n - 1) % 13 + 1 if n > 0 else 0
    ns = s[sp[O_NSTOCK]]
    if stock_cap > 0:  # a game without a stock has no stock_size field
        obs[sp[OB_NSTOCK]] = ns
    if sp[SP_REDEALS] != 0:
        # After a redeal the stock is the turned-over waste, which the player has seen card by card (with
        # draw 3 too: the three cards of a draw are laid out fanned). Unlimited redeals keep no count.
        unlimited = sp[SP_REDEALS] == UNLIMITED
        known = s[sp[O_REDEALS]] > 0 if unlimited else s[sp[O_REDEALS]] < sp[SP_REDEALS]
        _codes(obs[sp[OB_STOCK] : sp[OB_STOCK] + stock_cap], s[sp[O_STOCK] : sp[O_STOCK] + stock_cap],
               0 if known else ns, ns)
        if not unlimited:
            obs[sp[OB_REDEALS]] = s[sp[O_REDEALS]]
    if res_cap > 0:
        _codes(obs[sp[OB_RES] : sp[OB_RES] + res_cap], s[sp[O_RES] : sp[O_RES] + res_cap], s[sp[O_RESDOWN]],
               s[sp[O_NRES]])
    if sp[SP_BASE]:  # the base rank has a field only where the deal fixes it (a reserve alone does not)
        obs[sp[OB_BASE]] = base_rank
    for c in range(sp[SP_CELLS]):
        obs[sp[OB_CELLS] + c] = s[sp[O_CELLS] + c] + 1  # a free cell (NO_CELL, -1) shows as 0


# The compiled functions hold variant.py's constants: a cache built from other sources is dropped here.
drop_stale_cache(__name__)

__all__ = [
    "apply_action",
    "BUILDS",
    "builds_on",
    "empty_piles",
    "fitting_count",
    "foundation_cards",
    "foundation_for",
    "foundation_top",
    "free_cells",
    "hidden_cards",
    "is_red",
    "legal_mask",
    "legal_mask_reference",
    "lowest_empty_pile",
    "lowest_free_cell",
    "move_counts",
    "move_limit",
    "NO_LIMIT",
    "observe",
    "pile_card",
    "reserve_top",
    "resolve",
    "run_length",
    "run_on",
    "top_card",
    "waste_top",
]
