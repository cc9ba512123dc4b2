"""Stock macros: "step through the stock k times, then play the waste's new top card" as one search move
(docs/design.md, "Solver proofs: stock macros").

A search move ``m`` is an action id below ``n_actions``, or ``action + n_actions * steps`` for a macro.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solitaire_env.engine import core
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    A_FIRST,
    DRAW,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_STOCK,
    O_WASTE,
    REDEAL,
    SP_N_ACTIONS,
    SP_PILES,
    SP_WRAP,
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
def stock_macros(s, sp, actions, out, scores, k, min_score, jitter):
    """Add the moves "step through the stock ``steps`` times, then play the waste's top card".

    Encoded as ``action + n_actions * steps``. Each card of the stock and waste is reached once, by
    the fewest steps: going round again after a redeal gives the same layout with a redeal fewer.
    Drawing changes neither tableau nor foundations, so where a card can go is read off this
    position, card by card down the stock (and, past a redeal, up the waste as it was).
    Returns the new count in ``out`` and how many such moves are legal (some may score too low).
    """
    n_legal = 0
    n_actions, piles = sp[SP_N_ACTIONS], sp[SP_PILES]
    wrap = sp[SP_WRAP] != 0
    n_stock, n_waste = s[sp[O_NSTOCK]], s[sp[O_NWASTE]]
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
    after_redeal = n_waste - 1 if sp[A_FIRST + REDEAL] >= 0 and s[sp[O_REDEALS]] > 0 else 0
    for i in range(n_stock + max(0, after_redeal)):
        if i < n_stock:
            card, steps = s[sp[O_STOCK] + n_stock - 1 - i], i + 1
        else:  # after the redeal the old waste comes again from its bottom card
            card, steps = s[sp[O_WASTE] + i - n_stock], i + 2
        bit = 1 << card
        if not empty and (accepts | builds) & bit == 0:
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
                a = first_e if empty else -1
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
    """``steps`` draws, with a redeal where the stock runs out: what the same draw and redeal actions do,
    without looking each one up (a macro can stand for dozens). A second copy of those two rules, kept
    for speed (through ``core.apply_action`` the Rainbow search took 15% longer) and checked against
    the engine by the tests (docs/design.md, "Rules kept twice, and checked")."""
    o_stock, o_waste = sp[O_STOCK], sp[O_WASTE]
    for _ in range(steps):
        n, w = s[sp[O_NSTOCK]], s[sp[O_NWASTE]]
        if n > 0:
            s[o_waste + w] = s[o_stock + n - 1]
            s[o_stock + n - 1] = 0
            s[sp[O_NSTOCK]] = n - 1
            s[sp[O_NWASTE]] = w + 1
        else:  # the redeal: the waste turned over, its first card dealt first again
            for k in range(w):
                s[o_stock + k] = s[o_waste + w - 1 - k]
                s[o_waste + w - 1 - k] = 0
            s[sp[O_NSTOCK]] = w
            s[sp[O_NWASTE]] = 0
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

__all__ = ["MACRO", "apply_move", "step_action", "step_through_stock", "stock_macros"]
