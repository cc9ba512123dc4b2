"""A rule-based player for the three games that sees only what the observation shows.

:class:`Table` is the visible table, read from the default ``codes`` observation (card code
``suit*13 + rank + 1``, 53 a face-down or unseen card, 0 nothing). :class:`Rules` knows what each
action id of the variant's static action table (``variant.actions``) does to such a table, so the
agent can look one move ahead, and a few moves ahead through the moves that only rearrange the
tableau, without ever touching the engine's state. :class:`HeuristicAgent` is the player; its
docstring lists its rules.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import numpy as np

from solitaire_env.agents.base import Agent
from solitaire_env.engine import core
from solitaire_env.engine.games import get_variant
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
KING = 12
_RED = [s in (1, 2) for s in range(4)]


class Table:
    """The visible table. Cards are ``0..51`` (``suit*13 + rank``), every list bottom first.

    ``up[p]``/``down[p]``: face-up cards and face-down count of tableau pile ``p``; ``waste``;
    ``fh[f]``/``fs[f]``: cards on foundation slot ``f`` and its suit (-1 while empty); ``stock_n``;
    ``stock``: the stock's cards where the player has seen them (Rainbow after a redeal), else
    ``None``; ``redeals``: redeals left; ``res_up``/``res_down``: the reserve like a pile; ``base``:
    the base rank (0 = Ace outside Rainbow).
    """

    __slots__ = ("up", "down", "waste", "fh", "fs", "stock_n", "stock", "redeals", "res_up", "res_down", "base")

    def __init__(self, up, down, waste, fh, fs, stock_n, stock, redeals, res_up, res_down, base) -> None:
        self.up, self.down, self.waste = up, down, waste
        self.fh, self.fs = fh, fs
        self.stock_n, self.stock, self.redeals = stock_n, stock, redeals
        self.res_up, self.res_down, self.base = res_up, res_down, base

    def clone(self) -> Table:
        """A shallow copy: change a list of the copy only by replacing it."""
        return Table(list(self.up), list(self.down), self.waste, self.fh, self.fs, self.stock_n, self.stock,
                     self.redeals, self.res_up, self.res_down, self.base)

    def key(self) -> tuple:
        """Everything visible, as a hashable value: equal keys are the same visible position."""
        return (tuple(map(tuple, self.up)), tuple(self.down), tuple(self.waste), tuple(self.fh), tuple(self.fs),
                self.stock_n, self.redeals, tuple(self.res_up), self.res_down)

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
    """What the variant's actions do, worked out on a :class:`Table` (the visible position only)."""

    def __init__(self, variant: Variant) -> None:
        if variant.cells or not variant.stock_capacity:  # this look-ahead models no free cells
            raise ValueError(f"the heuristic and search agents do not play {variant.title} yet; use random or a policy")
        self.variant = v = variant
        self.piles, self.cap, self.decks, self.auto_fill = v.piles, v.pile_capacity, v.decks, v.auto_fill
        self.wrap, self.whole, self.to_empty = v.wrap, v.whole_pile_moves, v.tableau_to_empty
        self.fields = {name: field for name, (field, _) in observation_fields(v).items()}
        self.rows: list[tuple[int, int, int, int]] = [tuple(int(x) for x in r) for r in v.actions]
        self.ids: dict[tuple[int, int, int, int], int] = {
            (kind, i, j, n if kind == TABLEAU_TO_EMPTY else 0): a for a, (kind, i, j, n) in enumerate(self.rows)}
        # _builders[card]: the cards that build on it in the tableau
        self._builders = [[c for c in range(52) if self.builds_on(c, onto)] for onto in range(52)]

    # --- reading the observation --------------------------------------------------------------

    def observe(self, obs: Any) -> Table:
        """The visible table from a ``codes`` observation."""
        obs = np.asarray(obs)
        if obs.ndim != 1 or obs.shape[0] != self.variant.obs_size:
            raise ValueError(f"expected the flat 'codes' observation of {self.variant.title} "
                             f"({self.variant.obs_size} entries), got shape {obs.shape}")
        f = self.fields
        rows = obs[f["tableau"]].reshape(self.piles, self.cap).tolist()
        up = [[c - 1 for c in row if 0 < c < HIDDEN] for row in rows]
        down = [row.count(HIDDEN) for row in rows]
        waste = [c - 1 for c in obs[f["waste"]].tolist() if c]
        base = int(obs[f["base_rank"]][0]) if "base_rank" in f else 0
        fh, fs = [], []
        for c in obs[f["foundations"]].tolist():
            if c:
                fh.append((c - 1 - base) % 13 + 1)
                fs.append((c - 1) // 13)
            else:
                fh.append(0)
                fs.append(-1)
        stock_n = int(obs[f["stock_size"]][0])
        stock = None
        if "stock" in f:
            codes = obs[f["stock"]].tolist()[:stock_n]
            if HIDDEN not in codes:
                stock = [c - 1 for c in codes]
        redeals = int(obs[f["redeals_left"]][0]) if "redeals_left" in f else 0
        res_up: list[int] = []
        res_down = 0
        if "reserve" in f:
            codes = obs[f["reserve"]].tolist()
            res_down = codes.count(HIDDEN)
            res_up = [c - 1 for c in codes if 0 < c < HIDDEN]
        return Table(up, down, waste, fh, fs, stock_n, stock, redeals, res_up, res_down, base)

    # --- cards ----------------------------------------------------------------------------------

    def builds_on(self, card: int, onto: int) -> bool:
        """Tableau building: one rank lower, other colour (wrapping King on Ace where the game wraps)."""
        if card < 0 or onto < 0 or _RED[card // 13] == _RED[onto // 13]:
            return False
        if self.wrap:
            return card % 13 == (onto % 13 + 12) % 13
        return card % 13 == onto % 13 - 1

    def foundation_for(self, t: Table, card: int) -> int:
        """The lowest foundation slot that takes ``card``, or -1."""
        if card < 0:
            return -1
        rank, suit = card % 13, card // 13
        for f, h in enumerate(t.fh):
            if h == 0:
                if rank == t.base:
                    return f
            elif h < 13 and t.fs[f] == suit and rank == (t.base + h) % 13:
                return f
        return -1

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

    def run_length(self, t: Table, p: int) -> int:
        """Cards in the packed run on top of pile ``p``."""
        up = t.up[p]
        if not up or up[-1] < 0:
            return 0
        k = 1
        while k < len(up) and self.builds_on(up[-k], up[-k - 1]):
            k += 1
        return k

    def moved_count(self, t: Table, a: int) -> int:
        """Cards a tableau-source action takes from its pile (the action must be legal in ``t``)."""
        kind, src, dst, cnt = self.rows[a]
        if kind == TABLEAU_TO_FOUNDATION:
            return 1
        if kind == TABLEAU_TO_EMPTY:
            return cnt
        if self.whole:
            return len(t.up[src])
        return t.top(dst) % 13 - t.top(src) % 13

    # --- moves ----------------------------------------------------------------------------------

    def legal(self, t: Table, touching: tuple[int, ...] | None = None) -> list[int]:
        """The legal action ids in ``t`` (the env's mask, worked out from the visible table alone).

        With ``touching``, only the moves of the waste and the reserve and the tableau moves from or
        to those piles (no draw or redeal).
        """
        ids = self.ids
        out = []
        if touching is not None:
            pass
        elif t.stock_n > 0:
            out.append(ids[(DRAW, -1, -1, 0)])
        elif t.waste and t.redeals > 0:
            out.append(ids[(REDEAL, -1, -1, 0)])
        empty = t.lowest_empty()
        tops = [t.top(p) for p in range(self.piles)]
        # takers[card] = the piles whose top card it builds on
        takers: dict[int, list[int]] = {}
        for j, top in enumerate(tops):
            if top >= 0:
                for card in self._builders[top]:
                    takers.setdefault(card, []).append(j)
        if t.waste:
            card = t.waste[-1]
            if self.foundation_for(t, card) >= 0:
                out.append(ids[(WASTE_TO_FOUNDATION, -1, -1, 0)])
            out.extend(ids[(WASTE_TO_TABLEAU, -1, j, 0)] for j in takers.get(card, ()))
            if empty >= 0:
                out.append(ids[(WASTE_TO_EMPTY, -1, -1, 0)])
        if t.res_up and t.res_up[-1] >= 0:
            card = t.res_up[-1]
            if self.foundation_for(t, card) >= 0:
                out.append(ids[(RESERVE_TO_FOUNDATION, -1, -1, 0)])
            out.extend(ids[(RESERVE_TO_TABLEAU, -1, j, 0)] for j in takers.get(card, ()))
        for i, top in enumerate(tops):
            if top < 0:
                continue
            up = t.up[i]
            n = len(up) + t.down[i]
            run = self.run_length(t, i)
            if touching is not None and i not in touching:
                for k in range(1, run + 1) if not self.whole else ((n,) if run == n else ()):
                    out.extend(ids[(TABLEAU_TO_TABLEAU, i, j, 0)] for j in takers.get(up[-k], ()) if j in touching)
                continue
            if self.foundation_for(t, top) >= 0:
                out.append(ids[(TABLEAU_TO_FOUNDATION, i, -1, 0)])
            if self.whole:
                if run == n:
                    out.extend(ids[(TABLEAU_TO_TABLEAU, i, j, 0)] for j in takers.get(up[0], ()) if j != i)
            else:
                for k in range(1, run + 1):
                    out.extend(ids[(TABLEAU_TO_TABLEAU, i, j, 0)] for j in takers.get(up[-k], ()) if j != i)
            if self.to_empty and empty >= 0:
                out.extend(ids[(TABLEAU_TO_EMPTY, i, -1, k)] for k in range(1, min(run, MAX_RUN, n - 1) + 1))
        out.sort()
        return out

    def apply(self, t: Table, a: int) -> Table:
        """The table after legal action ``a``; a card it turns face up is ``UNKNOWN``."""
        kind, src, dst, cnt = self.rows[a]
        n = t.clone()
        if kind == DRAW:
            n.stock_n -= 1
            n.waste = t.waste + [t.stock[-1] if t.stock else UNKNOWN]
            n.stock = t.stock[:-1] if t.stock else t.stock
            return n
        if kind == REDEAL:
            n.stock, n.waste = t.waste[::-1], []
            n.stock_n, n.redeals = len(t.waste), t.redeals - 1
            return n
        if kind in (WASTE_TO_FOUNDATION, WASTE_TO_TABLEAU, WASTE_TO_EMPTY):
            moved = [t.waste[-1]]
            n.waste = t.waste[:-1]
        elif kind in (RESERVE_TO_FOUNDATION, RESERVE_TO_TABLEAU):
            moved = [self._take_reserve(n)]
        else:
            k = self.moved_count(t, a)
            moved = t.up[src][-k:]
            rest = t.up[src][:-k]
            if rest:
                n.up[src] = rest
            elif t.down[src]:
                n.up[src], n.down[src] = [UNKNOWN], t.down[src] - 1
            elif self.auto_fill and (n.res_up or n.res_down):
                n.up[src] = [self._take_reserve(n)]
            else:
                n.up[src] = []
        if kind in (WASTE_TO_FOUNDATION, RESERVE_TO_FOUNDATION, TABLEAU_TO_FOUNDATION):
            card = moved[0]
            f = self.foundation_for(t, card)
            n.fh, n.fs = list(t.fh), list(t.fs)
            n.fh[f] += 1
            n.fs[f] = card // 13
        elif kind in (WASTE_TO_EMPTY, TABLEAU_TO_EMPTY):
            n.up[t.lowest_empty()] = moved
        else:
            n.up[dst] = t.up[dst] + moved
        return n

    @staticmethod
    def _take_reserve(n: Table) -> int:
        card = n.res_up[-1]
        n.res_up = n.res_up[:-1]
        if not n.res_up and n.res_down:
            n.res_up, n.res_down = [UNKNOWN], n.res_down - 1
        return card




class HeuristicAgent(Agent):
    """A rule-based player that sees only the observation (never the engine's state).

    Every step it reads the visible table from the ``codes`` observation, works out from the static
    action table what each legal action does there, scores each with the first rule that fits, and
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

    **No loops.** Every move of rules 1-5 and 7-12 changes the position for good (a card goes to a
    foundation or leaves the waste or the reserve, a face-down card turns up, the stock shrinks, a
    redeal is used up), so it cannot lead back to a position seen before. The other moves (rules 6,
    9, 13) are never played when they lead to a visible position already seen this episode. Only a
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
        self.search_depth, self.search_nodes = search_depth, search_nodes
        self._seen: set[tuple] = set()
        self._stuck = False

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
                step = self._search(t)  # rule 13
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
            else:
                touching = None
            for b in rules.legal(nt, touching):
                tier, _, reversible = self._rate(nt, b)
                if tier > best and not reversible and rules.rows[b][0] not in (DRAW, REDEAL):
                    best, best_a = tier, a
        return best_a

    def _search(self, t: Table) -> int | None:
        """First move of the shortest rearranging path to a position with a productive move (rule 13)."""
        rules = self.rules
        seen = set(self._seen)
        queue: deque[tuple[Table, int, int]] = deque([(t, -1, 0)])
        nodes = 0
        while queue:
            node, first, depth = queue.popleft()
            if depth >= self.search_depth:
                continue
            for a in rules.legal(node):
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
