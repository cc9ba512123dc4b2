"""Deal sets: which deals an env plays, and the fixed train / validation / test splits.

A deal is a number: deal ``s`` is ``Game(variant, seed=s)``, the same on every machine. The splits
never overlap, so a figure reported on test deals was never trained on nor used to pick a checkpoint:

| split          | deals               | used for                                                     |
|----------------|---------------------|--------------------------------------------------------------|
| ``test``       | 0 .. 9,999          | reported figures (docs/baselines.md: deals 0-999)            |
| ``validation`` | 10,000 .. 19,999    | checkpoint and hyperparameter choice (evaluation rounds: 10,000 ..) |
| ``train``      | 20,000 .. 2**62 - 1 | training: each episode draws a deal at random                |

FreeCell numbers its deals as Microsoft FreeCell does, 0 .. 2**31 - 1 (``Variant.deal_limit``), so its
test deals are Microsoft deals 0-9,999 and its train split ends at 2**31 - 1; the functions below take
the variant's limit (``limit``) for that.

An env given ``deals=`` plays only that set (see :func:`deal_set` for what it takes). The
``train`` set is *sampled*: every reset draws a deal uniformly from it with the env's generator.
Every other set is *ordered*: ``reset(seed=k)`` plays its ``k``-th deal (counting from 0, modulo
its size) and each later ``reset()`` the next one, so ``gym.make(id, deals="test")`` plays deals 0,
1, 2, ... With no ``deals`` argument an env keeps its old behaviour: ``reset(seed=s)`` deals deal
``s`` and ``reset()`` a random deal from the whole 62-bit range, which includes every split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TEST = range(0, 10_000)
VALIDATION = range(10_000, 20_000)
TRAIN = range(20_000, 2**62)
SPLITS: dict[str, range] = {"train": TRAIN, "validation": VALIDATION, "test": TEST}
DEAL_LIMIT = 2**62  # deal numbers are 0 .. 2**62 - 1 (what a seedless reset draws from)


@dataclass(frozen=True)
class DealSet:
    """A set of deal numbers and how an env walks through it."""

    name: str  # "train", "validation", "test", or a description such as "deals 5-9"
    deals: range | tuple[int, ...]
    sampled: bool  # True: each reset draws a deal at random; False: the deals in order

    def __len__(self) -> int:
        return len(self.deals)

    def at(self, position: int) -> int:
        """The deal at ``position`` of an ordered set (wrapping around at its end)."""
        return int(self.deals[position % len(self.deals)])

    def draw(self, rng: np.random.Generator) -> int:
        """A deal drawn uniformly from the set."""
        return int(self.deals[int(rng.integers(len(self.deals)))])


def deal_set(spec: Any, limit: int = DEAL_LIMIT) -> DealSet | None:
    """The :class:`DealSet` an env's ``deals`` argument names; ``ValueError`` naming the problem.

    ``None`` (no set: the env's default behaviour), ``"train"``, ``"validation"``, ``"test"``,
    ``"A:B"`` (deals A .. B-1, in order), a ``range`` with step 1, or a non-empty list / tuple of
    deal numbers (played in the order given), or a :class:`DealSet`. ``limit``: the game's deal numbers
    are 0 .. ``limit`` - 1 (``Variant.deal_limit``).
    """
    if spec is None or isinstance(spec, DealSet):
        return spec
    if isinstance(spec, str):
        if spec in SPLITS:
            deals = SPLITS[spec]
            return DealSet(spec, range(deals.start, min(deals.stop, limit)), sampled=spec == "train")
        start, sep, stop = spec.partition(":")
        try:
            if not sep:
                raise ValueError
            spec = range(int(start), int(stop))
        except ValueError:
            raise ValueError(f"deals must be 'train', 'validation', 'test', 'A:B', a range or a list of deal "
                             f"numbers, got {spec!r}") from None
    if isinstance(spec, range):
        if spec.step != 1 or len(spec) == 0 or spec.start < 0 or spec.stop > limit:
            raise ValueError(f"deals {spec} must be a non-empty range of deal numbers 0 .. {limit - 1} with step 1")
        return DealSet(describe(spec.start, spec.stop - 1), spec, sampled=False)
    if isinstance(spec, (Sequence, np.ndarray)) and not isinstance(spec, (str, bytes)):
        values = list(spec)
        if not values:
            raise ValueError("deals is an empty list: name at least one deal")
        for value in values:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
                    or not 0 <= value < limit:
                raise ValueError(f"deals holds {value!r}: a deal number is an integer 0 .. {limit - 1}")
        return DealSet(f"{len(values)} listed deals", tuple(int(v) for v in values), sampled=False)
    raise ValueError(f"deals must be 'train', 'validation', 'test', 'A:B', a range or a list of deal numbers, "
                     f"got {type(spec).__name__} {spec!r}")


class DealSchedule:
    """The deals one env plays, reset after reset: the single env's (``first=0, stride=1``), or sub-env
    ``first`` of a batched env of ``stride`` sub-envs, which together play each deal of an ordered set
    once (positions ``first, first + stride, ...``). ``deals``: the env's set, or ``None``; ``limit``: the
    game's deal numbers are 0 .. ``limit`` - 1."""

    def __init__(self, deals: DealSet | None, first: int = 0, stride: int = 1, limit: int = DEAL_LIMIT) -> None:
        self.deals, self.first, self.stride, self.limit = deals, first, stride, limit
        self.position: int | None = None  # in an ordered set: the position of the deal played last

    def next(self, seed: int | None, rng: np.random.Generator) -> int:
        """The deal number of a reset given ``seed`` (or ``None``), drawing from ``rng`` where a deal is random.

        No set: deal ``seed``, or one drawn from all ``limit``. A sampled set: one drawn from it.
        An ordered set: the deal at position ``seed``, else the next position of this env's.
        """
        deals = self.deals
        if deals is None:
            # Deal number `seed` when a seed is given, so env deals match Game(variant, seed) everywhere.
            return int(seed) if seed is not None else int(rng.integers(self.limit))
        if deals.sampled:
            return deals.draw(rng)
        if seed is not None:
            self.position = int(seed)
        else:
            self.position = self.first if self.position is None else self.position + self.stride
        return deals.at(self.position)


def split_of(first: int, last: int) -> str | None:
    """The split holding every deal of ``first .. last``, or ``None`` if they are not in one split."""
    first, last = int(first), int(last)  # `in range` is a linear scan for anything but a Python int
    for name, deals in SPLITS.items():
        if first in deals and last in deals:
            return name
    return None


def describe(first: int, last: int) -> str:
    """``"test deals 0-999"``: deals ``first .. last`` named with their split (if one holds them all)."""
    split = split_of(first, last)
    span = f"{first}-{last}" if last != first else f"{first}"
    return f"{split} deals {span}" if split else f"deals {span} (in no single split)"


__all__ = ["DEAL_LIMIT", "SPLITS", "TEST", "TRAIN", "VALIDATION", "DealSchedule", "DealSet", "deal_set", "describe",
           "split_of"]
