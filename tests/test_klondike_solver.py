"""The solver and Klondike."""

import pytest

from solitaire_env.engine.games import KLONDIKE, klondike_variant
from solitaire_env.engine.state import deal
from solitaire_env.solver import Solver, solve


@pytest.mark.parametrize("game", ["klondike", "klondike_draw3", "klondike_draw3_redeals2", klondike_variant(1, 0)])
def test_the_solver_refuses_klondike_until_its_shortcuts_are_proved_for_it(game):
    with pytest.raises(ValueError, match=r"the solver does not play Klondike.* yet"):
        solve(game, seed=1)
    with pytest.raises(ValueError, match=r"the solver does not play Klondike.* yet"):
        Solver(KLONDIKE, deal(KLONDIKE, 1))


def test_the_solve_command_refuses_klondike(capsys):
    from solitaire_env.tools.cli import main

    with pytest.raises(SystemExit):
        main(["solve", "klondike", "--seeds", "0:1", "--no-progress"])
    assert "the solver does not play Klondike" in capsys.readouterr().err
