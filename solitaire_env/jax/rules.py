"""The rules a second time, in ``jax.numpy``: what each action does, the legal mask, a move, the observation.

The same decisions as :mod:`solitaire_env.engine.core` (``tests/test_jax.py`` plays random games on
both and compares every step), written for XLA instead of numba: no data-dependent branches or loops,
every case computed and the right one selected with ``jnp.where``. :func:`resolve` is written once
for any shape of action arrays: for the one action played it gives that move's target and card count,
over the whole action table the legal mask (:func:`legal_mask_reference`). :func:`legal_mask`, the one
the step uses, decides the same per kind of move over piles (a pile pair, a pile and a count), as
``core._legal_mask`` does per source: a few operations an action instead of resolve's fifty and its
gathers, which made the step three times slower on a CPU. Functions take one game (a
:class:`~solitaire_env.jax.layout.Table`); ``jax.vmap`` makes them batched.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from solitaire_env.engine.variant import (
    DRAW,
    HIDDEN,
    MAX_RUN,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
)
from solitaire_env.jax.layout import Layout, Table


def _is(kind: jnp.ndarray, *kinds: int) -> jnp.ndarray:
    out = kind == kinds[0]
    for k in kinds[1:]:
        out = out | (kind == k)
    return out


def is_red(card: jnp.ndarray) -> jnp.ndarray:
    suit = card // 13
    return (suit == 1) | (suit == 2)


def builds_on(card: jnp.ndarray, onto: jnp.ndarray, wrap: bool) -> jnp.ndarray:
    """Tableau building: one rank lower, other colour; with ``wrap`` a King goes on an Ace."""
    r, t = card % 13, onto % 13
    lower = r == (t + 12) % 13 if wrap else r + 1 == t
    return lower & (is_red(card) != is_red(onto))


class PileFacts(NamedTuple):
    """Each pile once (as ``core._pile_facts``), for every action that reads it."""

    top: jnp.ndarray  # (piles,) the top card if face up, else -1
    run: jnp.ndarray  # (piles,) cards in the packed run on top, 0 for an empty pile
    empty: jnp.ndarray  # () the lowest empty pile, -1 if none
    slot_for: jnp.ndarray  # (52,) the lowest foundation slot that takes each card, -1 if none


def pile_facts(layout: Layout, t: Table) -> PileFacts:
    cap = layout.cap
    has_top = t.len > t.down
    top = jnp.where(has_top, jnp.take_along_axis(t.tab, jnp.maximum(t.len - 1, 0)[:, None], axis=1)[:, 0], -1)
    # The run: from the top down while card k + 1 builds on card k. Its bottom is one above the highest
    # break below the top (face-down cards count as breaks), found without a loop.
    k = jnp.arange(cap - 1)
    below_top = k[None, :] < (t.len - 1)[:, None]
    links = builds_on(t.tab[:, 1:], t.tab[:, :-1], layout.wrap) & (k[None, :] >= t.down[:, None])
    bottom = jnp.max(jnp.where(below_top & ~links, k[None, :], -1), axis=1) + 1
    run = jnp.where(has_top, t.len - bottom, 0)
    is_empty = t.len == 0
    empty = jnp.where(is_empty.any(), jnp.argmax(is_empty), -1)
    return PileFacts(top=top, run=run, empty=empty, slot_for=_slot_for(t))


def _slot_for(t: Table) -> jnp.ndarray:
    """``core.foundation_for`` of every card at once: 52 x slots, cheaper than actions x slots."""
    card = jnp.arange(52)[:, None]
    n = t.fcnt[None, :]
    takes = jnp.where(n == 0, card % 13 == t.base,
                      (n < 13) & (t.fsuit[None, :] == card // 13) & (card % 13 == (t.base + n) % 13))
    return jnp.where(takes.any(axis=1), jnp.argmax(takes, axis=1), -1)


def waste_top(t: Table) -> jnp.ndarray:
    return jnp.where(t.nwaste > 0, t.waste[jnp.maximum(t.nwaste - 1, 0)], -1)


def reserve_top(layout: Layout, t: Table) -> jnp.ndarray:
    if not layout.res_cap:
        return jnp.int32(-1)
    return jnp.where((t.nres > 0) & (t.resdown < t.nres), t.res[jnp.maximum(t.nres - 1, 0)], -1)


def resolve(layout: Layout, t: Table, f: PileFacts, kind: jnp.ndarray, src: jnp.ndarray, dst: jnp.ndarray,
            cnt: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``core.resolve`` for action rows ``(kind, src, dst, cnt)`` of any one shape: ``(target, count)``,
    count 0 where the action is not legal. Rows whose source or target index is -1 read pile 0 and
    ignore it."""
    cap = layout.cap
    srcc, dstc = jnp.maximum(src, 0), jnp.maximum(dst, 0)
    n, run, onto = t.len[srcc], f.run[srcc], f.top[dstc]

    def card_at(k: jnp.ndarray) -> jnp.ndarray:  # the k-th card of the source pile, from the bottom
        return t.tab[srcc, jnp.clip(k, 0, cap - 1)]

    from_waste = _is(kind, WASTE_TO_FOUNDATION, WASTE_TO_TABLEAU, WASTE_TO_EMPTY)
    from_res = _is(kind, RESERVE_TO_FOUNDATION, RESERVE_TO_TABLEAU)
    # Between piles the count is the one that fits: the whole pile, or the part of the run ending one
    # rank below the target's top (core.fitting_count).
    fit = n if layout.whole else onto % 13 - card_at(n - 1) % 13
    moved = jnp.where(kind == TABLEAU_TO_EMPTY, cnt, jnp.where(kind == TABLEAU_TO_TABLEAU, fit, 1))
    tab_ok = (run > 0) & jnp.where(
        kind == TABLEAU_TO_EMPTY, (cnt <= run) & (cnt < n),  # a whole pile into an empty one only relabels
        jnp.where(kind == TABLEAU_TO_TABLEAU, (onto >= 0) & (moved >= 1) & (moved <= run), True))
    card = jnp.where(from_waste, waste_top(t), jnp.where(from_res, reserve_top(layout, t), card_at(n - moved)))

    to_found = _is(kind, WASTE_TO_FOUNDATION, RESERVE_TO_FOUNDATION, TABLEAU_TO_FOUNDATION)
    to_pile = _is(kind, WASTE_TO_TABLEAU, RESERVE_TO_TABLEAU, TABLEAU_TO_TABLEAU)
    slot = jnp.where(card >= 0, f.slot_for[jnp.clip(card, 0, 51)], -1)
    lands = jnp.where(to_found, slot >= 0, jnp.where(to_pile, (onto >= 0) & builds_on(card, onto, layout.wrap),
                                                     f.empty >= 0))
    legal = (card >= 0) & lands & (from_waste | from_res | tab_ok)
    if not layout.tab_to_empty:
        legal = legal & (kind != TABLEAU_TO_EMPTY)
    target = jnp.where(to_found, slot, jnp.where(to_pile, dst, f.empty))
    # Stock and waste: a draw takes the stock's top card, a redeal turns the whole waste over.
    legal = jnp.where(kind == DRAW, t.nstock > 0,
                      jnp.where(kind == REDEAL, (t.nstock == 0) & (t.nwaste > 0) & (t.redeals > 0), legal))
    moved = jnp.where(kind == REDEAL, t.nwaste, moved)
    target = jnp.where(_is(kind, DRAW, REDEAL), -1, target)
    return jnp.where(legal, target, -1), jnp.where(legal, moved, 0)


def legal_mask_reference(layout: Layout, t: Table, actions: jnp.ndarray) -> jnp.ndarray:
    """``(n_actions,)`` bool: :func:`resolve` over the whole action table at once (slow; for tests)."""
    _, count = resolve(layout, t, pile_facts(layout, t), actions[:, 0], actions[:, 1], actions[:, 2], actions[:, 3])
    return count > 0


_BLOCKS = (DRAW, REDEAL, WASTE_TO_FOUNDATION, WASTE_TO_TABLEAU, WASTE_TO_EMPTY, RESERVE_TO_FOUNDATION,
           RESERVE_TO_TABLEAU, TABLEAU_TO_FOUNDATION, TABLEAU_TO_TABLEAU, TABLEAU_TO_EMPTY)


def _block_sizes(layout: Layout) -> dict[int, int]:
    p = layout.piles
    sizes = {DRAW: 1, REDEAL: 1, WASTE_TO_FOUNDATION: 1, WASTE_TO_TABLEAU: p, WASTE_TO_EMPTY: 1,
             RESERVE_TO_FOUNDATION: 1, RESERVE_TO_TABLEAU: p, TABLEAU_TO_FOUNDATION: p,
             TABLEAU_TO_TABLEAU: p * p, TABLEAU_TO_EMPTY: p * MAX_RUN}
    return {kind: sizes[kind] for kind in _BLOCKS}


def mask_index(layout: Layout, actions: np.ndarray) -> np.ndarray:
    """For each action id, its entry in :func:`legal_mask`'s blocks (computed on the host from the
    action table): block of its kind, then the source pile, target pile or count within it."""
    start, offset = {}, 0
    for kind, size in _block_sizes(layout).items():
        start[kind], offset = offset, offset + size
    p = layout.piles
    index = np.empty(len(actions), dtype=np.int32)
    for a, (kind, src, dst, cnt) in enumerate(actions):
        within = {WASTE_TO_TABLEAU: dst, RESERVE_TO_TABLEAU: dst, TABLEAU_TO_FOUNDATION: src,
                  TABLEAU_TO_TABLEAU: src * p + dst, TABLEAU_TO_EMPTY: src * MAX_RUN + cnt - 1}.get(int(kind), 0)
        index[a] = start[int(kind)] + within
    return index


def legal_mask(layout: Layout, t: Table, index: np.ndarray) -> jnp.ndarray:
    """``(n_actions,)`` bool, the decisions of :func:`resolve` (tests compare the two) per kind of move;
    ``index``: :func:`mask_index` of the variant's action table."""
    f = pile_facts(layout, t)
    has_top = f.top >= 0
    rank = jnp.where(has_top, f.top % 13, -100)  # far below any rank: no count fits
    red = is_red(f.top)

    def accepts(card: jnp.ndarray) -> jnp.ndarray:
        return (card >= 0) & (f.slot_for[jnp.clip(card, 0, 51)] >= 0)

    def onto_piles(card: jnp.ndarray) -> jnp.ndarray:  # (piles,): the card builds on each pile's top
        return (card >= 0) & has_top & builds_on(card, f.top, layout.wrap)

    w, r = waste_top(t), reserve_top(layout, t)
    if layout.whole:
        # Only whole piles move, and a whole pile is one run: its bottom card onto the target's top.
        tt = (has_top & (f.run == t.len))[:, None] & has_top[None, :] \
            & builds_on(t.tab[:, :1], f.top[None, :], layout.wrap)
    else:
        # Onto pile j goes the part of i's run ending one rank below j's top: k cards, k the rank
        # difference, if 1 <= k <= run. The run alternates colours, so its bottom card has the top's colour
        # for odd k, and must differ in colour from j's top (core._legal_mask does the same).
        k = rank[None, :] - rank[:, None]
        tt = (k >= 1) & (k <= f.run[:, None]) & ((red[:, None] ^ (k % 2 == 1)) == red[None, :])
    counts = jnp.arange(1, MAX_RUN + 1)[None, :]
    te = (f.empty >= 0) & (counts <= f.run[:, None]) & (counts < t.len[:, None])  # not the whole pile
    if not layout.tab_to_empty:
        te = te & False
    blocks = {
        DRAW: t.nstock > 0,
        REDEAL: (t.nstock == 0) & (t.nwaste > 0) & (t.redeals > 0),
        WASTE_TO_FOUNDATION: accepts(w),
        WASTE_TO_TABLEAU: onto_piles(w),
        WASTE_TO_EMPTY: (w >= 0) & (f.empty >= 0),
        RESERVE_TO_FOUNDATION: accepts(r),
        RESERVE_TO_TABLEAU: onto_piles(r),
        TABLEAU_TO_FOUNDATION: accepts(f.top),
        TABLEAU_TO_TABLEAU: tt,
        TABLEAU_TO_EMPTY: te,
    }
    flat = jnp.concatenate([jnp.reshape(blocks[kind], (-1,)) for kind in _BLOCKS])
    return flat[index]


def apply(layout: Layout, t: Table, kind: jnp.ndarray, src: jnp.ndarray, target: jnp.ndarray,
          count: jnp.ndarray) -> Table:
    """``core.apply_action`` of a legal move (``target`` and ``count`` from :func:`resolve`): every part of
    the position computed as if the move touched it, each kept only where it does."""
    cap, piles, s_cap = layout.cap, layout.piles, layout.stock_cap
    from_waste = _is(kind, WASTE_TO_FOUNDATION, WASTE_TO_TABLEAU, WASTE_TO_EMPTY)
    from_res = _is(kind, RESERVE_TO_FOUNDATION, RESERVE_TO_TABLEAU)
    from_tab = _is(kind, TABLEAU_TO_FOUNDATION, TABLEAU_TO_TABLEAU, TABLEAU_TO_EMPTY)
    to_found = _is(kind, WASTE_TO_FOUNDATION, RESERVE_TO_FOUNDATION, TABLEAU_TO_FOUNDATION)
    to_tab = _is(kind, WASTE_TO_TABLEAU, WASTE_TO_EMPTY, RESERVE_TO_TABLEAU, TABLEAU_TO_TABLEAU, TABLEAU_TO_EMPTY)
    draw, redeal = kind == DRAW, kind == REDEAL

    # The cards that move, bottom first: the top `count` of the source pile, or one card.
    n = t.len[jnp.maximum(src, 0)]
    i = jnp.arange(cap)
    run_cards = t.tab[jnp.maximum(src, 0), jnp.clip(n - count + i, 0, cap - 1)]
    single = jnp.where(from_waste, waste_top(t), reserve_top(layout, t))
    moved = jnp.where(from_tab, run_cards, jnp.where(i == 0, single, 0))

    # Stock and waste. A redeal turns the waste over: its first card becomes the stock's top.
    k = jnp.arange(s_cap)
    ns, nw = t.nstock, t.nwaste
    stock = jnp.where(redeal, jnp.where(k < nw, t.waste[jnp.clip(nw - 1 - k, 0, s_cap - 1)], 0),
                      jnp.where(draw & (k == ns - 1), 0, t.stock))
    waste = jnp.where(redeal, 0, jnp.where(draw & (k == nw), t.stock[jnp.maximum(ns - 1, 0)],
                                           jnp.where(from_waste & (k == nw - 1), 0, t.waste)))
    nstock = jnp.where(redeal, nw, ns - draw)
    nwaste = jnp.where(redeal, 0, nw + draw - from_waste)

    # Foundations: a slot's suit is set by its first card.
    slot = (jnp.arange(layout.foundations) == target) & to_found
    fsuit = jnp.where(slot & (t.fcnt == 0), moved[0] // 13, t.fsuit)
    fcnt = t.fcnt + slot

    # Tableau: off the source pile (vacated slots hold 0), onto the target pile (never the source).
    cols = jnp.arange(cap)[None, :]
    from_pile = (jnp.arange(piles) == src) & from_tab
    left = n - count
    tab = jnp.where(from_pile[:, None] & (cols >= left) & (cols < n), 0, t.tab)
    onto_pile = (jnp.arange(piles) == target) & to_tab
    base = t.len[jnp.maximum(target, 0)]
    tab = jnp.where(onto_pile[:, None] & (cols >= base) & (cols < base + count),
                    moved[jnp.clip(cols - base, 0, cap - 1)], tab)
    lens = t.len - jnp.where(from_pile, count, 0) + jnp.where(onto_pile, count, 0)
    # An uncovered face-down card turns up as part of the move.
    down = jnp.where(from_pile & (left > 0) & (t.down >= left), left - 1, t.down)

    res, nres, resdown = t.res, t.nres, t.resdown
    if layout.res_cap:
        # A card leaves the reserve when it is played, or when it refills the pile the move emptied.
        refill = from_tab & (left == 0) & (t.nres > 0) if layout.autofill else False
        take = from_res | refill
        res_card = t.res[jnp.maximum(t.nres - 1, 0)]
        res = jnp.where(take & (jnp.arange(layout.res_cap) == t.nres - 1), 0, t.res)
        nres = t.nres - take
        resdown = jnp.where(take & (nres > 0) & (t.resdown >= nres), nres - 1, t.resdown)  # next card turns up
        refilled = from_pile & refill
        tab = jnp.where(refilled[:, None] & (cols == 0), res_card, tab)
        lens = lens + refilled
    return t._replace(tab=tab, len=lens, down=down, fsuit=fsuit, fcnt=fcnt, stock=stock, nstock=nstock,
                      waste=waste, nwaste=nwaste, res=res, nres=nres, resdown=resdown, redeals=t.redeals - redeal)


def _codes(cards: jnp.ndarray, down: jnp.ndarray, n: jnp.ndarray) -> jnp.ndarray:
    """One stored list as observation codes: ``HIDDEN`` below ``down``, the card's code below ``n``, then 0."""
    k = jnp.arange(cards.shape[-1])
    return jnp.where(k < down, HIDDEN, jnp.where(k < n, cards + 1, 0))


def observe(layout: Layout, t: Table) -> jnp.ndarray:
    """``core.observe``: the ``codes`` observation, ``int16``, laid out by the variant's observation fields."""
    found = jnp.where(t.fcnt > 0, t.fsuit * 13 + (t.base + t.fcnt - 1) % 13 + 1, 0)
    # After a redeal the stock is the turned-over waste, which the player has seen card by card.
    known = t.redeals < layout.redeals
    parts = {
        "tableau": lambda: _codes(t.tab, t.down[:, None], t.len[:, None]).reshape(-1),
        "waste": lambda: _codes(t.waste, 0, t.nwaste),
        "foundations": lambda: found,
        "stock_size": lambda: t.nstock[None],
        "stock": lambda: _codes(t.stock, jnp.where(known, 0, t.nstock), t.nstock),
        "redeals_left": lambda: t.redeals[None],
        "reserve": lambda: _codes(t.res, t.resdown, t.nres),
        "base_rank": lambda: t.base[None],
    }
    # The fields lie end to end in order (Layout.check_contiguous): one concatenation.
    return jnp.concatenate([parts[name]() for name in layout.observation_slices()]).astype(jnp.int16)


def foundation_cards(t: Table) -> jnp.ndarray:
    return jnp.sum(t.fcnt)


def hidden_cards(t: Table) -> jnp.ndarray:
    """Face-down cards on the table (tableau and reserve), as ``core.hidden_cards``."""
    return jnp.sum(t.down) + t.resdown
