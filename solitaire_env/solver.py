"""A perfect-information solver for all three games: can this deal be won at all?

It sees every card (face-down cards and the stock order included), so it answers a different
question from the agents: the ceiling any player could reach. It runs on the engine core
(:mod:`solitaire_env.engine.core`): the same legal moves, the same move application, no second copy of
the rules.

The search
----------
Depth-first search over positions, iterative (an explicit stack of positions), compiled with numba:

* **Transposition table.** Every position reached is stored as a 64-bit key in an open-addressing
  hash table and never expanded twice. The key is canonical: tableau piles are hashed one by one and
  the pile hashes *added*, so two positions that differ only by the order of piles (the game cannot
  tell them apart: moves to empty piles take the lowest-numbered one) get the same key; foundations
  are hashed as a set the same way. A key collision could merge two different positions; with 64-bit
  keys and at most ~10^8 stored positions the chance is about 10^-3 over a whole solve even then,
  and it could only turn a ``won`` into a missed win (``lost``/``unknown``), never produce a wrong
  solution, because every solution is replayed through the engine.
* **Safe foundation moves** are played at once, without branching (:func:`_play_safe_moves`; under
  stock dominance, the waste's top card is left to the search).
* **Move ordering**: foundation moves, then moves that turn a face-down card up (from the pile with
  most face-down cards first), moves that empty a pile, reserve and waste cards onto the tableau,
  drawing, and last the moves that only rearrange face-up cards (:func:`_move_score`).
* **After a plain draw** (optional, ``prune_after_draw``): only stock and waste moves. A draw or
  redeal that played nothing changed neither tableau nor reserve, so a table move ``t`` after it
  reaches what ``t`` then the same draw reaches from the position before; by induction on the order
  positions are first reached, that one is searched too, even when the table already held the
  position after the draw. Fewer positions are generated; the distinct positions stay the same.
* **Stock macros** (``stock_macros``, the default for Rainbow): no single draws; instead one move
  "step through the stock k times (drawing, and redealing once the stock is empty), then play the
  waste's new top card" for every card of the stock and waste and every place it can go
  (:func:`_stock_macros`). Complete: draws and redeals change only stock and waste, and no table move
  reads or changes them, so in any winning line each run of draws can be moved to just before the
  waste play it leads to (a won game ends with the stock and waste empty, so there is one); and a
  card reached again after a redeal lies where it lay before, with a redeal fewer, so the fewest
  steps to each card are enough. Only the positions after a play are stored, not the ones in between
  draws. They are tried where the draws they stand for were (a score of 400 less one a step: the
  nearest card first).
* **Stock dominance** (with stock macros, ``stock_dominance``): positions that differ only in where
  the stock has got to are ranked, and one is skipped when one at least as good is stored. The stock
  and waste together are one sequence of cards (waste from its bottom, stock from its top; dealing and
  redealing keep it) with a cut where the waste ends. Position Q *dominates* P when everything else
  is the same and Q has more redeals left, or as many and fewer cards dealt to the waste. Then every
  move of P is matched by one of Q with a result that dominates or equals P's: a table move is the
  same move; a macro or waste play of card c reaches c from Q too, by dealing on (same redeals, c
  at the same place of the cut), or, where c lies before Q's cut, through a redeal Q can spare (P's
  move came through one too, or P has fewer redeals left). So whatever wins from P wins from Q in as
  many moves, and the table's induction goes through: of the stored positions from which a win is
  reachable, take the one with the shortest win; its winning child is stored, or skipped for a stored
  position that wins as fast; either way a shorter win, a contradiction. The table keeps one key per
  layout (:func:`_layout_key`) and the best rank stored for it (:func:`_insert_dominant`); a better
  position replaces the rank and is searched. For the matching to be exact, the safe moves played at
  once do not include the waste's top card here (Q and P show different waste cards): it goes up as
  an ordinary move, tried first. It halves the positions of Rainbow's proofs (deal 604: 0.52M -> 0.27M,
  the 77,873 distinct layouts stored once each; deal 440: 19.4M -> 10.1M).
* **Agent guidance** (``agent_guidance``, the default for the two-deck games): the restarts of
  :func:`solve` borrow the heuristic agent's judgement, which wins some deals that the solver's own
  move order misses. Every other restart orders moves by the agent's rules
  (:func:`_agent_move_score`: a waste card onto a pile before turning a face-down card, foundation
  moves that are not safe late, drawing only when nothing else makes progress). Between restarts the
  agent with some noise (:func:`agents.heuristic.playout`) plays whole games from the start: it
  sees only what a player sees, so a playout is a cheap and different line through the deal; when
  one wins, its moves are the answer. And every few restarts comes a *rollout* (:func:`rollout`,
  with every card known): at each move, every legal move is tried and followed by a greedy line in
  the agent's order that never returns to a position it has seen; the move whose line gets furthest
  is played. None of these changes what a complete search proves.
* **Limits**: a node limit, a time limit (the compiled search runs in slices; Python checks the
  clock between them), a memory limit (the table's size), and a depth limit. Hitting any of them
  gives ``unknown``; ``lost`` means the whole reachable space was searched.

Why a safe move can never hurt
------------------------------
A card ``c`` of foundation position ``p`` (its rank counted from the base rank: the Ace is 0 in the
two-deck games) may go to the foundations at once when **nothing could ever be built on it in the
tableau**: ``p == 0`` without wrapping (nothing goes on an Ace), or every card of position ``p - 1``
in the other colour is already on the foundations (those are the only cards that can be built on
``c``; foundation cards never come back). Take any winning line from the position before the
move; change it by playing ``c`` to its foundation first and leaving out every later move of ``c``
itself. Every other move of the line stays legal: no move in it puts a card on ``c``; a move that
carried ``c`` on top of a run carries the same run without ``c``, which has the same bottom card and
is a packed run in its own right (and is still the whole pile where only whole piles move); a card
waiting under ``c`` is only reachable sooner. The one thing that happens earlier than in the
original line is the automatic part of a move: a face-down card turning up (never a loss), or, in
Rainbow, an emptied pile being refilled from the reserve. The refill never loses options either:
the reserve's top card as a one-card pile can still go to a foundation or onto another pile (a
whole-pile move), it can take cards on it, and the next reserve card comes free sooner. So the
changed line wins too, and nothing is lost by playing ``c`` at once.

>>> from solitaire_env.solver import solve
>>> result = solve("rainbow", seed=3, time_limit=10)
>>> result.result, len(result.moves or [])   # doctest: +SKIP
('won', 118)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from solitaire_env.engine import core, state
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.jit_cache import drop_stale_cache
from solitaire_env.engine.variant import (
    A_FIRST,
    DRAW,
    O_BASE,
    O_DOWN,
    O_FCNT,
    O_FSUIT,
    O_LEN,
    O_NRES,
    O_NSTOCK,
    O_NWASTE,
    O_REDEALS,
    O_RESDOWN,
    O_STOCK,
    O_TAB,
    O_WASTE,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    SP_CAP,
    SP_FOUND,
    SP_N_ACTIONS,
    SP_NCARDS,
    SP_PILES,
    SP_REDEALS,
    SP_WHOLE,
    SP_WRAP,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    Variant,
)

_jit = njit(cache=True, nogil=True)

# Search status codes (regs[R_STATUS]).
RUNNING, WON, EXHAUSTED, MEMORY = 0, 1, 2, 3
# Registers of a search, kept in one int64 array so a search can stop and resume.
R_DEPTH, R_NODES, R_STORED, R_STATUS, R_DEPTH_HIT, R_BEST, R_STARTED, R_PRUNED = range(8)
N_REGS = 8

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_PRIME = np.uint64(0x100000001B3)


@_jit
def _mix(x):
    """splitmix64's finaliser: a well-spread 64-bit value from any 64-bit value."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@_jit
def state_key(s, sp) -> np.uint64:
    """The position's canonical 64-bit key: piles and foundations hashed as sets (never 0)."""
    total, h = _key_parts(s, sp)
    return _with_redeals(total, h, s[sp[O_REDEALS]])


@_jit
def _with_redeals(total, h, redeals: int) -> np.uint64:
    """The key from its parts (see :func:`state_key`) and the redeals left, which come last."""
    key = _mix(total ^ _mix(h * _PRIME + np.uint64(redeals + 1)))
    return key if key != 0 else np.uint64(1)


@_jit
def _key_parts(s, sp):
    """``state_key`` without the redeals: (pile and foundation sum, the rest), to try other counts cheaply."""
    piles, cap = sp[SP_PILES], sp[SP_CAP]
    total = np.uint64(0)
    for p in range(piles):
        n = s[sp[O_LEN] + p]
        h = np.uint64(n * 64 + s[sp[O_DOWN] + p] + 1)
        base = sp[O_TAB] + p * cap
        for k in range(n):
            h = h * _PRIME + np.uint64(s[base + k] + 1)
        total += _mix(h)
    for f in range(sp[SP_FOUND]):
        n = s[sp[O_FCNT] + f]
        suit = s[sp[O_FSUIT] + f] if n > 0 else 0
        total += _mix(np.uint64(0x5000 + suit * 16 + n))
    # Stock, waste and reserve: positional.
    h = np.uint64(s[sp[O_NSTOCK]] + 1)
    for k in range(s[sp[O_NSTOCK]]):
        h = h * _PRIME + np.uint64(s[sp[O_STOCK] + k] + 1)
    h = h * _PRIME + np.uint64(s[sp[O_NWASTE]] + 7)
    for k in range(s[sp[O_NWASTE]]):
        h = h * _PRIME + np.uint64(s[sp[O_WASTE] + k] + 1)
    h = h * _PRIME + np.uint64(s[sp[O_NRES]] * 64 + s[sp[O_RESDOWN]] + 1)
    return total, h


@_jit
def _table_insert(table, key) -> int:
    """1 if ``key`` was new (now stored), 0 if it was there already."""
    mask = np.uint64(table.shape[0] - 1)
    i = key & mask
    while table[i] != 0:
        if table[i] == key:
            return 0
        i = (i + np.uint64(1)) & mask
    table[i] = key
    return 1


@_jit
def _table_has(table, key) -> bool:
    mask = np.uint64(table.shape[0] - 1)
    i = key & mask
    while table[i] != 0:
        if table[i] == key:
            return True
        i = (i + np.uint64(1)) & mask
    return False


@_jit
def _insert_undominated(table, s, sp) -> bool:
    """Store the position and return True, unless it or the same position with more redeals left is stored.

    More redeals left is never worse (a redeal is never forced), so a stored position with more of them
    covers this one: whatever wins from here wins from there by the same moves.
    """
    total, h = _key_parts(s, sp)
    r = s[sp[O_REDEALS]]
    for more in range(r + 1, sp[SP_REDEALS] + 1):
        if _table_has(table, _with_redeals(total, h, more)):
            return False
    return _table_insert(table, _with_redeals(total, h, r)) == 1


@_jit
def _layout_key(s, sp) -> np.uint64:
    """The key of everything but where the stock has got to: the stock and waste as one sequence
    (waste from its bottom, then the stock from its top), without the redeals left (never 0)."""
    total, _ = _key_parts(s, sp)
    n, w = s[sp[O_NSTOCK]], s[sp[O_NWASTE]]
    h = np.uint64(n + w + 1)
    for k in range(w):
        h = h * _PRIME + np.uint64(s[sp[O_WASTE] + k] + 1)
    for k in range(n - 1, -1, -1):
        h = h * _PRIME + np.uint64(s[sp[O_STOCK] + k] + 1)
    h = h * _PRIME + np.uint64(s[sp[O_NRES]] * 64 + s[sp[O_RESDOWN]] + 1)
    key = _mix(total ^ _mix(h))
    return key if key != 0 else np.uint64(1)


@_jit
def _insert_dominant(table, best, s, sp) -> int:
    """Stock dominance: 0 if a position at least as good is stored, else store this one (1: new, 2: better).

    Positions that differ only in where the stock has got to are ranked: more redeals left is better,
    and with as many, fewer cards dealt to the waste (the one can deal on to where the other is, or
    redeal and deal to anywhere). ``best`` holds the best rank stored for each layout key.
    """
    rank = s[sp[O_REDEALS]] * 128 + 127 - s[sp[O_NWASTE]]
    key = _layout_key(s, sp)
    mask = np.uint64(table.shape[0] - 1)
    i = key & mask
    while table[i] != 0:
        if table[i] == key:
            if best[i] >= rank:
                return 0
            best[i] = rank
            return 2
        i = (i + np.uint64(1)) & mask
    table[i] = key
    best[i] = rank
    return 1


@_jit
def _is_safe(s, sp, card: int) -> bool:
    """True if ``card`` can go to the foundations and nothing could ever be built on it (see module doc)."""
    if core.foundation_for(s, sp, card) < 0:
        return False
    base = s[sp[O_BASE]]
    p = (card % 13 - base) % 13
    if p == 0:
        return sp[SP_WRAP] == 0
    decks = sp[SP_NCARDS] // 52
    red = core.is_red(card)
    below = 0  # copies of position p - 1 in the other colour already on the foundations
    for f in range(sp[SP_FOUND]):
        suit = s[sp[O_FSUIT] + f]
        n = s[sp[O_FCNT] + f]
        if n >= p and core.is_red(suit * 13) != red:
            below += 1
    return below >= 2 * decks


@_jit
def _play_safe_moves(s, sp, actions, record, n_record, waste) -> int:
    """Play safe foundation moves until none is left; append their action ids to ``record``.

    ``waste``: the waste's top card too (not under stock dominance: see :func:`_insert_dominant`).
    """
    progress = True
    while progress:
        progress = False
        card = core.waste_top(s, sp) if waste else -1
        if card >= 0 and _is_safe(s, sp, card):
            a = sp[A_FIRST + WASTE_TO_FOUNDATION]
            core.apply_action(s, sp, actions, a)
            record[n_record] = a
            n_record += 1
            progress = True
            continue
        if sp[A_FIRST + RESERVE_TO_FOUNDATION] >= 0:
            card = core.reserve_top(s, sp)
            if card >= 0 and _is_safe(s, sp, card):
                a = sp[A_FIRST + RESERVE_TO_FOUNDATION]
                core.apply_action(s, sp, actions, a)
                record[n_record] = a
                n_record += 1
                progress = True
                continue
        for p in range(sp[SP_PILES]):
            card = core.top_card(s, sp, p)
            if card >= 0 and _is_safe(s, sp, card):
                a = sp[A_FIRST + TABLEAU_TO_FOUNDATION] + p
                core.apply_action(s, sp, actions, a)
                record[n_record] = a
                n_record += 1
                progress = True
                break
    return n_record


@_jit
def _deadlocked(s, sp) -> bool:
    """A pile that can never be cleared, in games where piles never split (Rainbow).

    There a tableau card leaves its pile only from the top, to a foundation (moving the whole pile
    onto another keeps the order, and tableau cards never go into an empty pile). So a card lying
    under a card of its own suit that the foundation needs *later* can never get out in time: the
    position is lost, whatever else happens. (A general cycle test over "must come first" relations
    across piles was tried: it cut few more positions and cost more than it saved.)
    """
    if sp[SP_WHOLE] == 0:
        return False
    base, cap = s[sp[O_BASE]], sp[SP_CAP]
    for p in range(sp[SP_PILES]):
        n = s[sp[O_LEN] + p]
        start = sp[O_TAB] + p * cap
        for i in range(n - 2):
            low = s[start + i]
            pos = (low % 13 - base) % 13
            for j in range(i + 2, n, 2):  # runs alternate colours: same suit only at even distance
                high = s[start + j]
                if high // 13 == low // 13 and (high % 13 - base) % 13 > pos:
                    return True
    return False


@_jit
def _move_score(s, sp, actions, a: int) -> int:
    """How promising action ``a`` looks (higher is tried first); it must be legal."""
    kind, src = actions[a, 0], actions[a, 1]
    if kind == WASTE_TO_FOUNDATION or kind == RESERVE_TO_FOUNDATION or kind == TABLEAU_TO_FOUNDATION:
        return 1000
    if kind == DRAW:
        return 400
    if kind == REDEAL:
        return 300
    if kind == RESERVE_TO_TABLEAU:
        return 700
    if kind == WASTE_TO_TABLEAU:
        return 600
    if kind == WASTE_TO_EMPTY:
        return 350
    # A tableau run moving to another pile or into an empty pile.
    count = core.resolve(s, sp, actions, a)[1]
    n = s[sp[O_LEN] + src]
    down = s[sp[O_DOWN] + src]
    if count == n - down and down > 0:
        return 800 + down  # turns a card up: the pile with most face-down cards first
    if count == n:
        return 750  # empties a pile
    left = n - count - down  # face-up cards still above the face-down ones (or the pile's bottom)
    if count == core.run_length(s, sp, src):
        # The whole top run goes: a step towards a face-down card or an empty pile (in Number Ten,
        # the dealt face-up cards need not form a run). Fewer cards left to shift: better.
        return max(310, (420 if kind == TABLEAU_TO_EMPTY else 480) - 10 * left)
    if kind == TABLEAU_TO_EMPTY:
        return 100
    # Rearranging face-up cards: worth it when it frees a card for the foundations.
    exposed = core.pile_card(s, sp, src, n - count - 1)
    if core.foundation_for(s, sp, exposed) >= 0:
        return 500
    return 200


@_jit
def _agent_move_score(s, sp, actions, a: int) -> int:
    """Like :func:`_move_score`, in the order of the heuristic agent's rules (:mod:`agents.heuristic`).

    Safe foundation moves are played before any move is scored. Then: the reserve; the waste's top
    card onto a pile (the pile with fewest face-down cards); moves that turn a face-down card up,
    into an empty pile last; emptying a pile; the foundation moves that are not safe, low ranks first
    (the card may still be needed to build on); a King (or, once the stock is out, any card) from
    the waste into an empty pile; drawing; and last the rearrangements, scored as by
    :func:`_move_score`.
    """
    kind, src, dst = actions[a, 0], actions[a, 1], actions[a, 2]
    if kind == RESERVE_TO_TABLEAU or kind == RESERVE_TO_FOUNDATION:
        return 950
    if kind == WASTE_TO_TABLEAU:
        return 920 - s[sp[O_DOWN] + dst]
    if kind == DRAW:
        return 320
    if kind == REDEAL:
        return 305
    if kind == WASTE_TO_FOUNDATION:
        return 580 - core.waste_top(s, sp) % 13
    if kind == WASTE_TO_EMPTY:
        return 550 if core.waste_top(s, sp) % 13 == 12 or s[sp[O_NSTOCK]] == 0 else 315
    n = s[sp[O_LEN] + src]
    down = s[sp[O_DOWN] + src]
    if kind == TABLEAU_TO_FOUNDATION:
        if n - 1 == down and down > 0:
            return 900 + down  # turns a card up
        return 580 - core.top_card(s, sp, src) % 13
    count = core.resolve(s, sp, actions, a)[1]
    if count == n - down and down > 0:
        if kind == TABLEAU_TO_EMPTY:
            return 850 + down
        return 880 + 2 * down - s[sp[O_DOWN] + dst]  # from the pile with most face-down cards
    if count == n:
        return 700
    left = n - count - down
    if count == core.run_length(s, sp, src):
        # Into an empty pile without turning a card up: the agent never does that (below the cut of
        # the restarts, :data:`PROMISING`).
        return max(310, 480 - 10 * left) if kind != TABLEAU_TO_EMPTY else 100
    if kind == TABLEAU_TO_EMPTY:
        return 100
    exposed = core.pile_card(s, sp, src, n - count - 1)
    if core.foundation_for(s, sp, exposed) >= 0:
        return 500
    return 200


@_jit
def _uses_stock(kind: int) -> bool:
    """Whether a move of this kind involves the stock or the waste."""
    return kind == DRAW or kind == REDEAL or kind == WASTE_TO_FOUNDATION or kind == WASTE_TO_TABLEAU \
        or kind == WASTE_TO_EMPTY


@_jit
def _step_action(s, sp) -> int:
    """The action that steps through the stock here: a draw, or a redeal once it is empty (-1: no redeals)."""
    return sp[A_FIRST + DRAW] if s[sp[O_NSTOCK]] > 0 else sp[A_FIRST + REDEAL]


@_jit
def _insert(scores, out, k, sc, m) -> None:
    """Put move ``m`` with score ``sc`` into the first ``k`` entries, kept best first (stable)."""
    j = k
    while j > 0 and scores[j - 1] < sc:
        scores[j] = scores[j - 1]
        out[j] = out[j - 1]
        j -= 1
    scores[j] = sc
    out[j] = m


# A macro scores as the draws it stands for did (400), less one a step: the same order as drawing one
# card at a time, playing what comes up, and then drawing on. Its play breaks ties (foundation first).
_MACRO = 400


@_jit
def _stock_macros(s, sp, actions, out, scores, k, min_score, jitter):
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
            sc = _MACRO - steps
            if sc < min_score:
                continue
            if jitter > 0:
                sc += np.random.randint(0, jitter)
            _insert(scores, out, k, sc, a + n_actions * steps)
            k += 1
    return k, n_legal


@_jit
def _order_moves(s, sp, actions, mask, out, min_score, regs, jitter, stock_only, macros, scores, agent_order) -> int:
    """Write the legal actions scoring at least ``min_score`` into ``out``, best first; return how many.

    With ``stock_only``, only the moves that involve the stock or the waste (the others are searched
    from the position before the draw: see :func:`_search`). Sets ``regs[R_PRUNED]`` when a legal
    move was left out otherwise: the search is then no proof of a loss.
    """
    n_legal = core.legal_mask(s, sp, actions, mask)
    k = 0
    for a in range(sp[SP_N_ACTIONS]):
        if mask[a]:
            kind = actions[a, 0]
            if (stock_only and not _uses_stock(kind)) or (macros and (kind == DRAW or kind == REDEAL)):
                n_legal -= 1  # searched elsewhere: from the position before the draw, or as a macro
                continue
            sc = _agent_move_score(s, sp, actions, a) if agent_order else _move_score(s, sp, actions, a)
            if sc < min_score:
                continue
            if jitter > 0:
                sc += np.random.randint(0, jitter)
            _insert(scores, out, k, sc, a)
            k += 1
    if k < n_legal:
        regs[R_PRUNED] = 1
    if macros:
        k2, n_all = _stock_macros(s, sp, actions, out, scores, k, min_score, jitter)
        if k2 < k + n_all:
            regs[R_PRUNED] = 1
        k = k2
    return k


@_jit
def _step_through_stock(s, sp, steps: int) -> None:
    """``steps`` draws, with a redeal where the stock runs out: what the same draw and redeal actions do,
    without looking each one up (a macro can stand for dozens)."""
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
def _apply_move(s, sp, actions, m) -> int:
    """Play search move ``m`` (an action id, or a stock macro: see :func:`_stock_macros`); return its last action."""
    n_actions = sp[SP_N_ACTIONS]
    _step_through_stock(s, sp, m // n_actions)
    a = m % n_actions
    core.apply_action(s, sp, actions, a)
    return a


@_jit
def _search(s0, sp, actions, table, max_load, states, moves, n_moves, next_move, regs, budget, scratch, mask,
            min_score, jitter, seed, prune_after_draw, macros, scores, agent_order, dominance, best) -> None:
    """Run the depth-first search for at most ``budget`` nodes, resuming from ``regs``."""
    n_cards = sp[SP_NCARDS]
    max_depth = states.shape[0]
    if regs[R_STARTED] == 0:
        regs[R_STARTED] = 1
        if jitter > 0:
            np.random.seed(seed)
        states[0, :] = s0
        _play_safe_moves(states[0], sp, actions, scratch, 0, not dominance)
        regs[R_BEST] = core.foundation_cards(states[0], sp)
        if regs[R_BEST] == n_cards:
            regs[R_STATUS] = WON
            return
        if dominance:
            _insert_dominant(table, best, states[0], sp)
        else:
            _table_insert(table, state_key(states[0], sp))
        regs[R_STORED] = 1
        n_moves[0] = _order_moves(states[0], sp, actions, mask, moves[0], min_score, regs, jitter, False, macros,
                                  scores, agent_order)
        next_move[0] = 0
        regs[R_DEPTH] = 0
    done = 0
    while done < budget:
        d = regs[R_DEPTH]
        if next_move[d] >= n_moves[d]:
            if d == 0:
                regs[R_STATUS] = EXHAUSTED
                return
            regs[R_DEPTH] = d - 1
            continue
        m = moves[d, next_move[d]]
        next_move[d] += 1
        if d + 1 >= max_depth:
            regs[R_DEPTH_HIT] = 1
            continue
        child = states[d + 1]
        parent = states[d]
        for i in range(parent.shape[0]):  # an explicit loop: numba's slice copy costs 20 times as much here
            child[i] = parent[i]
        a = _apply_move(child, sp, actions, m)
        _play_safe_moves(child, sp, actions, scratch, 0, not dominance)
        done += 1
        regs[R_NODES] += 1
        found = core.foundation_cards(child, sp)
        if found > regs[R_BEST]:
            regs[R_BEST] = found
        if found == n_cards:
            regs[R_DEPTH] = d + 1
            regs[R_STATUS] = WON
            return
        if dominance:
            new = _insert_dominant(table, best, child, sp)
        elif macros:
            new = 1 if _insert_undominated(table, child, sp) else 0
        else:
            new = _table_insert(table, state_key(child, sp))
        if new == 0 or _deadlocked(child, sp):
            continue
        if new == 1:
            regs[R_STORED] += 1
        if regs[R_STORED] >= max_load:
            regs[R_STATUS] = MEMORY
            return
        # A draw or redeal that played nothing to the foundations left the tableau and reserve as they
        # were: a move among them from here leads where the same move followed by this draw leads
        # from the position before it, which the search covers there. Only stock and waste moves are new.
        kind = actions[a, 0]
        plain_draw = (kind == DRAW or kind == REDEAL) and found == core.foundation_cards(states[d], sp)
        stock_only = prune_after_draw and plain_draw
        n_moves[d + 1] = _order_moves(child, sp, actions, mask, moves[d + 1], min_score, regs, jitter,
                                      stock_only, macros, scores, agent_order)
        next_move[d + 1] = 0
        regs[R_DEPTH] = d + 1


@_jit
def _replay_path(s0, sp, actions, path, n_path, out, waste) -> int:
    """The full action list of a search path: safe moves played between the chosen ones included."""
    s = s0.copy()
    n = _play_safe_moves(s, sp, actions, out, 0, waste)
    for i in range(n_path):
        for _ in range(path[i] // sp[SP_N_ACTIONS]):
            out[n] = _step_action(s, sp)
            core.apply_action(s, sp, actions, out[n])
            n += 1
        out[n] = path[i] % sp[SP_N_ACTIONS]
        core.apply_action(s, sp, actions, out[n])
        n = _play_safe_moves(s, sp, actions, out, n + 1, waste)
    return n


# --- rollouts: a greedy player, and one-move look-ahead over it --------------------------------------

# A rollout's moves and recorded actions are bounded (see :func:`_greedy`); this leaves room for both.
ROLLOUT_BUFFER = 20_000
_VISITED = 1 << 14  # positions a greedy line remembers, to never return to one


@_jit
def _visit(keys, stamps, gen, key) -> bool:
    """Add ``key`` to the set stamped ``gen`` (older stamps count as empty); False if it was there."""
    mask = np.uint64(keys.shape[0] - 1)
    i = key & mask
    for _ in range(keys.shape[0]):
        if stamps[i] != gen:
            keys[i] = key
            stamps[i] = gen
            return True
        if keys[i] == key:
            return False
        i = (i + np.uint64(1)) & mask
    return False


@_jit
def _seen(keys, stamps, key) -> bool:
    """Whether ``key`` is in the set stamped 1 (the rollout's own line)."""
    mask = np.uint64(keys.shape[0] - 1)
    i = key & mask
    while stamps[i] == 1:
        if keys[i] == key:
            return True
        i = (i + np.uint64(1)) & mask
    return False


@_jit
def _progress(s, sp) -> int:
    """Foundation cards first, then face-down cards turned up, then cards dealt: each only ever grows."""
    return core.foundation_cards(s, sp) * 10000 - core.hidden_cards(s, sp) * 100 - s[sp[O_NSTOCK]]


@_jit
def _greedy(s, sp, actions, mask, scores, t, keys, stamps, gen, patience, jitter, out, n_out):
    """Play from ``s`` (in place) the best move by :func:`_agent_move_score` that leads to a position not
    seen on this line, until no move does or ``patience`` moves in a row made no :func:`_progress`.

    Appends the actions to ``out`` (safe moves included). Returns (foundation cards, new ``n_out``,
    moves played). Since progress can only grow about 200 times, a line has at most about
    200 * (patience + 1) moves.
    """
    n_actions = sp[SP_N_ACTIONS]
    last, idle, played = _progress(s, sp), 0, 0
    while core.foundation_cards(s, sp) < sp[SP_NCARDS] and core.legal_mask(s, sp, actions, mask) > 0:
        k = 0
        for a in range(n_actions):
            scores[a] = -1
            if mask[a]:
                scores[a] = _agent_move_score(s, sp, actions, a) + (np.random.randint(0, jitter) if jitter else 0)
                k += 1
        moved = False
        for _ in range(k):
            b = np.argmax(scores)
            scores[b] = -1
            for i in range(s.shape[0]):
                t[i] = s[i]
            core.apply_action(t, sp, actions, b)
            if _visit(keys, stamps, gen, state_key(t, sp)):
                for i in range(s.shape[0]):
                    s[i] = t[i]
                out[n_out] = b
                n_out = _play_safe_moves(s, sp, actions, out, n_out + 1, True)
                moved = True
                break
        if not moved:
            break
        played += 1
        p = _progress(s, sp)
        if p > last:
            last, idle = p, 0
        else:
            idle += 1
            if idle > patience:
                break
    return core.foundation_cards(s, sp), n_out, played


@_jit
def _rollout(s0, sp, actions, patience, jitter, seed, out):
    """One rollout from ``s0``: each move, try every legal move followed by a :func:`_greedy` line, and
    play the one whose line gets furthest (most foundation cards, then fewest face-down cards, then
    :func:`_agent_move_score`); stop at a won line, or as :func:`_greedy` stops.

    Returns (won, actions written to ``out``, positions played, most foundation cards reached).
    """
    np.random.seed(seed)
    n_actions, n_cards = sp[SP_N_ACTIONS], sp[SP_NCARDS]
    mask, line_mask = np.zeros(n_actions, dtype=np.int8), np.zeros(n_actions, dtype=np.int8)
    scores = np.zeros(n_actions, dtype=np.int64)
    line = np.zeros(ROLLOUT_BUFFER, dtype=np.int16)
    keys, stamps = np.zeros(_VISITED, dtype=np.uint64), np.zeros(_VISITED, dtype=np.int32)
    main_keys, main_stamps = np.zeros(_VISITED, dtype=np.uint64), np.zeros(_VISITED, dtype=np.int32)
    s, t, u = s0.copy(), s0.copy(), s0.copy()
    n_out = _play_safe_moves(s, sp, actions, out, 0, True)
    _visit(main_keys, main_stamps, 1, state_key(s, sp))
    gen, nodes, best = 1, 0, core.foundation_cards(s, sp)
    last, idle = _progress(s, sp), 0
    while best < n_cards and core.legal_mask(s, sp, actions, mask) > 0:
        best_value, best_a = -1, -1
        for a in range(n_actions):
            if not mask[a]:
                continue
            for i in range(s.shape[0]):
                t[i] = s[i]
            line[0] = a
            core.apply_action(t, sp, actions, a)
            n_line = _play_safe_moves(t, sp, actions, line, 1, True)
            key = state_key(t, sp)
            if _seen(main_keys, main_stamps, key):  # never back to a position of the line
                continue
            score = _agent_move_score(s, sp, actions, a)
            gen += 1
            found, n_line, played = _greedy(t, sp, actions, line_mask, scores, u, keys, stamps, gen, patience, jitter,
                                            line, n_line)
            nodes += played + 1
            if found == n_cards:
                for i in range(n_line):
                    out[n_out + i] = line[i]
                return True, n_out + n_line, nodes, found
            best = max(best, found)
            value = (found * 1000 - core.hidden_cards(t, sp) * 10) * 10000 + score
            if value > best_value:
                best_value, best_a = value, a
        if best_a < 0:
            break
        out[n_out] = best_a
        core.apply_action(s, sp, actions, best_a)
        n_out = _play_safe_moves(s, sp, actions, out, n_out + 1, True)
        _visit(main_keys, main_stamps, 1, state_key(s, sp))
        p = _progress(s, sp)
        if p > last:
            last, idle = p, 0
        else:
            idle += 1
            if idle > patience:
                break
    return core.foundation_cards(s, sp) == n_cards, n_out, nodes, best


# --- Python face -----------------------------------------------------------------------------------


@dataclass
class SolveResult:
    """The answer for one position.

    ``result`` is ``"won"`` (``moves`` is a winning list of action ids from the position),
    ``"lost"`` (no sequence of moves wins) or ``"unknown"`` (a limit was hit first: ``reason`` says
    which, ``"time"``, ``"nodes"``, ``"memory"`` or ``"depth"``).
    """

    result: str
    nodes: int
    seconds: float
    moves: list[int] | None = None
    reason: str = ""
    best_foundation: int = 0  # most foundation cards reached on any searched line
    stored: int = 0  # positions in the transposition table

    @property
    def solution_length(self) -> int:
        return len(self.moves) if self.moves is not None else 0


@dataclass
class Solver:
    """A resumable search from one position (see the module doc for the method).

    ``memory_mb`` sizes the transposition table (8 bytes a position, filled to 75% at most);
    ``max_depth`` bounds the number of branching moves on a line.
    """

    variant: Variant
    start: np.ndarray
    memory_mb: int = 256
    max_depth: int = 4096
    min_score: int = 0  # search only moves scoring at least this (0: every move)
    jitter: int = 0  # add a random 0..jitter-1 to every move's score (restarts)
    seed: int = 0  # seeds the jitter
    prune_after_draw: bool = False  # after a draw that played nothing, search only stock and waste moves
    stock_macros: bool = False  # "draw to a card and play it" as one move, instead of single draws (module doc)
    agent_order: bool = False  # order moves by the heuristic agent's rules (:func:`_agent_move_score`)
    stock_dominance: bool = False  # with macros: skip a position a stored one dominates (:func:`_insert_dominant`)
    _arrays: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        v = self.variant
        if self.memory_mb < 1:
            raise ValueError(f"memory_mb must be at least 1, got {self.memory_mb}")
        slots = 1 << max(10, int(self.memory_mb * 2**20 // 8).bit_length() - 1)
        self._arrays = dict(
            table=np.zeros(slots, dtype=np.uint64),
            states=np.zeros((self.max_depth, v.state_size), dtype=np.int8),
            # Room for every action, and for every stock card played anywhere as a macro.
            moves=np.zeros((self.max_depth, v.n_actions + v.n_cards * (v.spec[SP_PILES] + 2)), dtype=np.int32),
            n_moves=np.zeros(self.max_depth, dtype=np.int32),
            next_move=np.zeros(self.max_depth, dtype=np.int32),
            regs=np.zeros(N_REGS, dtype=np.int64),
            scratch=np.zeros(v.n_cards + 1, dtype=np.int16),
            mask=np.zeros(v.n_actions, dtype=np.int8),
            scores=np.zeros(v.n_actions + v.n_cards * (v.spec[SP_PILES] + 2), dtype=np.int64),
            best=np.zeros(slots if self.stock_dominance else 1, dtype=np.int16),
        )
        self.max_load = int(slots * 0.75)

    @property
    def nodes(self) -> int:
        return int(self._arrays["regs"][R_NODES])

    @property
    def pruned(self) -> bool:
        """Whether the search has left a legal move out (it then proves nothing by ending)."""
        return bool(self._arrays["regs"][R_PRUNED])

    @property
    def best_foundation(self) -> int:
        return int(self._arrays["regs"][R_BEST])

    def restart(self, start: np.ndarray) -> None:
        """Forget the search and start a new one from ``start`` (reusing the memory)."""
        self.start = start
        self._arrays["table"][:] = 0
        self._arrays["best"][:] = 0
        self._arrays["regs"][:] = 0

    def run(self, budget: int) -> int:
        """Search at most ``budget`` more nodes; return the status code."""
        a = self._arrays
        _search(self.start, self.variant.spec, self.variant.actions, a["table"], self.max_load, a["states"],
                a["moves"], a["n_moves"], a["next_move"], a["regs"], budget, a["scratch"], a["mask"],
                self.min_score, self.jitter, self.seed, self.prune_after_draw, self.stock_macros, a["scores"],
                self.agent_order, self.stock_dominance, a["best"])
        return int(a["regs"][R_STATUS])

    def first_move(self) -> int:
        """After a win: the first branching move from the start (-1 if the start itself was won)."""
        a = self._arrays
        if a["regs"][R_DEPTH] == 0:
            return -1
        m = int(a["moves"][0, a["next_move"][0] - 1])
        return m if m < self.variant.n_actions else int(_step_action(a["states"][0], self.variant.spec))

    def solution(self) -> list[int]:
        """After a win: every action id from the start position to the win."""
        a = self._arrays
        depth = int(a["regs"][R_DEPTH])
        path = np.array([a["moves"][d, a["next_move"][d] - 1] for d in range(depth)], dtype=np.int32)
        steps = int((path // self.variant.n_actions).sum())
        out = np.zeros(depth + steps + self.variant.n_cards + 1, dtype=np.int16)
        n = _replay_path(self.start, self.variant.spec, self.variant.actions, path, depth, out,
                         not self.stock_dominance)
        return [int(x) for x in out[:n]]


# The first phase searches only the promising moves (score at least this): it finds most wins
# fast, but proves nothing unless it happened to leave no move out.
PROMISING = 300
# It restarts: the first search follows the move order, later ones shuffle it (a random 0..JITTER-1
# added to each score), each for RESTART_NODES times the next term of Luby's sequence
# (1 1 2 1 1 2 4 ...), so one unlucky early choice cannot swallow the whole phase. The jitter is
# wider than the scores' own spread (300-1000), so later restarts try really different lines while
# still leaning to the move order: on the 30 Rank and File deals undecided at 60 s with a jitter of
# 250, restarts with 1500 won 12 within 30 s.
JITTER = 1500
RESTART_NODES = 20_000
# The games whose deals are solved with stock macros unless told otherwise. In Rainbow they decide more
# deals for the same positions searched (at 4M per deal: 11 more proved lost, as many won); in the
# two-deck games the restarts with them won none of the 19 Rank and File deals undecided at 60 s.
STOCK_MACROS_BY_DEFAULT = frozenset({"rainbow"})
# The games whose restarts take the heuristic agent's advice unless told otherwise (see :func:`solve`).
# Rainbow's first search is complete and runs to the limits, so it never restarts.
AGENT_GUIDANCE_BY_DEFAULT = frozenset({"rank_and_file", "number_ten"})


# Rollouts (:func:`rollout`): how long a greedy line may go without progress (taking turns: on the 11
# Rank and File deals left undecided at 60 s, 20 s of rollouts with 40 won deal 84, which no search had
# won), how much the move order is shuffled after the first rollout, and how many Luby terms of
# restarts come between two rollouts (a rollout takes about as long as 12 terms of restarts with their
# playouts: a third of the time each).
ROLLOUT_PATIENCE = (20, 40)
ROLLOUT_JITTER = 300
ROLLOUT_UNITS = 12


def rollout(game: str | Variant, start: np.ndarray, seed: int = 0) -> tuple[list[int] | None, int, int]:
    """One rollout (:func:`_rollout`) from the position ``start`` with every card known.

    Returns ``(moves, positions, foundation_cards)``: the winning action ids from ``start`` (else
    ``None``), how many positions its lines played, and the most foundation cards a line reached.
    Seed 0 follows the move order; other seeds shuffle it (:data:`ROLLOUT_JITTER`); the patience
    takes turns by seed (:data:`ROLLOUT_PATIENCE`).
    """
    v = get_variant(game)
    out = np.zeros(ROLLOUT_BUFFER, dtype=np.int16)
    patience = ROLLOUT_PATIENCE[seed % len(ROLLOUT_PATIENCE)]
    won, n, nodes, best = _rollout(np.array(start, dtype=np.int8), v.spec, v.actions, patience,
                                   ROLLOUT_JITTER if seed else 0, seed, out)
    return ([int(x) for x in out[:n]] if won else None), int(nodes), int(best)


def _luby(i: int) -> int:
    """Term ``i`` (from 1) of Luby's restart sequence."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    if i == (1 << k) - 1:
        return 1 << (k - 1)
    return _luby(i - (1 << (k - 1)) + 1)


def _drive(solver: Solver, stop, slice_nodes: int) -> tuple[int, str]:
    """Run ``solver`` in slices until it ends or ``stop(solver)`` names a reason to stop."""
    while True:
        status = solver.run(slice_nodes)
        if status != RUNNING:
            return status, "memory" if status == MEMORY else ""
        reason = stop(solver)
        if reason:
            return RUNNING, reason


def solve(game: str | Variant, seed: int | None = None, state_array: np.ndarray | None = None,
          time_limit: float | None = 60.0, max_nodes: int | None = None, memory_mb: int = 256,
          max_depth: int = 4096, slice_nodes: int = 50_000, first_phase: float = 0.9,
          prune_after_draw: bool = False, stock_macros: bool | None = None,
          agent_guidance: bool | None = None) -> SolveResult:
    """Solve deal ``seed`` of ``game`` (or the position ``state_array``) with every card known.

    Two phases: for the first ``first_phase`` share of the time and node limits, restarted searches
    over the promising moves only (:data:`PROMISING`, :data:`JITTER`); then one search over every
    move for the rest (a fresh table), which can prove a deal ``lost``. The restarts get most of the
    budget because they decide the two-deck deals (every two-deck win over deals 0-999 came from
    them, and the complete search proved none lost); a first search that leaves no move out, as
    always in Rainbow, is complete itself and runs on to the overall limits whatever the share.
    ``prune_after_draw`` searches only stock and waste moves after a draw that played nothing (sound:
    see :func:`_search`; an option kept for comparison, off by default: it gained nothing on the
    two-deck games, and stock macros leave no plain draw to prune after). ``stock_macros`` searches
    "draw to a card and play it" as one move (:func:`_stock_macros`); ``None`` means the game's
    default, :data:`STOCK_MACROS_BY_DEFAULT`. ``agent_guidance`` borrows the heuristic agent's
    judgement in the restarts: every other restart orders moves by its rules
    (:func:`_agent_move_score`), between restarts the noisy heuristic plays whole games from the
    start (:func:`agents.heuristic.playout`), and every :data:`ROLLOUT_UNITS` Luby terms comes a
    :func:`rollout` (a won playout or rollout is a winning move list like any other); ``None`` means
    the game's default, :data:`AGENT_GUIDANCE_BY_DEFAULT`. Raises ``ValueError`` for
    an unknown game, a bad seed, or a limit that is not positive.
    """
    variant = get_variant(game)
    if (seed is None) == (state_array is None):
        raise ValueError("give exactly one of seed and state_array")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time limit must be positive (seconds), got {time_limit}")
    if max_nodes is not None and max_nodes <= 0:
        raise ValueError(f"max_nodes must be positive, got {max_nodes}")
    if not 0 <= first_phase < 1:
        raise ValueError(f"first_phase must be in [0, 1), got {first_phase}")
    if stock_macros is None:
        stock_macros = variant.name in STOCK_MACROS_BY_DEFAULT
    if agent_guidance is None:
        agent_guidance = variant.name in AGENT_GUIDANCE_BY_DEFAULT
    if agent_guidance:
        from agents import heuristic  # the agents build on this package: imported only when used
    if state_array is None:
        start = state.deal(variant, state.check_seed(seed))
    else:
        start = np.asarray(state_array, dtype=np.int8)
        if start.shape != (variant.state_size,):
            raise ValueError(f"state_array must have shape ({variant.state_size},), got {start.shape}")
    t0 = time.perf_counter()
    nodes, best = 0, 0

    def result(kind: str, solver: Solver, **extra) -> SolveResult:
        return SolveResult(kind, nodes=nodes, seconds=time.perf_counter() - t0, best_foundation=best,
                           stored=int(solver._arrays["regs"][R_STORED]), **extra)

    def proof(solver: Solver) -> SolveResult:
        return result("unknown", solver, reason="depth") if solver._arrays["regs"][R_DEPTH_HIT] else \
            result("lost", solver)

    def over(node_cap: int | None, deadline: float | None):
        def stop(solver: Solver | None) -> str:
            if node_cap is not None and nodes + (solver.nodes if solver else 0) >= node_cap:
                return "nodes"
            if deadline is not None and time.perf_counter() >= deadline:
                return "time"
            return ""
        return stop

    phase_nodes = None if max_nodes is None else int(max_nodes * first_phase)
    phase_end = None if time_limit is None else t0 + time_limit * first_phase
    end = None if time_limit is None else t0 + time_limit
    phase_over, all_over = over(phase_nodes, phase_end), over(max_nodes, end)

    # Phase 1: restarts over the promising moves. The first search, as long as it has left no move
    # out, is a complete search (always so in Rainbow, where every move is promising): it may then
    # run on to the overall limits and prove a loss.
    restart = n_playouts = n_rollouts = units = 0
    while first_phase > 0:
        cap = RESTART_NODES * _luby(restart + 1)
        table_mb = memory_mb if restart == 0 else max(1, min(memory_mb, cap * 16 >> 20))
        solver = Solver(variant, start.copy(), memory_mb=table_mb, max_depth=max_depth, min_score=PROMISING,
                        jitter=JITTER if restart else 0, seed=restart, prune_after_draw=prune_after_draw,
                        stock_macros=stock_macros, stock_dominance=stock_macros,
                        agent_order=agent_guidance and restart % 2 == 1)

        def stop(solver: Solver, cap: int = cap, first: bool = restart == 0) -> str:
            if first and not solver.pruned:
                return all_over(solver)
            return phase_over(solver) or ("restart" if solver.nodes >= cap else "")

        status, reason = _drive(solver, stop, min(slice_nodes, RESTART_NODES))
        nodes += solver.nodes
        best = max(best, solver.best_foundation)
        if status == WON:
            return result("won", solver, moves=solver.solution())
        if status == EXHAUSTED:
            if not solver.pruned:
                return proof(solver)
            if restart == 0:
                break  # the whole promising space is searched: restarts would search it again
        if status == MEMORY or reason in ("time", "nodes"):
            if restart == 0 and not solver.pruned:
                return result("unknown", solver, reason=reason or "memory")
            break
        restart += 1
        if not agent_guidance:
            continue
        # Between restarts, as many heuristic playouts as the restart's Luby term (about as much time),
        # and a rollout every ROLLOUT_UNITS terms (about as much again).
        units += _luby(restart)
        for _ in range(_luby(restart)):
            moves, played, reached = heuristic.playout(variant, start, seed=n_playouts)
            n_playouts += 1
            nodes += played
            best = max(best, reached)
            if moves is not None:
                return result("won", solver, moves=moves)
            if phase_over(None):
                break
        while units >= ROLLOUT_UNITS * (n_rollouts + 1) and not phase_over(None):
            moves, played, reached = rollout(variant, start, seed=n_rollouts)
            n_rollouts += 1
            nodes += played
            best = max(best, reached)
            if moves is not None:
                return result("won", solver, moves=moves)
    # Phase 2: every move.
    solver = Solver(variant, start.copy(), memory_mb=memory_mb, max_depth=max_depth, prune_after_draw=prune_after_draw,
                    stock_macros=stock_macros, stock_dominance=stock_macros)
    status, reason = _drive(solver, all_over, slice_nodes)
    nodes += solver.nodes
    best = max(best, solver.best_foundation)
    if status == WON:
        return result("won", solver, moves=solver.solution())
    if status == EXHAUSTED:
        return proof(solver)
    return result("unknown", solver, reason=reason)


# The compiled search holds the core's code and variant.py's constants: a cache built from other sources
# is dropped here.
drop_stale_cache(__name__)

__all__ = ["SolveResult", "Solver", "rollout", "solve", "state_key"]
