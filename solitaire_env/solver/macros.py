"""Stock macros: "step through the stock k times, then play the waste's new top card" as one search move
(docs/solver.md, "Stock macros are complete").

A search move ``m`` is an action id below ``n_actions``, or ``action + n_actions * steps`` for a macro.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.position import KING
from solitaire_env.engine.variant import (
    A_FIRST,
    DRAW,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_STOCK,
    O_WASTE,
    REDEAL,
    SP_DRAW,
    SP_KINGS_ONLY,
    SP_N_ACTIONS,
    SP_PILES,
    SP_REDEALS,
    SP_WRAP,
    UNLIMITED,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
)
from solitaire_env.solver.ordering import insert_sorted

_jit = njit(cache=True, nogil=True)

# A macro scores as the draws it stands for did (400), less one a step: the same order as drawing one
# card at a time, playing what comes up, and then drawing on. Its play breaks ties (foundation first).
MACRO = 400


@_jit
def step_action(s, sp) -> int:
    """The action that steps through the stock here: a draw, or a redeal once it is empty (-1: no redeals)."""
    return sp[A_FIRST + DRAW] if s[sp[O_NSTOCK]] > 0 else sp[A_FIRST + REDEAL]


@_jit
def redeal_left(s, sp) -> bool:
    """The waste may be turned over into a new stock here (once the stock is empty): the game has
    redeals, and they are unlimited or some are left."""
    return sp[A_FIRST + REDEAL] >= 0 and (sp[SP_REDEALS] == UNLIMITED or s[sp[O_REDEALS]] > 0)


@_jit
def sequence_card(s, sp, i: int) -> int:
    """Card ``i`` of the stock and waste read as one sequence: the waste from its bottom card, then the
    stock from its top (the order in which dealing, and dealing again after a redeal, brings them)."""
    w = s[sp[O_NWASTE]]
    if i < w:
        return s[sp[O_WASTE] + i]
    return s[sp[O_STOCK] + s[sp[O_NSTOCK]] - 1 - (i - w)]


@_jit
def stock_macros(s, sp, actions, out, scores, k, min_score, jitter):
    """Add the moves "step through the stock ``steps`` times, then play the waste's top card".

    Encoded as ``action + n_actions * steps``. A step draws ``draw`` cards (fewer when fewer are left)
    or, once the stock is empty, redeals. The stock and waste are one sequence (:func:`sequence_card`)
    with a cut where the waste ends, and the waste's top is the card before the cut: each cut a step can
    reach is reached once, by the fewest steps: within this pass (the cut moves on by ``draw``, the last
    step to the end), else after one redeal (cuts ``draw``, ``2 * draw``, ..., the end); going round
    again gives those cuts again with a redeal fewer. Drawing changes neither tableau nor foundations,
    so where a card can go is read off this position. Returns the new count in ``out`` and how many
    such moves are legal (some may score too low).
    """
    n_legal = 0
    n_actions, piles, draw = sp[SP_N_ACTIONS], sp[SP_PILES], sp[SP_DRAW]
    wrap, kings_only = sp[SP_WRAP] != 0, sp[SP_KINGS_ONLY] != 0
    n_stock, n_waste = s[sp[O_NSTOCK]], s[sp[O_NWASTE]]
    total = n_stock + n_waste
    first_f, first_t, first_e = (sp[A_FIRST + WASTE_TO_FOUNDATION], sp[A_FIRST + WASTE_TO_TABLEAU],
                                 sp[A_FIRST + WASTE_TO_EMPTY])
    empty = first_e >= 0 and core.lowest_empty_pile(s, sp) >= 0
    # Bit sets over cards: what the foundations take, and what builds on some pile's top card.
    accepts, builds = core._foundation_accepts(s, sp), 0
    for p in range(piles):
        top = core.top_card(s, sp, p)
        below = (top % 13 + 12) % 13 if wrap else top % 13 - 1
        if top >= 0 and below >= 0:
            for suit in range(4):
                if core.is_red(suit * 13) != core.is_red(top):
                    builds |= 1 << (suit * 13 + below)
    passes = (n_stock + draw - 1) // draw  # steps to the end of this pass
    after = (total + draw - 1) // draw if redeal_left(s, sp) and total > 0 else 0  # steps after one redeal
    for i in range(passes + after):
        if i < passes:
            cut, steps = min(n_waste + (i + 1) * draw, total), i + 1
        else:
            cut, steps = min((i - passes + 1) * draw, total), i + 2  # the redeal is a step
            if cut == n_waste or (cut > n_waste and ((cut - n_waste) % draw == 0 or cut == total)):
                continue  # this pass reaches it in fewer steps (or it is the waste's top now)
        card = sequence_card(s, sp, cut - 1)
        bit = 1 << card
        into_empty = empty and (not kings_only or card % 13 == KING)
        if not into_empty and (accepts | builds) & bit == 0:
            continue
        for t in range(piles + 2):
            if t == 0:
                a = first_f if accepts & bit else -1
            elif t <= piles:
                a = -1
                if builds & bit:
                    onto = core.top_card(s, sp, t - 1)
                    if onto >= 0 and core.builds_on(card, onto, wrap):
                        a = first_t + t - 1
            else:
                a = first_e if into_empty else -1
            if a < 0:
                continue
            n_legal += 1
            sc = MACRO - steps
            if sc < min_score:
                continue
            if jitter > 0:
                sc += np.random.randint(0, jitter)
            insert_sorted(scores, out, k, sc, a + n_actions * steps)
            k += 1
    return k, n_legal


@_jit
def step_through_stock(s, sp, steps: int) -> None:
    """``steps`` steps through the stock: a draw of ``draw`` cards (fewer when fewer are left), or a
    redeal where the stock has run out: what the same draw and redeal actions do, without looking each
    one up (a macro can stand for dozens). A second copy of those two rules, kept for speed (through
    ``core.apply_action`` the Rainbow search took 15% longer) and checked against the engine by the
    tests (docs/design.md, "Rules kept twice, and checked")."""
    o_stock, o_waste, draw = sp[O_STOCK], sp[O_WASTE], sp[SP_DRAW]
    for _ in range(steps):
        n, w = s[sp[O_NSTOCK]], s[sp[O_NWASTE]]
        if n > 0:
            m = min(n, draw)
            for j in range(m):  # the stock's top card first: the last one dealt ends on top
                s[o_waste + w + j] = s[o_stock + n - 1 - j]
                s[o_stock + n - 1 - j] = 0
            s[sp[O_NSTOCK]] = n - m
            s[sp[O_NWASTE]] = w + m
        else:  # the redeal: the waste turned over, its first card dealt first again
            for j in range(w):
                s[o_stock + j] = s[o_waste + w - 1 - j]
                s[o_waste + w - 1 - j] = 0
            s[sp[O_NSTOCK]] = w
            s[sp[O_NWASTE]] = 0
            if sp[SP_REDEALS] == UNLIMITED:
                s[sp[O_REDEALS]] = 1  # the stock has been seen
            else:
                s[sp[O_REDEALS]] -= 1


@_jit
def apply_move(s, sp, actions, m) -> int:
    """Play search move ``m`` (an action id, or a stock macro: see :func:`stock_macros`); return its last action."""
    n_actions = sp[SP_N_ACTIONS]
    step_through_stock(s, sp, m // n_actions)
    a = m % n_actions
    core.apply_action(s, sp, actions, a)
    return a


# Compiled code here holds the core's and the ordering module's code and variant.py's constants: a cache
# built from other sources is dropped.
drop_stale_cache(__name__)

__all__ = ["MACRO", "apply_move", "redeal_left", "sequence_card", "step_action", "step_through_stock",
           "stock_macros"]
