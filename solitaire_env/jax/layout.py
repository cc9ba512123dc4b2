"""The engine's flat state, named for JAX: :class:`Layout` (offsets by name) and :class:`Table` (the fields).

Every number here is read off the variant (its ``spec`` array and its fields), never written again:
the JAX step works on the same ``int8`` array as :mod:`solitaire_env.engine.core`, so a state moves
between the two backends unchanged. :func:`unpack` turns the flat array into named ``int32`` arrays
(static slices, which cost nothing once compiled) and :func:`pack` writes them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from solitaire_env.engine import variant as V
from solitaire_env.engine.variant import Variant, observation_fields


@dataclass(frozen=True)
class Layout:
    """One variant's sizes, rule switches and state offsets, as plain ints (static under ``jax.jit``)."""

    variant: Variant
    piles: int
    cap: int  # cards a pile's slot stores
    foundations: int
    stock_cap: int
    res_cap: int
    n_cards: int
    n_actions: int
    state_size: int
    obs_size: int
    wrap: bool
    whole: bool  # only whole piles move between piles
    tab_to_empty: bool
    autofill: bool
    redeals: int
    offsets: dict[str, int]  # field name -> offset into the flat state

    @classmethod
    def of(cls, v: Variant) -> Layout:
        sp = [int(x) for x in v.spec]
        names = {"tab": V.O_TAB, "len": V.O_LEN, "down": V.O_DOWN, "fsuit": V.O_FSUIT, "fcnt": V.O_FCNT,
                 "stock": V.O_STOCK, "nstock": V.O_NSTOCK, "waste": V.O_WASTE, "nwaste": V.O_NWASTE,
                 "res": V.O_RES, "nres": V.O_NRES, "resdown": V.O_RESDOWN, "redeals": V.O_REDEALS,
                 "base": V.O_BASE}
        layout = cls(
            variant=v, piles=sp[V.SP_PILES], cap=sp[V.SP_CAP], foundations=sp[V.SP_FOUND],
            stock_cap=sp[V.SP_STOCK_CAP], res_cap=sp[V.SP_RES_CAP], n_cards=sp[V.SP_NCARDS],
            n_actions=sp[V.SP_N_ACTIONS], state_size=sp[V.SP_STATE_SIZE], obs_size=sp[V.OB_SIZE],
            wrap=bool(sp[V.SP_WRAP]), whole=bool(sp[V.SP_WHOLE]), tab_to_empty=bool(sp[V.SP_TAB_TO_EMPTY]),
            autofill=bool(sp[V.SP_AUTOFILL]), redeals=sp[V.SP_REDEALS],
            offsets={name: sp[key] for name, key in names.items()},
        )
        layout.check_contiguous()
        return layout

    def check_contiguous(self) -> None:
        """The state's fields, and the observation's, lie end to end in order: :func:`pack` and
        ``rules.observe`` concatenate them."""
        sizes, at = self.sizes(), 0
        for name, start in self.offsets.items():
            if start != at:
                raise ValueError(f"state field {name} of {self.variant.name} starts at {start}, expected {at}")
            at += sizes[name]
        at = 0
        for name, field in self.observation_slices().items():
            if field.start != at:
                raise ValueError(f"observation field {name} of {self.variant.name} starts at {field.start}")
            at = field.stop
        if at != self.obs_size or sum(sizes.values()) != self.state_size:
            raise ValueError(f"the fields of {self.variant.name} do not fill its state and observation")

    def sizes(self) -> dict[str, int]:
        """Entries of each field in the flat state (the order of ``variant._spec_array``'s layout)."""
        p, f, s = self.piles, self.foundations, self.stock_cap
        return {"tab": p * self.cap, "len": p, "down": p, "fsuit": f, "fcnt": f, "stock": s, "nstock": 1,
                "waste": s, "nwaste": 1, "res": self.res_cap, "nres": 1, "resdown": 1, "redeals": 1, "base": 1}

    def first_action(self, kind: int) -> int:
        """The first action id of a kind, -1 if the variant has none."""
        return int(self.variant.spec[V.A_FIRST + kind])

    def observation_slices(self) -> dict[str, slice]:
        """The observation's fields present in this variant: name -> slice of the flat observation."""
        return {name: field for name, (field, _) in observation_fields(self.variant).items()}


class Table(NamedTuple):
    """A position as named ``int32`` arrays (one game; under ``vmap`` each gets a leading batch axis).

    Lists are bottom first with their length beside them, as in the engine; counts are 0-d arrays.
    """

    tab: jnp.ndarray  # (piles, cap) cards
    len: jnp.ndarray  # (piles,) cards in each pile
    down: jnp.ndarray  # (piles,) of them face down (always the bottom ones)
    fsuit: jnp.ndarray  # (foundations,) suit of each slot, -1 while empty
    fcnt: jnp.ndarray  # (foundations,) cards on each slot
    stock: jnp.ndarray  # (stock_cap,) its last card is dealt first
    nstock: jnp.ndarray
    waste: jnp.ndarray  # (stock_cap,)
    nwaste: jnp.ndarray
    res: jnp.ndarray  # (res_cap,)
    nres: jnp.ndarray
    resdown: jnp.ndarray
    redeals: jnp.ndarray  # redeals left
    base: jnp.ndarray  # base rank


_SCALARS = ("nstock", "nwaste", "nres", "resdown", "redeals", "base")


def unpack(layout: Layout, board: jnp.ndarray) -> Table:
    """The flat ``int8`` state as a :class:`Table` of ``int32`` arrays (sums of int8 would overflow)."""
    s = board.astype(jnp.int32)
    sizes = layout.sizes()
    parts = {}
    for name, start in layout.offsets.items():
        part = s[start : start + sizes[name]]
        parts[name] = part[0] if name in _SCALARS else part
    parts["tab"] = parts["tab"].reshape(layout.piles, layout.cap)
    return Table(**parts)


def pack(layout: Layout, t: Table) -> jnp.ndarray:
    """The :class:`Table` back into the flat ``int8`` state: its fields lie end to end in offset order
    (:meth:`Layout.of` checks), so one concatenation (a chain of slice updates cost a step twice as much)."""
    return jnp.concatenate([jnp.reshape(getattr(t, name), (-1,)) for name in layout.offsets]).astype(jnp.int8)


@dataclass(frozen=True)
class DealPlan:
    """Where a shuffled deck's cards go, computed once on the host: card ``deck[first + i]`` goes to
    state entry ``slots[i]``; ``template`` holds the counts of a fresh deal. The same order as the
    engine's ``state._lay_out`` (foundation card, reserve, tableau row by row, then the stock)."""

    template: np.ndarray
    slots: np.ndarray
    first: int  # 1 where deck[0] goes to the first foundation and fixes the base rank


def deal_plan(layout: Layout) -> DealPlan:
    v, o = layout.variant, layout.offsets
    template = np.zeros(layout.state_size, dtype=np.int8)
    template[o["fsuit"] : o["fsuit"] + layout.foundations] = -1
    first = int(v.base_from_deal)
    slots = [o["res"] + k for k in range(v.reserve)]
    template[o["nres"]], template[o["resdown"]] = v.reserve, max(v.reserve - 1, 0)
    rows = v.deal_down + v.deal_up
    slots += [o["tab"] + p * layout.cap + row for row in range(rows) for p in range(layout.piles)]
    template[o["len"] : o["len"] + layout.piles] = rows
    template[o["down"] : o["down"] + layout.piles] = v.deal_down
    in_stock = layout.n_cards - first - len(slots)
    slots += [o["stock"] + k for k in range(in_stock)]
    template[o["nstock"]], template[o["redeals"]] = in_stock, v.redeals
    return DealPlan(template=template, slots=np.array(slots, dtype=np.int32), first=first)


def lay_out(layout: Layout, plan: DealPlan, deck: jnp.ndarray) -> jnp.ndarray:
    """The flat state of a fresh deal of ``deck`` (a permutation of the variant's cards, 0..51 each)."""
    deck = deck.astype(jnp.int32)
    board = jnp.asarray(plan.template, dtype=jnp.int32).at[plan.slots].set(deck[plan.first :])
    if plan.first:
        o = layout.offsets
        board = board.at[o["fsuit"]].set(deck[0] // 13).at[o["fcnt"]].set(1).at[o["base"]].set(deck[0] % 13)
    return board.astype(jnp.int8)
