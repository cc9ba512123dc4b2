"""A rule-based player for the games that sees only what the observation shows.

:class:`Table` is the visible table, read from the default ``codes`` observation (card code
``suit*13 + rank + 1``, 53 a face-down or unseen card, 0 nothing). :class:`Rules` asks the engine what
each action does to such a table, played on the visible table with the unseen cards as placeholders
(:meth:`Rules.world`), so the agent can look one move ahead, and a few moves ahead through the moves
that only rearrange the tableau, with no rules of its own and never touching the real game's state.
:class:`HeuristicAgent` is the player; its docstring lists its rules.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import numpy as np

from solitaire_env.agents.base import Agent
from solitaire_env.engine import core, state
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.variant import (
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    HIDDEN,
    REDEAL,
    RESERVE_TO_FOUNDATION,
    RESERVE_TO_TABLEAU,
    TABLEAU_TO_CELL,
    TABLEAU_TO_EMPTY,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    WASTE_TO_EMPTY,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    Variant,
    observation_fields,
)

# The tiers of the rules below (HeuristicAgent's docstring): one table, which the solver's agent order
# reads too (solitaire_env.solver.guidance).
from solitaire_env.solver.guidance import (
    PRODUCTIVE,
    T_DRAW,
    T_EMPTY_A_PILE,
    T_ENABLING,
    T_FOUNDATION,
    T_KING_INTO_EMPTY,
    T_NEUTRAL,
    T_REDEAL,
    T_RESERVE,
    T_REVEAL,
    T_REVEAL_INTO_EMPTY,
    T_SAFE_FOUNDATION,
    T_WASTE,
    T_WASTE_AFTER_RESERVE,
    T_WASTE_INTO_EMPTY,
)

UNKNOWN = -1  # a card a simulated move turns face up: not seen yet, so it builds with nothing
# The engine's card for one the player cannot see, in the agent's model of the table: not a card of
# the deck (0..51), so it builds with none, none builds on it, and it never goes to a foundation.
PLACEHOLDER = 53
_FROM_TABLEAU = (TABLEAU_TO_FOUNDATION, TABLEAU_TO_TABLEAU, TABLEAU_TO_EMPTY)
_INTO_EMPTY = (TABLEAU_TO_EMPTY, WASTE_TO_EMPTY, CELL_TO_EMPTY, FOUNDATION_TO_EMPTY)
_ONTO_PILE = (TABLEAU_TO_TABLEAU, WASTE_TO_TABLEAU, RESERVE_TO_TABLEAU, CELL_TO_TABLEAU, FOUNDATION_TO_TABLEAU)
_FROM_CELL = (CELL_TO_FOUNDATION, CELL_TO_TABLEAU, CELL_TO_EMPTY)
_FROM_FOUNDATION = (FOUNDATION_TO_TABLEAU, FOUNDATION_TO_EMPTY)  # (Klondike)
KING = 12
_RED = [s in (1, 2) for s in range(4)]


class Table:
    """The visible table. Cards are ``0..51`` (``suit*13 + rank``), every list bottom first.

    ``up[p]``/``down[p]``: face-up cards and face-down count of tableau pile ``p``; ``waste``;
    ``fh[f]``/``fs[f]``: cards on foundation slot ``f`` and its suit (-1 while empty); ``stock_n``;
    ``stock``: the stock's cards where the player has seen them (Rainbow after a redeal), else
    ``None``; ``redeals``: redeals left (with unlimited redeals, 1 once the stock has been seen, as the
    engine's state has it); ``res_up``/``res_down``: the reserve like a pile; ``base``:
    the base rank (0 = Ace outside Rainbow).
    """

    __slots__ = ("up", "down", "waste", "fh", "fs", "stock_n", "stock", "redeals", "res_up", "res_down", "base",
                 "cells", "world", "counts")

    def __init__(self, up, down, waste, fh, fs, stock_n, stock, redeals, res_up, res_down, base, cells=()) -> None:
        self.up, self.down, self.waste = up, down, waste
        self.cells = cells  # FreeCell: each free cell's card, -1 for a free one
        self.fh, self.fs = fh, fs
        self.stock_n, self.stock, self.redeals = stock_n, stock, redeals
        self.res_up, self.res_down, self.base = res_up, res_down, base
        self.world: np.ndarray | None = None  # Rules.world, once asked for
        self.counts: np.ndarray | None = None  # the cards each legal move takes (Rules.moved_count)

    def key(self) -> tuple:
        """Everything visible, as a hashable value: equal keys are the same visible position."""
        return (tuple(map(tuple, self.up)), tuple(self.down), tuple(self.waste), tuple(self.fh), tuple(self.fs),
                self.stock_n, self.redeals, tuple(self.res_up), self.res_down, tuple(sorted(self.cells)))

    def lowest_empty(self) -> int:
        for p in range(len(self.up)):
            if not self.up[p] and not self.down[p]:
                return p
        return -1

    def top(self, p: int) -> int:
        """Top card of pile ``p``; -1 for an empty pile or a card not seen yet."""
        up = self.up[p]
        return up[-1] if up else -1


class Rules:
    """What the variant's actions do on a :class:`Table`, worked out by the engine itself.

    The engine plays on :meth:`world`, the visible table with every card the player cannot see as
    :data:`PLACEHOLDER`, so the look-ahead knows no rule of its own: legality, the cards a move takes,
    and the table after it all come from :mod:`solitaire_env.engine.core`.
    """

    def __init__(self, variant: Variant) -> None:
        self.variant = v = variant
        self.piles, self.cap, self.decks, self.auto_fill = v.piles, v.pile_capacity, v.decks, v.auto_fill
        self.fields = {name: field for name, (field, _) in observation_fields(v).items()}
        self.rows: list[tuple[int, int, int, int]] = [tuple(int(x) for x in r) for r in v.actions]
        self._spec, self._actions = v.spec, v.actions
        self._mask = np.zeros(v.n_actions, dtype=np.int8)
        self._codes = np.zeros(v.obs_size, dtype=np.int16)

    # --- reading the observation --------------------------------------------------------------

    def observe(self, obs: Any, like: Table | None = None, piles: tuple[int, ...] = ()) -> Table:
        """The visible table from a ``codes`` observation; with ``like``, a table whose piles but
        ``piles`` are known to be those of ``like`` (only those are read)."""
        obs = np.asarray(obs)
        if obs.ndim != 1 or obs.shape[0] != self.variant.obs_size:
            raise ValueError(f"expected the flat 'codes' observation of {self.variant.title} "
                             f"({self.variant.obs_size} entries), got shape {obs.shape}")
        f = self.fields
        tableau = obs[f["tableau"]]
        if like is None:
            up, down, piles = [[]] * self.piles, [0] * self.piles, range(self.piles)
        else:
            up, down = list(like.up), list(like.down)
        for p in piles:
            row = tableau[p * self.cap : (p + 1) * self.cap].tolist()
            # (a code past HIDDEN is a placeholder the engine turned up in the look-ahead: UNKNOWN)
            up[p] = [c - 1 if c < HIDDEN else UNKNOWN for c in row if c and c != HIDDEN]
            down[p] = row.count(HIDDEN)
        waste = [c - 1 if c < HIDDEN else UNKNOWN for c in obs[f["waste"]].tolist() if c] if "waste" in f else []
        base = int(obs[f["base_rank"]][0]) if "base_rank" in f else 0
        fh, fs = [], []
        for c in obs[f["foundations"]].tolist():
            if c:
                fh.append((c - 1 - base) % 13 + 1)
                fs.append((c - 1) // 13)
            else:
                fh.append(0)
                fs.append(-1)
        stock_n = int(obs[f["stock_size"]][0]) if "stock_size" in f else 0  # (FreeCell has no stock)
        stock = None
        if "stock" in f:
            codes = obs[f["stock"]].tolist()[:stock_n]
            if HIDDEN not in codes:
                stock = [_card(c) for c in codes]
        if "redeals_left" in f:
            redeals = int(obs[f["redeals_left"]][0])
        else:  # unlimited redeals (Klondike) keep whether the stock has been seen; no redeal otherwise
            redeals = int(self.variant.redeals is None and stock is not None)
        res_up: list[int] = []
        res_down = 0
        if "reserve" in f:
            codes = obs[f["reserve"]].tolist()
            res_down = codes.count(HIDDEN)
            res_up = [_card(c) for c in codes if c and c != HIDDEN]
        cells = [c - 1 if c else -1 for c in obs[f["cells"]].tolist()] if "cells" in f else []
        return Table(up, down, waste, fh, fs, stock_n, stock, redeals, res_up, res_down, base, cells)

    def world(self, t: Table) -> np.ndarray:
        """The engine position the agent reasons on (kept on ``t``): the visible table with each card
        the player cannot see, face down or in an unseen stock, as :data:`PLACEHOLDER`."""
        if t.world is None:
            def shown(cards: list[int]) -> list[int]:
                return [PLACEHOLDER if c == UNKNOWN else c for c in cards]

            foundations = [[fs * 13 + (t.base + k) % 13 for k in range(n)] for n, fs in zip(t.fh, t.fs, strict=True)]
            t.world = state.build(
                self.variant, tableau=[([PLACEHOLDER] * d + shown(up), d) for up, d in zip(t.up, t.down, strict=True)],
                foundations=foundations, stock=[PLACEHOLDER] * t.stock_n if t.stock is None else shown(t.stock),
                waste=shown(t.waste), reserve=([PLACEHOLDER] * t.res_down + shown(t.res_up), t.res_down),
                redeals=t.redeals, base=t.base, cells=list(t.cells) if t.cells else None)
        return t.world

    # --- cards ----------------------------------------------------------------------------------

    def is_safe(self, t: Table, card: int) -> bool:
        """Putting ``card`` on a foundation cannot cost a tableau move (see HeuristicAgent's rule 1)."""
        r = (card % 13 - t.base) % 13 + 1  # its place in the foundation sequence, 1..13
        if r <= 2:
            return True
        red = _RED[card // 13]
        for suit in range(4):
            if _RED[suit] == red:
                continue
            heights = [h for h, s in zip(t.fh, t.fs, strict=True) if s == suit and h]
            if len(heights) < self.decks or min(heights) < r - 1:
                return False
        return True

    def moved_count(self, t: Table, a: int) -> int:
        """Cards a tableau-source action takes from its pile (the action must be legal in ``t``)."""
        if t.counts is None:  # every legal move's at once: one call into the engine, not one a move
            t.counts = np.zeros(self.variant.n_actions, dtype=np.int64)
            core.legal_mask(self.world(t), self._spec, self._actions, self._mask)
            core.move_counts(t.world, self._spec, self._actions, self._mask, t.counts)
        return int(t.counts[a])

    # --- moves ----------------------------------------------------------------------------------

    def legal(self, t: Table, touching: tuple[int, ...] | None = None) -> list[int]:
        """The legal action ids in ``t`` (the env's mask, from the visible table alone).

        With ``touching``, only the moves of the waste and the reserve and the tableau moves from or
        to those piles (no draw or redeal).
        """
        core.legal_mask(self.world(t), self._spec, self._actions, self._mask)
        legal = np.flatnonzero(self._mask).tolist()
        rows = self.rows
        unknown = [p for p, up in enumerate(t.up) if up and up[-1] == UNKNOWN]
        if unknown:
            # A card the look-ahead turned up is not known: the agent plans no move of it or onto it
            # (the engine sees a placeholder card whose rank is meaningless).
            legal = [a for a in legal if not ((rows[a][0] in _FROM_TABLEAU and rows[a][1] in unknown)
                                              or (rows[a][0] in _ONTO_PILE and rows[a][2] in unknown))]
        if touching is None:
            return legal
        return [a for a in legal if rows[a][0] not in (DRAW, REDEAL) and (
            rows[a][0] not in _FROM_TABLEAU or rows[a][1] in touching
            or (rows[a][0] == TABLEAU_TO_TABLEAU and rows[a][2] in touching))]

    def apply(self, t: Table, a: int) -> Table:
        """The table after legal action ``a``; a card it turns face up is ``UNKNOWN``."""
        after = self.world(t).copy()
        core.apply_action(after, self._spec, self._actions, a)
        core.observe(after, self._spec, self._codes)
        # Only the piles the move played from or onto change (a pile the reserve refills is its source).
        kind, src, dst, _ = self.rows[a]
        if kind in _FROM_CELL or kind in _FROM_FOUNDATION:
            src = -1  # (a free cell or a foundation slot, not a pile)
        if kind in _INTO_EMPTY:
            dst = t.lowest_empty()
        n = self.observe(self._codes, t, tuple(p for p in (src, dst) if p >= 0))
        n.world = after
        return n


def _card(code: int) -> int:
    """The card of a visible observation code (``UNKNOWN`` for a placeholder the engine turned up)."""
    return code - 1 if code <= 52 else UNKNOWN


class HeuristicAgent(Agent):
    """A rule-based player that sees only the observation (never the engine's state).

    Every step it reads the visible table from the ``codes`` observation, has the engine work out what
    each legal action does there (:class:`Rules`), scores each with the first rule that fits, and
    plays the best (ties: the lowest action id, so it is deterministic). Rules, strongest first:

    1. **Safe foundation moves.** A card goes up at once if no card can still need it on the
       tableau: its place ``r`` in its foundation sequence (1 = Ace, or the base rank in Rainbow) is
       at most 2, or every foundation pile of the other colour (two per suit with two decks; a pile
       not started counts as 0) already holds at least ``r - 1`` cards, so every card that could
       build on it is already up. Among them, one that turns a face-down card first.
    2. **Rainbow: reserve first.** The reserve's top card onto a pile or to a foundation (the next
       reserve card turns up).
    3. **The waste's top card onto a pile**, onto the pile with the fewest face-down cards (the waste
       is a one-way street: a card left there buries the ones under it). In Rainbow this comes after
       rule 4 and 5 (every move that turns a reserve card goes first).
    4. **Turn face-down cards.** Moves that uncover a face-down card: the whole face-up part of a pile
       onto another pile, or its last face-up card to a foundation; in Rainbow, emptying a pile while
       the reserve lasts (the refill turns up the next reserve card). The pile with the most
       face-down cards first; onto the pile with the fewest face-down cards.
    5. **Uncover into an empty pile**: the same by moving the face-up part into an empty pile, a
       King-led run first, then the longest. Runs never go into an empty pile otherwise, except as
       the first step of a plan (rules 9 and 13).
    6. **Empty a pile** that has no face-down cards by moving it whole onto another pile.
    7. **Other foundation moves**, lowest rank first. They come after the waste (rule 3) and the
       tableau moves because the card may be the one a waste card needs to go on.
    8. **A King from the waste into an empty pile** (a King goes nowhere else); in Rainbow, where
       tableau cards never go into an empty pile, any waste card.
    9. **A rearrangement that lets one of the rules 1-8 play next move**: one move of look-ahead over
       the moves that only shift runs between piles (and a non-King waste card into an empty pile).
    10. **A non-King waste card into an empty pile**, once the stock is out (it frees the waste).
    11. **Draw** from the stock, only when none of the above applies (rule 9 is tried first).
    12. **Redeal** (Rainbow), only when nothing else is left.
    13. Otherwise, with the stock out: search breadth first (``search_depth`` moves,
        ``search_nodes`` positions) through the moves that only rearrange the tableau for a position
        where one of the rules 1-10 applies, and take the first step of the way there. If there is
        none, the agent is :attr:`stuck`: no progress it can find; it then keeps shifting runs about,
        never to a position it has already seen, until a rule applies again or the episode ends.

    **FreeCell** (free cells, no stock, nothing face down): the same rules, with a cell's card to a
    foundation as a tableau card's (rules 1 and 7), a cell's card onto a pile ranked with emptying a
    pile (rule 6: it frees a cell, and can be undone), and a card into a free cell or from one into an
    empty pile as rearrangements (so rules 9 and 13 search through them for a foundation move).

    **Klondike** (foundation cards may come back, the stock may be cycled without end): a foundation's
    card coming back onto the tableau is a rearrangement (rules 9 and 13 try it, never as a step whose
    only use is the same card going straight back up); a move up that leads back to a position seen
    this episode is not played; a draw or redeal that does (a whole pass through the stock that changed
    nothing) is played only after rules 9 and 13 find nothing, and the agent is then :attr:`stuck`.

    **No loops.** Every move of rules 1-5 and 7-12 changes the position for good (a card goes to a
    foundation or leaves the waste or the reserve, a face-down card turns up, the stock shrinks, a
    redeal is used up; in Klondike see above), so it cannot lead back to a position seen before. The
    other moves (rules 6, 9, 13) are never played when they lead to a visible position already seen
    this episode. Only a
    stuck agent whose every legal move leads back to a seen position plays one anyway (the lowest
    action id): the game is lost, and there is no move that ends it.

    **Noise** (``noise > 0``, off by default): every move that is not a plain rearrangement has a
    random ``0..noise`` added to its rule's tier and its tie-break shuffled, drawn from ``seed``, so
    that neighbouring rules sometimes swap. The noisy player is weaker on average but plays a
    different game from each seed; the solver runs it many times as its playouts (:func:`playout`).

    It needs the default ``obs_mode="codes"`` observation.
    """

    name = "heuristic"

    def __init__(self, variant: str | Variant, seed: int | None = None, search_depth: int = 8,
                 search_nodes: int = 500, noise: int = 0) -> None:
        if noise < 0:
            raise ValueError(f"noise must be at least 0, got {noise}")
        self.rules = Rules(get_variant(variant))
        self.noise = noise
        self._rng = random.Random(seed)
        self._t_waste = T_WASTE_AFTER_RESERVE if self.rules.variant.reserve else T_WASTE
        # Klondike: a card that goes up may come down again, and the stock can be cycled for ever.
        self._returns, self._cycles = self.rules.variant.foundation_to_tableau, self.rules.variant.redeals is None
        self.search_depth, self.search_nodes = search_depth, search_nodes
        self._seen: set[tuple] = set()
        self._stuck = False

    @property
    def variant(self) -> Variant:
        """The rule set the agent looks ahead with."""
        return self.rules.variant

    @property
    def stuck(self) -> bool:
        """Whether the agent has found no way to make progress (rule 13); cleared when it finds one."""
        return self._stuck

    def reset(self, seed: int | None = None) -> None:
        """Forget the episode; ``seed`` reseeds the noise (without noise the agent has no randomness)."""
        if seed is not None:
            self._rng = random.Random(seed)
        self._seen = set()
        self._stuck = False

    def act(self, observation: Any, info: dict) -> int:
        t = self.rules.observe(observation)
        self._seen.add(t.key())
        legal = np.flatnonzero(info["action_mask"]).tolist()
        if not legal:
            raise ValueError("no legal action in this position (the episode is over)")
        if len(legal) == 1:
            return legal[0]
        rated = sorted(((*self._rate(t, a), a) for a in legal), key=lambda r: (-r[0], -r[1], r[3]))
        for tier, _, reversible, a in rated:  # rules 1-8, 10-12
            if tier <= T_NEUTRAL:
                break
            if reversible:
                if not self._stuck and self.fresh(t, a):  # rule 6
                    return a
                continue
            kind = self.rules.rows[a][0]
            if self._returns and kind not in (DRAW, REDEAL) and not self.fresh(t, a):
                continue  # a card going back up where it came down from: no progress
            if self._cycles and kind in (DRAW, REDEAL) and not self.fresh(t, a):
                # A whole pass through the stock changed nothing: no progress that way either.
                step = None if self._stuck else self._enabling(t, self._neutral(t, rated))
                if step is None and not self._stuck:
                    step = self._search(t, legal)
                if step is not None:
                    return step
                self._stuck = True
                break
            if tier < T_ENABLING and not self._stuck:  # first try rule 9
                ahead = self._enabling(t, self._neutral(t, rated))
                if ahead is not None:
                    return ahead
            if tier >= PRODUCTIVE:
                self._stuck = False
            return a
        if not self._stuck:
            step = self._enabling(t, self._neutral(t, rated))  # rule 9
            if step is None:
                step = self._search(t, legal)  # rule 13
            if step is not None:
                return step
            self._stuck = True
        for _, _, reversible, a in rated:  # lost: wander without repeating a position
            if reversible and self.fresh(t, a):
                return a
        return legal[0]

    def _neutral(self, t: Table, rated: list[tuple[int, int, bool, int]]) -> list[int]:
        """The legal rearranging moves that lead to a position not seen yet."""
        return [a for tier, _, reversible, a in rated if tier == T_NEUTRAL and (not reversible or self.fresh(t, a))]

    # --- scoring ------------------------------------------------------------------------------

    def fresh(self, t: Table, a: int) -> bool:
        """Whether legal action ``a`` leads from the visible table ``t`` to a visible position not seen this
        episode (the search agent asks this of its candidate moves too)."""
        return self.rules.apply(t, a).key() not in self._seen

    def _rate(self, t: Table, a: int) -> tuple[int, float, bool]:
        """(tier, tie-break, whether the move can be undone) of legal action ``a``, with the noise if any."""
        tier, tie, reversible = self._rule(t, a)
        if self.noise and tier > T_NEUTRAL:
            return tier + self._rng.randint(0, self.noise), tie + 3 * self._rng.random(), reversible
        return tier, tie, reversible

    def _rule(self, t: Table, a: int) -> tuple[int, int, bool]:
        """(tier, tie-break, whether the move can be undone) of legal action ``a``, from the table alone."""
        rules = self.rules
        kind, src, dst, _ = rules.rows[a]
        if kind == DRAW:
            return T_DRAW, 0, False
        if kind == REDEAL:
            return T_REDEAL, 0, False
        if kind in (WASTE_TO_FOUNDATION, RESERVE_TO_FOUNDATION):
            card = t.waste[-1] if kind == WASTE_TO_FOUNDATION else t.res_up[-1]
            from_reserve = kind == RESERVE_TO_FOUNDATION
            if rules.is_safe(t, card):
                return T_SAFE_FOUNDATION, 2 * from_reserve, False
            return (T_RESERVE, 1, False) if from_reserve else (T_FOUNDATION, -(card % 13), False)
        if kind == RESERVE_TO_TABLEAU:
            return T_RESERVE, -t.down[dst], False
        if kind == WASTE_TO_TABLEAU:
            return self._t_waste, -t.down[dst], False
        if kind == WASTE_TO_EMPTY:
            if rules.variant.reserve or t.waste[-1] % 13 == KING:
                return T_KING_INTO_EMPTY, 0, False
            if t.stock_n == 0 and not t.redeals:
                return T_WASTE_INTO_EMPTY, 0, False
            return T_NEUTRAL, 0, False
        if kind == CELL_TO_FOUNDATION:
            card = t.cells[src]
            return (T_SAFE_FOUNDATION, 2, False) if rules.is_safe(t, card) else (T_FOUNDATION, -(card % 13), False)
        if kind == CELL_TO_TABLEAU:  # frees a cell: as good as emptying a pile, and as reversible
            return T_EMPTY_A_PILE, 1, True
        if kind == CELL_TO_EMPTY or kind in _FROM_FOUNDATION:  # (a foundation's card can go back up)
            return T_NEUTRAL, 0, True
        # Tableau sources.
        up, down = t.up[src], t.down[src]
        k = rules.moved_count(t, a)
        clears = k == len(up)  # the pile's whole face-up part goes
        reveals = clears and (down > 0 or (rules.auto_fill and bool(t.res_up or t.res_down)))
        if kind == TABLEAU_TO_FOUNDATION:
            card = up[-1]
            if rules.is_safe(t, card):
                return T_SAFE_FOUNDATION, 1 + reveals, False
            if reveals:
                return T_REVEAL, 10 * down + 5, False
            return T_FOUNDATION, -(card % 13), False
        if kind == TABLEAU_TO_CELL:  # a rearrangement, unless it turns a card up
            return (T_REVEAL, 10 * down, False) if reveals else (T_NEUTRAL, 0, True)
        if kind == TABLEAU_TO_TABLEAU:
            if reveals:
                return T_REVEAL, 10 * down - t.down[dst], False
            if clears:
                return T_EMPTY_A_PILE, -t.down[dst], True
            return T_NEUTRAL, 0, True
        # TABLEAU_TO_EMPTY (never the whole pile: that is not offered).
        if reveals:
            return T_REVEAL_INTO_EMPTY, 100 * (up[-k] % 13 == KING) + 10 * k + down, False
        return T_NEUTRAL, 0, True

    def _enabling(self, t: Table, neutral: list[int]) -> int | None:
        """The rearranging move after which the best move that makes progress is best (rule 9), or None.

        No move of ``t`` makes progress, so one that does after ``a`` involves a pile ``a`` changed
        or the waste.
        """
        rules = self.rules
        best, best_a = T_KING_INTO_EMPTY - 1, None
        for a in neutral:
            kind, src, dst, _ = rules.rows[a]
            nt = rules.apply(t, a)
            if kind == TABLEAU_TO_TABLEAU:
                touching = (src, dst)
            elif kind == TABLEAU_TO_EMPTY:
                touching = (src, t.lowest_empty())
            elif kind in _FROM_FOUNDATION:
                touching = (dst if kind == FOUNDATION_TO_TABLEAU else t.lowest_empty(),)
            else:
                touching = None
            came_to = touching[0] if kind in _FROM_FOUNDATION else -1  # where a foundation's card came down
            for b in rules.legal(nt, touching):
                tier, _, reversible = self._rate(nt, b)
                if rules.rows[b][0] == TABLEAU_TO_FOUNDATION and rules.rows[b][1] == came_to:
                    continue  # the card that just came down going straight back up enables nothing
                if tier > best and not reversible and rules.rows[b][0] not in (DRAW, REDEAL):
                    best, best_a = tier, a
        return best_a

    def _search(self, t: Table, legal: list[int]) -> int | None:
        """First move of the shortest rearranging path to a position with a productive move (rule 13).

        The first move is one of ``legal`` (the env's mask, which ``no_revisit`` narrows to moves to
        positions unseen up to symmetry: a move this agent's own memory calls new may be masked).
        """
        rules = self.rules
        allowed = set(legal)
        seen = set(self._seen)
        queue: deque[tuple[Table, int, int]] = deque([(t, -1, 0)])
        nodes = 0
        while queue:
            node, first, depth = queue.popleft()
            if depth >= self.search_depth:
                continue
            for a in rules.legal(node):
                if depth == 0 and a not in allowed:
                    continue
                tier, _, reversible = self._rate(node, a)
                if not reversible:
                    if tier >= PRODUCTIVE and depth > 0:
                        return first
                    continue
                nxt = rules.apply(node, a)
                key = nxt.key()
                if key in seen:
                    continue
                seen.add(key)
                nodes += 1
                if nodes > self.search_nodes:
                    return None
                queue.append((nxt, a if depth == 0 else first, depth + 1))
        return None




# The solver's playouts: how noisy, and when a playout gives up. On the deals the solver's search
# left undecided at 60 s, a noise of 25 (rules about two tiers apart may swap) won 3 of 19 Rank and
# File and 8 of 20 Number Ten deals in 20 s each (measured when the limit was set).
PLAYOUT_NOISE = 25
PLAYOUT_MOVES = 2000  # the envs' episode limit
PLAYOUT_PATIENCE = 50  # moves in a row the agent may be stuck (finding no progress) before giving up


def playout(variant: str | Variant, start: np.ndarray, seed: int, noise: int = PLAYOUT_NOISE,
            max_moves: int = PLAYOUT_MOVES, patience: int = PLAYOUT_PATIENCE) -> tuple[list[int] | None, int, int]:
    """Play one game from the engine position ``start`` with the (noisy) heuristic agent.

    The agent still sees only the observation of each position. Returns ``(moves, played,
    foundation_cards)``: the action ids played if they win (else ``None``), how many moves were played,
    and the most cards the foundations held.
    """
    v = get_variant(variant)
    s = np.array(start, dtype=np.int8)
    obs = np.zeros(v.obs_size, dtype=np.int16)
    mask = np.zeros(v.n_actions, dtype=np.int8)
    agent = HeuristicAgent(v, seed=seed, noise=noise)
    played: list[int] = []
    stuck = best = 0
    while len(played) < max_moves:
        best = max(best, int(core.foundation_cards(s, v.spec)))
        if best == v.n_cards:
            return played, len(played), best
        if core.legal_mask(s, v.spec, v.actions, mask) == 0:
            break
        core.observe(s, v.spec, obs)
        a = agent.act(obs, {"action_mask": mask})
        core.apply_action(s, v.spec, v.actions, a)
        played.append(a)
        stuck = stuck + 1 if agent.stuck else 0
        if stuck > patience:
            break
    return None, len(played), best


__all__ = ["HeuristicAgent", "Rules", "Table", "UNKNOWN", "playout"]
