"""Microsoft FreeCell deal numbers: the layouts players and solvers publish for deals 1 and 617."""

from __future__ import annotations

import numpy as np
import pytest

from solitaire_env.engine.cards import card_from_str
from solitaire_env.engine.ms_deals import DEAL_LIMIT, microsoft_columns, microsoft_order

# As FreeCell shows them: the rows of the layout, top row (the cards under all others) first.
PUBLISHED = {
    1: "JD 2D 9H JC 5D 7H 7C 5H / KD KC 9S 5S AD QC KH 3H / 2S KS 9D QD JS AS AH 3C / "
       "4C 5C TS QH 4H AC 4D 7S / 3S TD 4S TH 8H 2C JH 7D / 6D 8S 8D QS 6C 3D 8C TC / 6S 9C 2H 6H",
    617: "7D AD 5C 3S 5S 8C 2D AH / TD 7S QD AC 6D 8H AS KH / TH QC 3H 9D 6S 8D 3D TC / "
         "KD 5H 9S 3C 8S 7H 4D JS / 4C QS 9C 9H 7C 6H 2C 2S / 4S TS 2H 5D JC 6C JH QH / JD KS KC 4H",
}


def _rows(text):
    return [[card_from_str(c[0] + c[1].lower()) for c in row.split()] for row in text.split(" / ")]


@pytest.mark.parametrize("number", sorted(PUBLISHED))
def test_published_layouts(number):
    rows = _rows(PUBLISHED[number])
    columns = microsoft_columns(number)
    assert [len(c) for c in columns] == [7, 7, 7, 7, 6, 6, 6, 6]
    for r, row in enumerate(rows):
        assert [columns[c][r] for c in range(len(row))] == row, f"deal {number} row {r}"


@pytest.mark.parametrize("number", [0, 2, 11982, 32000, DEAL_LIMIT - 1, np.int64(5)])
def test_every_deal_is_one_deck(number):
    assert sorted(microsoft_order(number)) == list(range(52))


def test_deal_numbers_name_different_deals():
    assert len({tuple(microsoft_order(n)) for n in range(200)}) == 200


@pytest.mark.parametrize("number", [-1, DEAL_LIMIT, 1.0, True, "1", None])
def test_bad_deal_numbers_are_refused(number):
    with pytest.raises(ValueError, match="Microsoft FreeCell deal number"):
        microsoft_order(number)
