"""The terminal game: scripted sessions through io.StringIO, the move notation, start-up errors."""

from __future__ import annotations

import io
import json
import random
import sys

import numpy as np
import pytest

from solitaire_env import Game
from solitaire_env.engine.notation import notation, parse_move
from solitaire_env.tools.play import play, resolve_variant

VARIANTS = ["rank_and_file", "number_ten", "rainbow"]


def run(lines: list[str], variant: str | None = "rank_and_file", seed: int | None = 0, **kwargs) -> tuple[int, str]:
    out = io.StringIO()
    stdin = io.StringIO("".join(line + "\n" for line in lines))
    rc = play(variant, seed=seed, stdin=stdin, stdout=out, **kwargs)
    return rc, out.getvalue()


def saved(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def expected(variant: str, seed: int, moves: list[str]) -> dict:
    game = Game(variant, seed=seed)
    for text in moves:
        game.play(parse_move(text, game))
    return game.get_state()


def test_moves_by_number_and_notation_then_save(tmp_path):
    # Deal 0 of Rank and File: 1) d  2) t2 t1  3) t5 t3 ... (see the listing the session prints).
    game = Game("rank_and_file", seed=0)
    second = game.legal_moves()[1]
    path = tmp_path / "pos.json"
    rc, out = run(["2", "t5 t3", f"save {path}", "quit"])
    assert rc == 0
    assert "Traceback" not in out
    after_second = Game("rank_and_file", seed=0)
    after_second.play(second)
    after_second.play(parse_move("t5 t3", after_second))
    assert saved(path) == after_second.get_state()
    assert "saved the position" in out and "bye" in out


def test_undo_any_number_of_times_and_bad_commands(tmp_path):
    path = tmp_path / "pos.json"
    rc, out = run(["d", "d", "t5 t3", "undo", "undo", "flibble", "t9 t0", "99", "undo", "undo",
                   f"save {path}", "quit"])
    assert rc == 0 and "Traceback" not in out
    assert saved(path) == Game("rank_and_file", seed=0).get_state()
    assert "I don't understand 'flibble'" in out
    assert "not a legal move here: t9 t0" in out
    assert "there is no move 99" in out
    assert "nothing to undo" in out


def test_undo_back_to_a_middle_position(tmp_path):
    path = tmp_path / "pos.json"
    rc, _ = run(["d", "d", "d", "undo", f"save {path}"], variant="rainbow", seed=3)
    assert rc == 0
    assert saved(path) == expected("rainbow", 3, ["d", "d"])


def test_end_of_input_is_quit():
    rc, out = run(["d"])
    assert rc == 0
    assert "end of input" in out
    rc, out = run([])
    assert rc == 0 and "end of input" in out


@pytest.mark.parametrize("line", ["", "   ", "t", "t3", "t3 t", "w", "e f", "t-1 t2", "t3 e 0", "r", "save",
                                  "12345678901234567890", "t99 f", "w t99", "rd", "r t1", "t0 t0", "💥"])
def test_nonsense_never_raises(line):
    rc, out = run([line, "quit"])
    assert rc == 0 and "Traceback" not in out
    assert out.count("legal moves:") == 1  # nothing was played


def test_save_to_a_bad_path_is_reported(tmp_path):
    rc, out = run([f"save {tmp_path}/no/such/dir/x.json", "quit"])
    assert rc == 0 and "could not save" in out


def test_state_file_round_trip(tmp_path):
    path = tmp_path / "pos.json"
    run(["d", "d", f"save {path}", "quit"], variant="rainbow", seed=5)
    later = tmp_path / "later.json"
    rc, out = run(["d", f"save {later}", "quit"], variant=None, seed=None, state_file=str(path))
    assert rc == 0 and "from the position in" in out
    assert saved(later) == expected("rainbow", 5, ["d", "d", "d"])


def test_state_file_errors(tmp_path):
    rc, out = run([], seed=None, state_file=str(tmp_path / "missing.json"))
    assert rc == 2 and "does not exist" in out and "Traceback" not in out
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    rc, out = run([], seed=None, state_file=str(bad))
    assert rc == 2 and "not valid JSON" in out
    state = Game("rainbow", seed=1).get_state()
    state["stock"] = state["stock"][1:]  # a card missing
    bad.write_text(json.dumps(state))
    rc, out = run([], seed=None, state_file=str(bad))
    assert rc == 2 and "not a valid position" in out
    good = tmp_path / "good.json"
    good.write_text(json.dumps(Game("rainbow", seed=1).get_state()))
    rc, out = run([], variant="rank_and_file", seed=None, state_file=str(good))
    assert rc == 2 and "Rainbow position" in out


def test_bad_variant_and_seed():
    rc, out = run([], variant="spider")
    assert rc == 2 and "unknown game" in out
    rc, out = run([], seed=-4)
    assert rc == 2 and "error:" in out and "Traceback" not in out


def test_variant_spellings():
    assert resolve_variant("RankAndFile-v0").name == "rank_and_file"
    assert resolve_variant("number-ten").name == "number_ten"
    assert resolve_variant("Rainbow").name == "rainbow"
    with pytest.raises(ValueError):
        resolve_variant("spider")


def test_colour_only_when_asked():
    _, plain = run(["quit"], seed=0)
    _, coloured = run(["quit"], seed=0, color=True)
    assert "\x1b[" not in plain
    assert "\x1b[31m" in coloured


def test_help_lists_the_notation():
    _, out = run(["help", "quit"])
    for token in ("t3 t7", "t3 f", "t3 e 2", "w e", "r t1", "undo", "hint", "save FILE", "numbered from 0"):
        assert token in out


def test_hint_suggests_a_legal_move_or_says_none():
    _, out = run(["hint", "quit"], variant="rainbow", seed=2)
    lines = [line for line in out.splitlines() if line.startswith("> hint") or "hint" in line and "available" in line]
    assert lines, out
    if "no hint available" not in lines[0]:
        game = Game("rainbow", seed=2)
        listed = lines[0].split("hint: ", 1)[1]
        number = int(listed.split(")", 1)[0])
        assert 1 <= number <= len(game.legal_moves())


def test_hint_degrades_without_agents(monkeypatch):
    monkeypatch.setitem(sys.modules, "solitaire_env.agents", None)  # importing the agents now raises ImportError
    monkeypatch.setitem(sys.modules, "solitaire_env.agents.heuristic", None)
    rc, out = run(["hint", "d", "quit"])
    assert rc == 0 and "no hint available" in out and "Traceback" not in out
    assert "played d" in out


def _near_won_rainbow() -> dict:
    """All 52 cards but one on the foundations; the last, 6s, alone on pile 0."""
    ranks, suits = "A23456789TJQK", "cdhs"
    base = ranks.index("7")
    foundations = [[ranks[(base + k) % 13] + s for k in range(13)] for s in suits]
    last = foundations[3].pop()
    return {"format": 1, "variant": "rainbow", "tableau": [[last], [], [], []], "foundations": foundations,
            "stock": [], "waste": [], "reserve": [], "redeals_left": 0, "base_rank": "7"}


def test_win_is_announced_with_the_score(tmp_path):
    path = tmp_path / "near.json"
    path.write_text(json.dumps(_near_won_rainbow()))
    rc, out = run(["t0 f", "d", "undo", "quit"], variant=None, seed=None, state_file=str(path))
    assert rc == 0
    assert "You won! All 52/52 cards" in out
    assert "the game is over" in out or "cannot draw" in out
    assert "took back one move" in out


def test_loss_is_announced_with_the_score(tmp_path):
    # Random Rainbow play runs out of moves; start one move before the end and play that move.
    rng = random.Random(0)
    for seed in range(50):
        game = Game("rainbow", seed=seed)
        before, last = None, None
        while not game.is_over():
            before, last = game.get_state(), rng.choice(game.legal_moves())
            game.play(last)
        if game.is_lost():
            break
    else:  # pragma: no cover
        pytest.fail("no lost random Rainbow game found")
    path = tmp_path / "before.json"
    path.write_text(json.dumps(before))
    rc, out = run([notation(last, Game.from_state(before)), "quit"], variant=None, seed=None, state_file=str(path))
    assert rc == 0
    assert f"the game is lost. Score: {game.foundation_cards}/52" in out


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_listed_notation_names_its_move(variant):
    """For every legal move in many positions, the listed notation parses back to exactly that move."""
    rng = np.random.default_rng(1)
    checked = 0
    for seed in range(4):
        game = Game(variant, seed=seed)
        for _ in range(250):
            moves = game.legal_moves()
            if not moves:
                break
            state = game.get_state()
            for m in moves:
                assert parse_move(notation(m, game, state), game) == m
                checked += 1
            game.play(moves[rng.integers(len(moves))])
    assert checked > 500


def test_empty_pile_as_a_numbered_target_means_e():
    """With two empty piles, a move 'to' the higher one goes to the lowest empty pile, like 'e'."""
    rng = np.random.default_rng(0)
    for seed in range(40):
        game = Game("rank_and_file", seed=seed)
        for _ in range(600):
            state = game.get_state()
            empty = [p for p, pile in enumerate(state["tableau"]) if not pile]
            to_empty = [m for m in game.legal_moves() if m.source == m.target == "tableau" and m.target_index in empty]
            if len(empty) >= 2 and to_empty:
                m = to_empty[0]
                text = f"t{m.source_index} t{empty[-1]} {m.count}"
                assert parse_move(text, game) == m == parse_move(f"t{m.source_index} e {m.count}", game)
                assert m.target_index == empty[0]
                return
            moves = game.legal_moves()
            if not moves:
                break
            game.play(moves[rng.integers(len(moves))])
    pytest.skip("no position with two empty piles found")  # pragma: no cover


def test_hint_asks_the_agent_with_the_observation_of_the_current_position(monkeypatch):
    import types

    import gymnasium as gym

    seen = {}

    class Stub:
        name = "stub"

        def reset(self, seed=None):
            seen["reset"] = seed

        def act(self, observation, info):
            seen["obs"], seen["mask"] = observation, info["action_mask"]
            return int(np.flatnonzero(info["action_mask"])[-1])  # the last legal action

    def make_agent(name, env_id, seed=None):
        seen["made"] = (name, env_id)
        return Stub()

    monkeypatch.setitem(sys.modules, "solitaire_env.agents", types.SimpleNamespace(make_agent=make_agent))
    rc, out = run(["d", "hint", "quit"], variant="number_ten", seed=3)
    assert rc == 0 and seen["made"] == ("heuristic", "NumberTen-v0")
    game = Game("number_ten", seed=3)
    game.play(parse_move("d", game))
    env = gym.make("NumberTen-v0").unwrapped
    obs, info = env.set_state(game.get_state())
    assert np.array_equal(seen["obs"], obs) and np.array_equal(seen["mask"], info["action_mask"])
    moves = game.legal_moves()
    last = game.decode(int(np.flatnonzero(info["action_mask"])[-1]))
    assert f"hint: {moves.index(last) + 1}) {notation(last, game)}" in out


def test_rainbow_tableau_never_goes_into_an_empty_pile():
    state = {"format": 1, "variant": "rainbow", "tableau": [["Kh"], [], [], []], "foundations": [[], [], [], []],
             "stock": [], "waste": [], "reserve": [], "redeals_left": 0, "base_rank": "7"}
    ranks, suits = "A23456789TJQK", "cdhs"
    cards = [r + s for s in suits for r in ranks if r + s != "Kh"]
    state["foundations"][0] = ["7c", "8c", "9c", "Tc", "Jc", "Qc", "Kc", "Ac", "2c", "3c", "4c", "5c", "6c"]
    state["foundations"][1] = ["7d", "8d", "9d", "Td"]
    rest = [c for c in cards if c[1] != "c" and c not in state["foundations"][1]]
    state["stock"], state["waste"] = rest[:20], rest[20:]
    game = Game.from_state(state)
    with pytest.raises(ValueError, match="only the waste"):
        parse_move("t0 e", game)
    assert parse_move("w e", game).target_index == 1


@pytest.mark.parametrize("variant", ["freecell", "freecell_2cells"])
def test_freecell_plays_with_hints_at_any_cell_count(variant):
    """The heuristic's hint is a legal move of the game played, whose cells are the ones shown."""
    rc, out = run(["hint", "quit"], variant=variant, seed=1)
    game = Game(resolve_variant(variant), seed=1)
    assert rc == 0 and f"cells: {' '.join(['--'] * game.variant.cells)}\n" in out
    hint = next(line for line in out.splitlines() if line.startswith("> hint"))
    assert "no hint available" not in hint
    assert 1 <= int(hint.split("hint: ", 1)[1].split(")", 1)[0]) <= len(game.legal_moves())
